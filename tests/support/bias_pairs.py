"""Every pair of generators of one item, each in a random A/B orientation: the bias tests' synthetic layout."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

Named = tuple[str, str]  # (generator, family)


def shuffled_pairs(rng: np.random.Generator, generators: Sequence[Named]) -> Iterator[tuple[Named, Named]]:
    """(A, B) for each unordered pair of `generators`, swapped with probability ½ (one `rng.random()` per pair)."""
    for x in range(len(generators)):
        for y in range(x + 1, len(generators)):
            a, b = generators[x], generators[y]
            yield (b, a) if rng.random() < 0.5 else (a, b)
