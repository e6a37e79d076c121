"""A tune's validation split: `localjudge.labels.grouped_split` with a tune's own limits.

Whole groups (documents, inputs) go to training or to validation, never both; at least one group
on each side, and at least `MIN_CASES` labelled cases in all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from localjudge.errors import DataError
from localjudge.labels import grouped_split
from localjudge.tune.options import TuneOptions

MIN_CASES = 8
"""Fewest labelled cases a tune accepts."""


@dataclass(frozen=True)
class TuneSplit:
    """The cases a tune trains on and the cases it validates on, whole groups on one side."""

    train: list[int]
    validation: list[int]
    train_groups: int
    validation_groups: int


def validation_split(groups: Sequence[str], settings: TuneOptions) -> TuneSplit:
    """Holds out `settings.validation_share` of the groups (at least one, and one left to train), by its seed.

    Raises:
        DataError: too few cases, or too few groups for both sides.
    """
    if len(groups) < MIN_CASES:
        raise DataError(f"{len(groups)} labelled cases; a tune needs at least {MIN_CASES}")
    held = grouped_split(groups, settings.validation_share, settings.seed, both_sides=True)
    n_held = len({groups[i] for i in held.first})
    n_groups = len(set(groups))
    return TuneSplit(held.rest.tolist(), held.first.tolist(), n_groups - n_held, n_held)
