"""Score and label probabilities from hand-written next-token distributions.

A toy language model is a table: context (token ids after the prompt) -> {token id: probability};
the rest of each row goes to an "other" token. The engine's two numbers per tree node are derived
from the table in the obvious way, and every expected probability is written out by hand.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from localjudge.scoring.distribution import (
    DEFAULT_MIN_VALID_MASS,
    label_distribution,
    outcome_mass,
    score_distribution,
)
from localjudge.scoring.trie import TokenTree, build_label_tree, build_score_tree

OTHER = "x"  # the "everything else" token of score tests
NON_WORD = "\n"  # ... of label tests, where "x" would continue the word


def table_lm(surfaces: list[str], table: dict[tuple[int, ...], dict[int, float]], other: str = OTHER):
    """context -> (V,) next-token probabilities; the rest of each row goes to the `other` token."""
    other = surfaces.index(other)

    def probs(context: tuple[int, ...]) -> np.ndarray:
        p = np.zeros(len(surfaces))
        for tid, q in table.get(context, {}).items():
            p[tid] = q
        p[other] = 1 - p.sum()
        assert p[other] >= -1e-12
        return p

    return probs


def node_logps(tree: TokenTree, lm, continuing: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(1, N) edge and end log-probabilities read off the toy model, as the engine computes them."""
    assert tree.continue_ids.tolist() == continuing
    edge = np.zeros((1, tree.n_nodes))
    end = np.zeros((1, tree.n_nodes))
    with np.errstate(divide="ignore"):
        for node in range(1, tree.n_nodes):
            path = tuple(int(tree.token_ids[a]) for a in tree.ancestors(node))
            edge[0, node] = np.log(lm(path[:-1])[path[-1]])
            end[0, node] = np.log(1 - lm(path)[continuing].sum())
    return edge, end


def masses(tree: TokenTree, lm, continuing: list[int]) -> dict:
    edge, end = node_logps(tree, lm, continuing)
    row = outcome_mass(tree, edge, end)[0]
    return {v: row[i] for i, v in enumerate(tree.values)}


# -- hand-computed outcome masses ------------------------------------------------------------------

# vocab: 0 "1", 1 "0", 2 "10", 3 " ", 4 "x", 5 "5"
TEN = ["1", "0", "10", " ", OTHER, "5"]
TEN_DIGITS = [0, 1, 2, 5]


def test_split_ten_is_ten_not_one():
    lm = table_lm(
        TEN,
        {
            (): {0: 0.4, 2: 0.2, 3: 0.1, 1: 0.1},  # "1" .4, "10" .2, " " .1, "0" .1, other .2
            (0,): {1: 0.5},  # "1" then "0": the numeral goes on
            (0, 1): {1: 0.3},  # "100" is off the 0..10 scale
            (2,): {1: 0.1, 0: 0.1},  # "10" then "0"/"1": "100"/"101"
            (3,): {0: 0.5, 2: 0.5},  # " " then "1" or "10"
        },
    )
    m = masses(build_score_tree(TEN, 0, 10), lm, TEN_DIGITS)
    p1 = 0.4 * (1 - 0.5) + 0.1 * 0.5 * 1  # "1" ending, " 1"
    p10 = 0.4 * 0.5 * (1 - 0.3) + 0.2 * (1 - 0.2) + 0.1 * 0.5  # "1""0", "10", " 10"
    p0 = 0.1
    assert m[1] == pytest.approx(p1)  # 0.25, not 0.45 ("1","0" read as 1)
    assert m[10] == pytest.approx(p10)
    assert m[0] == pytest.approx(p0)
    assert sum(m.values()) == pytest.approx(0.25 + 0.35 + 0.1)
    d = score_distribution(np.array(list(m.values())), 0, 10)
    assert d.valid_mass == pytest.approx(0.7)
    assert d.probs[1] == pytest.approx(0.25 / 0.7) and d.probs[10] == pytest.approx(0.35 / 0.7)
    assert d.expected == pytest.approx((0.25 * 1 + 0.35 * 10) / 0.7)
    assert d.mode == 10


def test_terminator_mass_is_what_ends_the_numeral():
    # after "1", half the mass goes to "5" ("15", off the 0..10 scale): that half is not a 1
    lm = table_lm(TEN, {(): {0: 0.8}, (0,): {5: 0.5, 3: 0.25}})  # " " after "1" does end it
    m = masses(build_score_tree(TEN, 0, 10), lm, TEN_DIGITS)
    assert m[1] == pytest.approx(0.8 * 0.5)
    assert sum(m.values()) == pytest.approx(0.4)


def test_space_token_and_space_merged_tokens():
    # vocab: 0 " 1", 1 " 10", 2 "0", 3 "1", 4 " ", 5 "x", 6 "00", 7 " 100", 8 "100"
    v = [" 1", " 10", "0", "1", " ", OTHER, "00", " 100", "100"]
    lm = table_lm(
        v,
        {
            (): {0: 0.3, 1: 0.1, 4: 0.2, 7: 0.05, 8: 0.05, 3: 0.1},
            (0,): {2: 0.5, 6: 0.2},  # " 1" -> " 10" (.5), " 100" (.2)
            (0, 2): {2: 0.4},  # " 10" -> " 100"
            (4,): {3: 0.5, 8: 0.25},  # " " -> " 1", " 100"
            (4, 3): {6: 1.0},  # " 1" -> " 100" for sure
            (3,): {2: 0.5},  # "1" -> "10"
            (3, 2): {2: 0.5},  # "10" -> "100"
        },
    )
    m = masses(build_score_tree(v, 1, 100), lm, [2, 3, 6, 8])
    p1 = 0.3 * (1 - 0.7) + 0.1 * 0.5  # " 1"; "1"
    p10 = 0.3 * 0.5 * (1 - 0.4) + 0.1 + 0.1 * 0.5 * 0.5  # " 1""0"; " 10"; "1""0"
    p100 = 0.3 * 0.5 * 0.4 + 0.3 * 0.2 + 0.05 + 0.05 + 0.2 * 0.5 * 1.0 + 0.2 * 0.25 + 0.1 * 0.5 * 0.5
    assert m[1] == pytest.approx(p1)
    assert m[10] == pytest.approx(p10)
    assert m[100] == pytest.approx(p100)
    assert sum(m.values()) == pytest.approx(p1 + p10 + p100)


def test_duplicate_tokens_both_count():
    # two ids spell "1" (Gemma's "1" and byte-fallback "<0x31>"): neither overwrites the other
    v = ["1", "0", OTHER, "1"]
    lm = table_lm(v, {(): {0: 0.3, 3: 0.2, 1: 0.1}, (0,): {1: 0.5}, (3,): {1: 0.25}})
    m = masses(build_score_tree(v, 0, 10), lm, [0, 1, 3])
    assert m[1] == pytest.approx(0.3 * 0.5 + 0.2 * 0.75)
    assert m[10] == pytest.approx(0.3 * 0.5 + 0.2 * 0.25)
    assert m[0] == pytest.approx(0.1)


def test_scale_one_to_five_ignores_off_scale_mass():
    v = ["1", "2", "3", "4", "5", "6", "0", " ", OTHER]
    lm = table_lm(v, {(): {0: 0.1, 2: 0.2, 4: 0.3, 5: 0.2, 6: 0.1}, (4,): {6: 0.5}})
    m = masses(build_score_tree(v, 1, 5), lm, list(range(7)))
    assert m == pytest.approx({1: 0.1, 2: 0.0, 3: 0.2, 4: 0.0, 5: 0.15})
    d = score_distribution(np.array(list(m.values())), 1, 5)
    assert d.valid_mass == pytest.approx(0.45)
    assert d.expected == pytest.approx((0.1 * 1 + 0.2 * 3 + 0.15 * 5) / 0.45)
    assert d.normalized == pytest.approx((d.expected - 1) / 4)


def test_labels_with_case_space_and_word_ends():
    # vocab: 0 "Yes", 1 " yes", 2 "YES", 3 "Y", 4 "es", 5 "No", 6 " no", 7 "terday", 8 ".", 9 "\n"
    v = ["Yes", " yes", "YES", "Y", "es", "No", " no", "terday", ".", NON_WORD]
    lm = table_lm(
        v,
        {
            (): {0: 0.2, 1: 0.1, 2: 0.05, 3: 0.1, 5: 0.2, 6: 0.1},
            (0,): {7: 0.5, 8: 0.5},  # "Yesterday" is not "Yes"; "Yes." is
            (3,): {4: 0.4},  # "Y" + "es"
            (5,): {4: 0.1},  # "Noes" continues the word
        },
        other=NON_WORD,
    )
    tree = build_label_tree(v, ["Yes", "No"])
    m = masses(tree, lm, [0, 2, 3, 4, 5, 7])
    assert m["Yes"] == pytest.approx(0.2 * 0.5 + 0.1 + 0.05 + 0.1 * 0.4)
    assert m["No"] == pytest.approx(0.2 * 0.9 + 0.1)
    d = label_distribution(np.array([m["Yes"], m["No"]]), ("Yes", "No"))
    assert d.probs["Yes"] == pytest.approx(0.29 / 0.57)
    assert d.mode == "Yes" and d.scored


def test_a_b_labels():
    v = ["A", "B", " A", " B", " ", NON_WORD, "AB"]
    lm = table_lm(v, {(): {0: 0.3, 3: 0.2, 4: 0.2, 6: 0.2}, (4,): {0: 0.5, 1: 0.25}, (0,): {1: 0.5}}, NON_WORD)
    m = masses(build_label_tree(v, ["A", "B"]), lm, [0, 1, 6])
    assert m == pytest.approx({"A": 0.3 * 0.5 + 0.2 * 0.5, "B": 0.2 + 0.2 * 0.25})


# -- summaries of a mass vector ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mass", "low", "high", "expected", "std", "entropy", "mode"),
    [
        ([0.0, 0.2, 0.6], 1, 3, 2.75, math.sqrt(0.1875), -(0.25 * math.log(0.25) + 0.75 * math.log(0.75)), 3),
        ([0.05] * 11, 0, 10, 5.0, math.sqrt(10.0), math.log(11), 0),
        ([0, 0, 0, 0, 0.9], 1, 5, 5.0, 0.0, 0.0, 5),
        ([0.9, 0, 0, 0, 0], 1, 5, 1.0, 0.0, 0.0, 1),
        ([0.3, 0.1], 0, 1, 0.25, math.sqrt(0.1875), -(0.75 * math.log(0.75) + 0.25 * math.log(0.25)), 0),
        ([0.5] + [0.0] * 99 + [0.5], 0, 100, 50.0, 50.0, math.log(2), 0),
        ([0.0] * 99 + [0.2], 1, 100, 100.0, 0.0, 0.0, 100),
    ],
)
def test_score_summary(mass, low, high, expected, std, entropy, mode):
    d = score_distribution(np.array(mass), low, high)
    assert d.scored and d.unscored_reason is None
    assert list(d.probs) == list(range(low, high + 1))
    assert sum(d.probs.values()) == pytest.approx(1.0)
    assert d.valid_mass == pytest.approx(sum(mass))
    assert d.expected == pytest.approx(expected)
    assert low <= d.expected <= high
    # not expected / high: a 1..5 scale at its bottom is 0, not 0.2
    assert d.normalized == pytest.approx((expected - low) / (high - low))
    assert d.std == pytest.approx(std, abs=1e-12)
    assert d.entropy == pytest.approx(entropy, abs=1e-12)
    assert d.mode == mode


@pytest.mark.parametrize(
    ("mass", "threshold", "scored"),
    [
        ([0.02, 0.03], DEFAULT_MIN_VALID_MASS, False),
        ([0.02, 0.03], 0.01, True),
        ([0.05, 0.05], 0.1, True),  # exactly at the threshold is enough
        ([0.3, 0.3], 0.7, False),
        ([0.0, 0.0], DEFAULT_MIN_VALID_MASS, False),
        ([0.0, 0.0], 0.0, False),  # nothing to normalise, whatever the threshold
        ([1e-9, 0.0], 0.0, True),
    ],
)
def test_unscored_below_threshold(mass, threshold, scored):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no divide-by-zero on an all-zero row
        d = score_distribution(np.array(mass), 3, 4, min_valid_mass=threshold)
        lab = label_distribution(np.array(mass), ("A", "B"), min_valid_mass=threshold)
    assert d.scored is scored and lab.scored is scored
    assert d.valid_mass == pytest.approx(sum(mass)) and lab.valid_mass == pytest.approx(sum(mass))
    if scored:
        assert 3 <= d.expected <= 4 and d.mode is not None and lab.mode is not None
    else:
        # never a guess: no 0, no midpoint, no mode
        assert math.isnan(d.expected) and math.isnan(d.normalized) and math.isnan(d.std)
        assert math.isnan(d.entropy) and d.mode is None and lab.mode is None
        assert "threshold" in d.unscored_reason and "labels" in lab.unscored_reason


def test_label_summary():
    d = label_distribution(np.array([0.3, 0.1, 0.0]), ("A", "B", "C"))
    assert d.probs == pytest.approx({"A": 0.75, "B": 0.25, "C": 0.0})
    assert d.valid_mass == pytest.approx(0.4) and d.mode == "A"


# -- property: the trie equals a direct enumeration of token sequences --------------------------------

POOL = ["0", "1", "5", "10", "100", " ", " 1", " 10", "00", "x", "٣", "a", "1", "  "]
SCALES = [(0, 10), (1, 5), (1, 100), (0, 1), (9, 11)]


def random_lm(n: int, seed: int, temperature: float):
    cache: dict[tuple[int, ...], np.ndarray] = {}

    def probs(context: tuple[int, ...]) -> np.ndarray:
        if context not in cache:
            logits = np.random.default_rng([seed, len(context), *context]).normal(size=n) * temperature
            e = np.exp(logits - logits.max())
            cache[context] = e / e.sum()
        return cache[context]

    return probs


def enumerate_masses(vocab: list[str], low: int, high: int, lm) -> dict[int, float]:
    """Sum over every token sequence whose text is a spelling, straight from the definition."""
    spellings = {s: v for v in range(low, high + 1) for s in (str(v), f" {v}")}
    longest = max(len(s) for s in spellings)
    digits = [i for i, t in enumerate(vocab) if t[:1] in set("0123456789")]
    out = dict.fromkeys(range(low, high + 1), 0.0)
    for k in range(1, longest + 1):
        for seq in itertools.product(range(len(vocab)), repeat=k):
            text = "".join(vocab[i] for i in seq)
            if text not in spellings:
                continue
            p = math.prod(lm(seq[:j])[seq[j]] for j in range(k))
            out[spellings[text]] += p * (1 - lm(seq)[digits].sum())
    return out


@settings(max_examples=40, deadline=None)
@given(
    vocab_idx=st.lists(st.integers(0, len(POOL) - 1), min_size=2, max_size=6),
    scale=st.sampled_from(SCALES),
    seed=st.integers(0, 2**32 - 1),
    temperature=st.floats(0.1, 6.0),
)
def test_mass_equals_direct_enumeration(vocab_idx, scale, seed, temperature):
    vocab = [POOL[i] for i in vocab_idx] + ["x"]  # duplicates in the draw stay separate ids
    low, high = scale
    lm = random_lm(len(vocab), seed, temperature)
    tree = build_score_tree(vocab, low, high)
    digits = [i for i, t in enumerate(vocab) if t[:1] in set("0123456789")]
    m = masses(tree, lm, digits)
    direct = enumerate_masses(vocab, low, high, lm)
    assert m == pytest.approx(direct, rel=1e-9, abs=1e-15)
    total = sum(m.values())
    assert total <= 1 + 1e-12
    d = score_distribution(np.array(list(m.values())), low, high, min_valid_mass=0.0)
    if total > 0:
        assert sum(d.probs.values()) == pytest.approx(1.0)
        assert low - 1e-9 <= d.expected <= high + 1e-9
        assert 0 - 1e-12 <= d.normalized <= 1 + 1e-12
        assert d.std >= 0 and d.entropy >= -1e-12
    else:
        assert not d.scored
