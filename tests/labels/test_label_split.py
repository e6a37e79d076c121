"""The one grouped split reproduces the three it replaced: `stats.split_items`, tune's and panel-weights' own.

Expected indices were computed by the code before the move (`localjudge.stats.splits.split_items`,
`localjudge.tune.split.grouped_split` and the inline split of `cli/panel_fit.py` at 15ccff4) on these groups.
"""

from __future__ import annotations

import numpy as np
import pytest

from localjudge.errors import ConfigError, DataError
from localjudge.labels import grouped_split

G1 = list("aabbccddeeffgghh")
G2 = [f"doc{i % 7}" for i in range(30)]
G3 = ["q10", "q2", "q10", "q3", "q2", "q1", "q3", "q1", "q10", "q2", "q7", "q7"]  # "q10" sorts before "q2"
GROUPS = {"G1": G1, "G2": G2, "G3": G3}


@pytest.mark.parametrize(
    ("name", "share", "seed", "first"),
    [
        ("G1", 0.5, 0, [4, 5, 6, 7, 8, 9, 12, 13]),
        ("G1", 0.3, 3, [12, 13, 14, 15]),
        ("G1", 0.25, 7, [0, 1, 12, 13]),
        ("G2", 0.5, 0, [2, 3, 4, 6, 9, 10, 11, 13, 16, 17, 18, 20, 23, 24, 25, 27]),
        ("G2", 0.3, 3, [5, 6, 12, 13, 19, 20, 26, 27]),
        ("G2", 0.25, 7, [0, 5, 7, 12, 14, 19, 21, 26, 28]),
        ("G3", 0.5, 0, [1, 4, 9, 10, 11]),
        ("G3", 0.3, 3, [1, 4, 9, 10, 11]),
        ("G3", 0.25, 7, [1, 4, 9]),
    ],
)
def test_it_is_the_former_fit_split_of_calibrate(name, share, seed, first):
    groups = GROUPS[name]
    split = grouped_split(np.array(groups), share, seed)
    assert split.first.tolist() == first
    assert split.rest.tolist() == sorted(set(range(len(groups))) - set(first))
    assert not {groups[i] for i in split.first} & {groups[i] for i in split.rest}


@pytest.mark.parametrize(
    ("name", "share", "seed", "validation", "train_groups", "validation_groups"),
    [
        ("G1", 0.2, 0, [4, 5, 8, 9], 6, 2),
        ("G1", 0.34, 1, [0, 1, 2, 3, 10, 11], 5, 3),
        ("G1", 0.9, 2, [0, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], 1, 7),  # one group left to train
        ("G2", 0.2, 0, [2, 9, 16, 23], 6, 1),
        ("G2", 0.34, 1, [0, 5, 7, 12, 14, 19, 21, 26, 28], 5, 2),
        ("G2", 0.9, 2, sorted(set(range(30)) - {1, 8, 15, 22, 29}), 1, 6),
        ("G3", 0.2, 0, [1, 4, 9], 4, 1),
        ("G3", 0.34, 1, [5, 7, 10, 11], 3, 2),
        ("G3", 0.9, 2, [1, 3, 4, 5, 6, 7, 9, 10, 11], 1, 4),
    ],
)
def test_it_is_the_former_validation_split_of_tune(name, share, seed, validation, train_groups, validation_groups):
    from localjudge.tune.options import TuneOptions
    from localjudge.tune.split import validation_split

    groups = GROUPS[name]
    split = grouped_split(groups, share, seed, both_sides=True)
    assert split.first.tolist() == validation
    tune = validation_split(groups, TuneOptions(validation_share=share, seed=seed))
    assert (tune.validation, tune.train) == (validation, split.rest.tolist())
    assert (tune.train_groups, tune.validation_groups) == (train_groups, validation_groups)


def test_without_groups_items_are_permuted_as_before():
    assert grouped_split(None, 0.5, 4, n=10).first.tolist() == [0, 1, 2, 7, 9]
    assert grouped_split(None, 0.3, 1, n=7).first.tolist() == [0, 5]


def test_integer_groups_sort_as_numbers_as_before():
    ints = np.repeat(np.arange(12), 3)
    assert grouped_split(ints, 0.5, 3).first.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8, 21, 22, 23, 30, 31, 32, 33, 34, 35]


def test_each_case_its_own_group_is_the_panel_weights_former_split():
    ids = [f"c{i}" for i in range(9)]
    assert grouped_split(ids, 0.3, 5, both_sides=True).first.tolist() == [1, 2, 4]


def test_both_sides_keeps_a_group_on_each_side_and_refuses_one_group():
    assert len(grouped_split(list("aabb"), 0.01, 0, both_sides=True).first) == 2
    assert len(grouped_split(list("aabb"), 0.01, 0).first) == 0
    assert len(grouped_split(list("aabb"), 0.99, 0, both_sides=True).rest) == 2
    with pytest.raises(DataError, match="one group"):
        grouped_split(["a"] * 8, 0.5, 0, both_sides=True)


@pytest.mark.parametrize("share", [0.0, 1.0, 1.5])
def test_a_share_outside_0_1_is_refused(share):
    with pytest.raises(ConfigError, match="--split"):
        grouped_split(None, share, 0, n=10)


def test_a_tune_needs_enough_cases():
    from localjudge.tune.options import TuneOptions
    from localjudge.tune.split import MIN_CASES, validation_split

    with pytest.raises(DataError, match=f"at least {MIN_CASES}"):
        validation_split(list("aabbccd"), TuneOptions())
