"""The score-token trie on hand-built vocabularies: which token paths spell which outcome.

Paths are written as tuples of token ids; every test states the complete expected set, so a path
too many (a leading zero, a double space, a split "10" read as "1") fails as surely as one missing.
"""

from __future__ import annotations

import numpy as np
import pytest

from localjudge.errors import ConfigError
from localjudge.scoring.trie import (
    TokenTree,
    build_label_tree,
    build_score_tree,
    label_spellings,
    validate_scale,
)


def paths(tree: TokenTree) -> dict[tuple[int, ...], object]:
    """Every node as (token ids from the root) -> the outcome it completes, or None."""
    out = {}
    for node in range(1, tree.n_nodes):
        ids = tuple(int(tree.token_ids[a]) for a in tree.ancestors(node))
        value = tree.terminal_value[node]
        out[ids] = tree.values[value] if value >= 0 else None
    assert len(out) == tree.n_nodes - 1, "two nodes share a token path"
    return out


def check_invariants(tree: TokenTree, surfaces: list[str]) -> None:
    assert tree.token_ids[0] == -1 and tree.parents[0] == -1 and tree.depths[0] == 0
    for node in range(1, tree.n_nodes):
        parent = tree.parents[node]
        assert 0 <= parent < node  # parents precede children (the engine relies on it)
        assert tree.depths[node] == tree.depths[parent] + 1
        assert tree.texts[node] == tree.texts[parent] + surfaces[tree.token_ids[node]]
    assert tree.max_depth == int(tree.depths.max())


# -- score trees -----------------------------------------------------------------------------------

SCORE_CASES = {
    # "10" reaches the model merged or split; the space may be its own token
    "split_and_merged_ten": (
        ["1", "0", "10", " ", "x"],
        0,
        10,
        {(0,): 1, (1,): 0, (2,): 10, (0, 1): 10, (3,): None, (3, 0): 1, (3, 1): 0, (3, 2): 10, (3, 0, 1): 10},
    ),
    # a merged space token (" 1") and a space-merged numeral (" 10")
    "space_merged": (
        [" 1", " 10", "0", "1", "x"],
        0,
        10,
        {(0,): 1, (1,): 10, (0, 2): 10, (2,): 0, (3,): 1, (3, 2): 10},
    ),
    # merged multi-digit tokens, every split of 100 with and without a space
    "hundred": (
        ["100", " 100", "10", "0", "1", " ", "00"],
        99,
        100,
        {
            (0,): 100,
            (2, 3): 100,
            (2,): None,
            (4,): None,
            (4, 3): None,
            (4, 3, 3): 100,
            (4, 6): 100,
            (1,): 100,
            (5,): None,
            (5, 0): 100,
            (5, 2): None,
            (5, 2, 3): 100,
            (5, 4): None,
            (5, 4, 3): None,
            (5, 4, 3, 3): 100,
            (5, 4, 6): 100,
        },
    ),
    # two ids with the same text are separate paths (Gemma's "1" and byte-fallback "<0x31>")
    "duplicate_tokens": (
        ["1", "0", "1", "x"],
        0,
        10,
        {(0,): 1, (2,): 1, (1,): 0, (0, 1): 10, (2, 1): 10},
    ),
    # leading zeros, double spaces, trailing spaces and out-of-scale numbers spell nothing
    "no_bad_spellings": (
        ["0", "5", "05", "  ", "5 ", " ", "6", ""],
        1,
        5,
        {(1,): 5, (5,): None, (5, 1): 5},
    ),
}


@pytest.mark.parametrize("case", list(SCORE_CASES), ids=list(SCORE_CASES))
def test_score_tree_paths(case):
    surfaces, low, high, expected = SCORE_CASES[case]
    tree = build_score_tree(surfaces, low, high)
    check_invariants(tree, surfaces)
    assert tree.values == tuple(range(low, high + 1))
    assert paths(tree) == expected


def test_full_scales_have_every_score():
    digits = [str(d) for d in range(10)]
    for low, high in [(1, 5), (0, 10), (1, 100), (0, 100)]:
        tree = build_score_tree(digits + [" "], low, high)
        terminals = {tree.texts[n] for n in range(tree.n_nodes) if tree.terminal_value[n] >= 0}
        assert terminals == {s for v in range(low, high + 1) for s in (str(v), f" {v}")}
        for n in range(tree.n_nodes):
            if tree.terminal_value[n] >= 0:
                assert tree.texts[n].strip() == str(tree.values[tree.terminal_value[n]])


@pytest.mark.parametrize(
    ("surfaces", "continuing"),
    [
        (["1", "0", "10", " ", " 5", "x", "5x", ".", "²", "٣", "\n7"], [0, 1, 2, 6]),
        (["7", "07", "", "<0x37>", " "], [0, 1]),
    ],
)
def test_score_continuations_are_tokens_starting_with_an_ascii_digit(surfaces, continuing):
    tree = build_score_tree(surfaces, 0, 10)
    assert tree.continue_ids.tolist() == continuing


@pytest.mark.parametrize(
    ("low", "high"),
    [(5, 5), (5, 1), (-1, 5), (0, 101), (1.0, 5), (1, 5.0), (True, 5), ("1", "5"), (None, 10)],
)
def test_invalid_scales_raise(low, high):
    with pytest.raises(ConfigError, match="scale"):
        validate_scale(low, high)
    with pytest.raises(ConfigError):
        build_score_tree(["1", "5"], low, high)


@pytest.mark.parametrize(("low", "high"), [(0, 1), (1, 5), (0, 10), (1, 100), (0, 100), (99, 100)])
def test_valid_scales_pass(low, high):
    validate_scale(low, high)


# -- label trees ------------------------------------------------------------------------------------

LABEL_CASES = {
    "a_b": (
        ["A", "B", " A", " b", "AB", "a", " ", "x"],
        ("A", "B"),
        {(0,): "A", (1,): "B", (2,): "A", (3,): "B", (5,): "A", (6,): None, (6, 0): "A", (6, 1): "B", (6, 5): "A"},
    ),
    "yes_no_case_and_space": (
        ["Yes", " yes", "YES", "Y", "es", "No", " NO", " no", "nO", "yes", "Ye", "S"],
        ("Yes", "No"),
        {
            (0,): "Yes",
            (1,): "Yes",
            (2,): "Yes",
            (3,): None,
            (3, 4): "Yes",
            (5,): "No",
            (6,): "No",
            (7,): "No",
            (9,): "Yes",
            (10,): None,  # "Ye" + "S" spells "YeS": no variant
        },
    ),
    "duplicate_tokens": (
        ["A", "A", "B"],
        ("A", "B"),
        {(0,): "A", (1,): "A", (2,): "B"},
    ),
}


@pytest.mark.parametrize("case", list(LABEL_CASES), ids=list(LABEL_CASES))
def test_label_tree_paths(case):
    surfaces, labels, expected = LABEL_CASES[case]
    tree = build_label_tree(surfaces, labels)
    check_invariants(tree, surfaces)
    assert tree.values == labels
    assert paths(tree) == expected


def test_label_spellings_cover_case_and_space_variants():
    spellings = label_spellings(["Yes", "No"])
    assert {s for s, i in spellings.items() if i == 0} == {"Yes", "yes", "YES", " Yes", " yes", " YES"}
    assert {s for s, i in spellings.items() if i == 1} == {"No", "no", "NO", " No", " no", " NO"}


def test_label_continuations_are_word_characters():
    surfaces = ["A", "B", "b", "_x", "7", " A", ".", ",", "\n", "é"]
    tree = build_label_tree(surfaces, ["A", "B"])
    assert tree.continue_ids.tolist() == [0, 1, 2, 3, 4, 9]


@pytest.mark.parametrize(
    "labels",
    [("Yes", "yes"), ("A", "a"), ("ok", "OK"), ("A", "A"), ("A",), (), ("A", ""), ("A", " B"), ("A", "B ")],
)
def test_bad_label_scales_raise(labels):
    with pytest.raises(ConfigError):
        build_label_tree(["A", "B", "a", "yes", "Yes"], labels)


def test_colliding_labels_name_both():
    with pytest.raises(ConfigError, match=r"'Yes'.*'yes'"):
        label_spellings(["Yes", "yes"])


def test_tree_is_independent_of_vocab_order():
    surfaces = ["x", " ", "10", "0", "1", " 1"]
    perm = np.random.default_rng(0).permutation(len(surfaces))
    shuffled = [surfaces[i] for i in perm]
    a = build_score_tree(surfaces, 0, 10)
    b = build_score_tree(shuffled, 0, 10)
    a_paths = {tuple(surfaces[i] for i in p): v for p, v in paths(a).items()}
    b_paths = {tuple(shuffled[i] for i in p): v for p, v in paths(b).items()}
    assert a_paths == b_paths
