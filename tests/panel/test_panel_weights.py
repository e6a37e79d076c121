"""The panel's weightings and pooling, on hand-built score matrices."""

from __future__ import annotations

import numpy as np
import pytest

from localjudge.panel.members import members_problem
from localjudge.panel.weights import agreement_weights, fitted_weights, leave_one_out_agreement, mean_weights, pool


def test_pool_is_the_weighted_mean_and_nan_when_a_member_is_missing():
    scores = np.array([[0.2, 0.6, 1.0], [0.5, np.nan, 0.5]])
    assert pool(scores, np.array([0.5, 0.25, 0.25])).tolist()[0] == pytest.approx(0.5)
    assert np.isnan(pool(scores, np.full(3, 1 / 3))[1])


def test_pool_without_weights_is_the_plain_mean_bit_for_bit_and_differs_from_equal_weights_in_the_last_bit():
    # the bias lab's panels pool with no weights (the members' np.mean), panel records with weights
    # (their weighted sum); each keeps the arithmetic its results were made with
    scores = np.array([[0.64, 0.27, 0.04], [0.64, np.nan, 0.04], [0.3, 0.3, np.nan]])
    plain, weighted = pool(scores), pool(scores, np.full(3, 1 / 3))
    assert plain[0] == np.mean(scores[0]) and weighted[0] == scores[0] @ np.full(3, 1 / 3)
    assert plain[0] != weighted[0]
    assert np.isnan(plain[1:]).all()
    assert pool(scores, quorum=2).tolist()[1:] == [np.mean([0.64, 0.04]), 0.3]
    assert pool(scores, np.array([0.5, 0.25, 0.25]), quorum=2).tolist()[1] == 0.64 * (2 / 3) + 0.04 * (1 / 3)


def test_a_panel_is_two_judges_or_more_each_named_once():
    assert members_problem(["a", "b"]) is None
    assert members_problem(["a"]) == "a panel needs two judges or more"
    assert members_problem(["a", "b", "a"]) == "judge 'a' given twice"


def test_agreement_weights_follow_the_leave_one_out_correlation():
    rng = np.random.default_rng(0)
    truth = rng.normal(size=200)
    good = truth + rng.normal(0, 0.3, 200)
    fair = truth + rng.normal(0, 1.0, 200)
    noise = rng.normal(size=200)
    w = agreement_weights(np.column_stack([good, fair, noise]))
    assert w.equal_because is None
    assert w.weights[0] > w.weights[1] > w.weights[2] >= 0
    assert w.weights.sum() == pytest.approx(1)
    # by hand: member 0 against the mean of members 1 and 2
    r0 = np.corrcoef(good, (fair + noise) / 2)[0, 1]
    assert w.agreement[0] == pytest.approx(r0)


def test_two_members_get_equal_agreement_weights():
    x = np.array([[0.1, 0.3], [0.5, 0.4], [0.9, 0.8], [0.2, 0.6]])
    w = agreement_weights(x)
    assert w.weights.tolist() == pytest.approx([0.5, 0.5]) and w.agreement[0] == pytest.approx(w.agreement[1])


def test_no_learnable_agreement_says_why():
    w = agreement_weights(np.array([[0.1, 0.9], [0.9, 0.1], [0.5, 0.5], [0.2, 0.8]]))
    assert w.weights.tolist() == [0.5, 0.5] and "correlate positively" in w.equal_because
    few = agreement_weights(np.array([[0.1, 0.2], [0.3, 0.4]]))
    assert "fewer than 3" in few.equal_because and np.all(np.isnan(few.agreement))


def test_fitted_weights_favour_the_member_that_tracks_the_labels():
    rng = np.random.default_rng(1)
    human = rng.uniform(1, 5, 300)
    good = 0.2 * human + rng.normal(0, 0.05, 300)
    bad = rng.uniform(0, 1, 300)
    w = fitted_weights(np.column_stack([good, bad]), human)
    assert w.weights[0] > 0.9 and w.weights.sum() == pytest.approx(1)
    opposite = fitted_weights(np.column_stack([-good, -good]), human)
    assert opposite.weights.tolist() == [0.5, 0.5] and "rise with the human" in opposite.equal_because


def test_mean_weights_measure_agreement_too():
    x = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.4], [0.9, 0.8, 0.7], [0.3, 0.1, 0.2]])
    w = mean_weights(x)
    assert w.weights.tolist() == pytest.approx([1 / 3] * 3)
    assert w.agreement.tolist() == pytest.approx(leave_one_out_agreement(x).tolist())
