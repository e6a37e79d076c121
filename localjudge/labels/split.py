"""One seeded split of items into a first part and the rest, whole groups kept on one side.

Every feature draws its split here: `tune` holds out the first part for validation, `calibrate`'s
fits (isotonic, hybrid, verdict) and the panel-weights fit fit on the first part and report on the
rest. The groups are sorted, permuted by the seed, and the first `round(share * groups)` of them
form the first part; without groups each item is its own group in its place (items are permuted).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from localjudge.errors import ConfigError, DataError


class Split(NamedTuple):
    """Item indices, sorted, of the first part (`share` of the groups) and of the rest."""

    first: np.ndarray
    rest: np.ndarray


def grouped_split(
    groups: Sequence[str] | np.ndarray | None,
    share: float,
    seed: int,
    n: int | None = None,
    *,
    both_sides: bool = False,
) -> Split:
    """The items of a seeded `share` of the groups, and the rest.

    Args:
        groups: (n,) each item's group; None: each item is its own (then `n` gives their number).
        share: the share of the groups in the first part, strictly between 0 and 1.
        seed: the seed of the permutation of the groups.
        n: the number of items when `groups` is None.
        both_sides: keep at least one group on each side (clamps the count to 1..groups-1).

    Raises:
        ConfigError: `share` is not strictly between 0 and 1.
        DataError: `both_sides` and fewer than two groups.

    Examples:
        >>> grouped_split(["a", "a", "b", "b", "c", "c"], 0.5, seed=0).first.tolist()
        [0, 1, 4, 5]
        >>> grouped_split(None, 0.5, seed=0, n=4).rest.tolist()
        [1, 3]
    """
    if not 0 < share < 1:
        raise ConfigError(f"--split must be strictly between 0 and 1, got {share}")
    rng = np.random.default_rng(seed)
    if groups is None:
        assert n is not None, "a split without groups needs the number of items"
        order = rng.permutation(n)
        cut = _cut(share, n, both_sides)
        return Split(np.sort(order[:cut]), np.sort(order[cut:]))
    labels = np.asarray(groups)  # (n,) str (or int) group ids
    names = np.unique(labels)  # sorted
    if both_sides and len(names) < 2:
        raise DataError(
            f"all {len(labels)} cases are in one group; the split holds out whole groups (documents, inputs): give "
            "cases of at least two groups (--group FIELD names the field)"
        )
    first = np.isin(labels, names[rng.permutation(len(names))][: _cut(share, len(names), both_sides)])
    return Split(np.flatnonzero(first), np.flatnonzero(~first))


def _cut(share: float, units: int, both_sides: bool) -> int:
    """How many of `units` groups the first part takes."""
    cut = round(share * units)
    return min(units - 1, max(1, cut)) if both_sides else cut
