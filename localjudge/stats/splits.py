"""A seeded split of items into a part to fit on and a part held back, whole groups kept together."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from localjudge.errors import ConfigError


class Split(NamedTuple):
    """Item indices, sorted, of the part fitted on and the part held back."""

    fit: np.ndarray
    held: np.ndarray


def split_items(n: int, groups: np.ndarray | None, share: float, seed: int) -> Split:
    """A `share` of the `n` items (of the groups, when `groups` gives each item's) to fit on, the rest held.

    Examples:
        >>> split_items(6, np.array(list("aabbcc")), 0.5, 0).fit.tolist()
        [0, 1, 4, 5]

    Raises:
        ConfigError: `share` is not strictly between 0 and 1 (`--split`).
    """
    if not 0 < share < 1:
        raise ConfigError(f"--split must be strictly between 0 and 1, got {share}")
    rng = np.random.default_rng(seed)
    if groups is None:
        order = rng.permutation(n)
        cut = round(share * n)
        return Split(np.sort(order[:cut]), np.sort(order[cut:]))
    names = rng.permutation(np.unique(groups))
    fit = np.isin(groups, names[: round(share * len(names))])
    return Split(np.flatnonzero(fit), np.flatnonzero(~fit))
