"""The grouped split: whole groups (documents, inputs) go to training or to validation, never both."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from localjudge.errors import DataError

MIN_CASES = 8
"""Fewest labelled cases a tune accepts."""


class Split(NamedTuple):
    """Case indices on each side."""

    train: list[int]
    validation: list[int]
    train_groups: int
    validation_groups: int


def grouped_split(groups: Sequence[str], share: float, seed: int) -> Split:
    """Holds out about `share` of the groups (at least one), chosen by `seed`; the rest train.

    Raises:
        DataError: too few cases, or too few groups for both sides.

    Examples:
        >>> s = grouped_split(["a", "a", "b", "b", "c", "c", "d", "d"], 0.25, seed=0)
        >>> len(s.validation), s.validation_groups
        (2, 1)
    """
    if len(groups) < MIN_CASES:
        raise DataError(f"{len(groups)} labelled cases; a tune needs at least {MIN_CASES}")
    names = sorted(set(groups))
    if len(names) < 2:
        raise DataError(
            f"all {len(groups)} cases are in one group; a tune holds out whole groups (documents, inputs) for "
            "validation: give cases of at least two groups (--group FIELD names the field)"
        )
    order = np.random.default_rng(seed).permutation(len(names))
    n_val = min(len(names) - 1, max(1, round(share * len(names))))
    held = {names[i] for i in order[:n_val]}
    train = [i for i, g in enumerate(groups) if g not in held]
    validation = [i for i, g in enumerate(groups) if g in held]
    return Split(train, validation, len(names) - n_val, n_val)
