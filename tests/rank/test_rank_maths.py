"""The ranking maths on planted rankings: the fit, its intervals, the adaptive choice, system level."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau

from localjudge.rank.adaptive import first_round, group_seed, next_round, pair_budget
from localjudge.rank.bradley_terry import fit_strengths, ranks, win_scores
from localjudge.rank.intervals import item_intervals, misorder_probability
from localjudge.rank.systems import system_ranking
from localjudge.scoring.logistic import tanh_sigmoid


def all_pairs(n):
    return np.array([(i, j) for i in range(n) for j in range(i + 1, n)])


def test_noise_free_soft_wins_recover_the_planted_strengths():
    truth = np.array([1.5, -0.5, 0.3, -1.3])  # sums to 0, as the fit's strengths do
    pairs = all_pairs(4)
    y = tanh_sigmoid(truth[pairs[:, 0]] - truth[pairs[:, 1]])
    fit = fit_strengths(4, pairs, y, np.full(len(y), 2.0), prior=1e-9)
    assert fit.theta == pytest.approx(truth, abs=1e-5)
    assert fit.theta.sum() == pytest.approx(0, abs=1e-9)
    assert ranks(fit.theta).tolist() == [1, 3, 2, 4]


def test_soft_wins_are_not_hard_wins():
    # 0.6 in every comparison is a small edge, not a sweep: hard wins would make the gap infinite
    fit = fit_strengths(2, np.array([[0, 1]]), np.array([0.6]), prior=1e-9)
    assert fit.theta[0] - fit.theta[1] == pytest.approx(np.log(0.6 / 0.4), abs=1e-6)


def test_a_clean_sweep_stays_finite_under_the_prior():
    fit = fit_strengths(3, np.array([[0, 1], [0, 2], [1, 2]]), np.array([1.0, 1.0, 1.0]))
    assert np.all(np.isfinite(fit.theta)) and fit.theta[0] > fit.theta[1] > fit.theta[2]
    assert ranks(fit.theta).tolist() == [1, 2, 3]


def test_win_scores_are_mean_pairwise_probabilities():
    theta = np.array([0.0, np.log(3.0)])  # P(1 beats 0) = 0.75
    assert win_scores(theta) == pytest.approx([0.25, 0.75])
    assert win_scores(np.zeros(1)).tolist() == [0.5]


def test_intervals_hold_the_point_and_narrow_with_more_readings():
    truth = np.linspace(1, -1, 5)
    pairs = all_pairs(5)
    y = tanh_sigmoid(truth[pairs[:, 0]] - truth[pairs[:, 1]])
    few = fit_strengths(5, pairs, y, np.full(len(y), 2.0))
    many = fit_strengths(5, pairs, y, np.full(len(y), 40.0))
    a, b = item_intervals(few), item_intervals(many)
    scores = win_scores(few.theta)
    assert np.all(a.score_low <= scores) and np.all(scores <= a.score_high)
    assert np.all(b.score_high - b.score_low < a.score_high - a.score_low)
    assert b.rank_low.tolist() == b.rank_high.tolist() == [1, 2, 3, 4, 5]  # settled with many readings
    assert item_intervals(few).score_low.tolist() == a.score_low.tolist()  # seeded


def test_misorder_is_half_for_pairs_never_told_apart():
    fit = fit_strengths(3, np.array([[0, 1]]), np.array([0.9]), np.array([10.0]))
    wrong = misorder_probability(fit)
    assert wrong[0, 1] < 0.05  # 10 readings of 0.9: about 0.02
    assert wrong[1, 2] > 0.3 and wrong[0, 2] > 0.05  # item 2 never compared
    assert np.diag(wrong).tolist() == [0, 0, 0]


def test_budget_and_first_round():
    assert pair_budget(16, 2) == 16 and pair_budget(16, 8) == 64 and pair_budget(4, 8) == 6
    start = first_round(6, pair_budget(6, 4), seed=1)
    assert len(start) == 6 and all(a < b for a, b in start)
    degree = np.bincount(np.array(start).ravel(), minlength=6)
    assert degree.tolist() == [2] * 6  # a cycle: connected, every item twice
    assert len(first_round(6, 3, seed=1)) == 3
    assert group_seed("article 7") == group_seed("article 7") != group_seed("article 8")


def simulate(truth: np.ndarray, per_output: int, noise: float, seed: int) -> np.ndarray:
    """Ranks a planted group with the adaptive loop; the judge reads σ(θ_i − θ_j + fixed noise)."""
    n = len(truth)
    rng = np.random.default_rng(seed)
    bias = rng.normal(0, noise, size=(n, n))
    budget = pair_budget(n, per_output)
    asked: list = []
    read: list = []
    y: list = []
    while pairs := next_round(n, budget, asked, read, y, [2.0] * len(y), group_seed(str(seed))):
        if asked:  # after the first round's cycle, an item at most once per round
            assert len({i for p in pairs for i in p}) == 2 * len(pairs)
        asked += pairs
        read += pairs
        y += [float(tanh_sigmoid(truth[i] - truth[j] + bias[i, j])) for i, j in pairs]
    assert len(set(asked)) == len(asked) == budget  # the budget, every pair at most once
    return fit_strengths(n, np.array(read), np.array(y), np.full(len(y), 2.0)).theta


def _fit_of(truth, per_output: int, noise: float, seed: int):
    """`simulate`'s judge and choice of pairs, returning the whole fit (strengths, information, dispersion)."""
    n = len(truth)
    bias = np.random.default_rng(seed).normal(0, noise, size=(n, n))
    asked: list = []
    y: list = []
    while pairs := next_round(n, pair_budget(n, per_output), asked, asked, y, [1.0] * len(y), group_seed(str(seed))):
        asked += pairs
        y += [float(tanh_sigmoid(truth[i] - truth[j] + bias[i, j])) for i, j in pairs]
    return fit_strengths(n, np.array(asked), np.array(y))


@pytest.mark.parametrize("noise", [0.5, 1.0])
def test_intervals_cover_the_planted_scores_and_say_something(noise):
    # a judge that errs by N(0, noise) logits per pair, the same error each time it sees the pair
    covered, widths = [], []
    for s in range(40):
        truth = np.random.default_rng([s, 3]).normal(0, 1, 16)
        iv = item_intervals(fit := _fit_of(truth, 8, noise, s), draws=500, seed=s)
        planted = win_scores(truth)
        covered.append(np.mean((iv.score_low <= planted) & (planted <= iv.score_high)))
        widths.append(np.mean(iv.score_high - iv.score_low))
        assert 0 < fit.dispersion < 1  # soft readings: less spread than a coin flip per comparison
    # near the nominal 95% (counting each reading as a Bernoulli trial covered 100% with 0.87-wide intervals)
    assert 0.85 <= np.mean(covered) <= 0.99
    assert np.mean(widths) < 0.3


def test_readings_that_fit_the_model_are_surer_than_readings_that_err():
    truth = np.random.default_rng(5).normal(0, 1, 16)
    exact, erring = _fit_of(truth, 8, 0.0, 5), _fit_of(truth, 8, 1.0, 5)
    assert exact.dispersion < 1e-3 < erring.dispersion
    width = [np.mean(iv.score_high - iv.score_low) for iv in map(item_intervals, (exact, erring))]
    assert width[0] < width[1] / 10
    one_cycle = _fit_of(truth, 2, 1.0, 5)  # 16 readings, 15 free strengths: no dispersion to read
    assert one_cycle.dispersion == 1.0


def test_a_planted_ranking_is_recovered_within_the_budget():
    truth = np.linspace(3, -3, 16)
    theta = simulate(truth, per_output=8, noise=0.3, seed=0)
    assert kendalltau(theta, truth)[0] > 0.85


def test_more_budget_recovers_more():
    taus = {}
    for per_output in (2, 4, 8):
        taus[per_output] = np.mean(
            [
                kendalltau(simulate(truth := np.random.default_rng(s).normal(0, 1, 16), per_output, 0.5, s), truth)[0]
                for s in range(30)
            ]
        )
    assert taus[2] < taus[4] < taus[8]
    assert taus[8] > 0.7


def test_adaptive_beats_the_same_number_of_random_pairs():
    adaptive, random = [], []
    for s in range(30):
        rng = np.random.default_rng(1000 + s)
        truth = rng.normal(0, 1, 16)
        adaptive.append(kendalltau(simulate(truth, 4, 0.5, 1000 + s), truth)[0])
        bias = np.random.default_rng(1000 + s).normal(0, 0.5, size=(16, 16))  # the same judge
        pairs = all_pairs(16)[rng.permutation(120)[: pair_budget(16, 4)]]
        y = tanh_sigmoid(truth[pairs[:, 0]] - truth[pairs[:, 1]] + bias[pairs[:, 0], pairs[:, 1]])
        random.append(kendalltau(fit_strengths(16, pairs, y, np.full(len(y), 2.0)).theta, truth)[0])
    assert np.mean(adaptive) > np.mean(random)


def test_system_ranking_with_group_bootstrap():
    groups = np.repeat([f"g{k}" for k in range(20)], 3)
    systems = np.tile(["good", "fair", "poor"], 20)
    rng = np.random.default_rng(0)
    scores = np.tile([0.8, 0.5, 0.2], 20) + rng.normal(0, 0.05, 60)
    out = system_ranking(groups, systems, scores, n_bootstrap=200)
    by = dict(zip(out.systems, zip(out.rank.tolist(), out.score_low, out.score, out.score_high, strict=True)))
    assert [by[s][0] for s in ("good", "fair", "poor")] == [1, 2, 3]
    assert all(lo <= m <= hi for _, lo, m, hi in by.values())
    assert out.rank_low.tolist() == out.rank_high.tolist() == out.rank.tolist()  # clearly apart
    assert out.outputs.tolist() == [20, 20, 20]
