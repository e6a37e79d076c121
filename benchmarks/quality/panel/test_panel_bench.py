"""The panel study's own helpers: pair accuracy."""

from __future__ import annotations

import pytest

from benchmarks.quality.panel.panel_pairs import accuracy


def test_accuracy_counts_draws_half_and_leaves_unscored_out():
    out = accuracy([0.9, 0.2, 0.5, None], [1, 1, 2, 2])
    assert out == {"accuracy": pytest.approx(0.5), "scored": 3, "n": 4}


def test_fitted_weights_read_each_half_with_the_other_halfs_fit():
    import numpy as np

    from benchmarks.quality.panel.panel_summeval import pooled

    rng = np.random.default_rng(0)
    n = 40
    half = np.arange(n) < n // 2
    good, noise = rng.normal(size=n), rng.normal(size=n)
    # the human tracks member 0 on the first half and member 1 on the second: each half's fit is the other's opposite
    human = np.where(half, good, noise)
    scores = np.stack([good, noise], axis=1)
    got, used = pooled(scores, "fitted", human, [half, ~half])
    assert used[0][0] > 0.9 and used[1][1] > 0.9  # fitted on the first half: member 0; on the second: member 1
    assert np.allclose(got[~half], scores[~half, 0] * used[0][0] + scores[~half, 1] * used[0][1], atol=1e-3)
    assert np.allclose(got[half], scores[half, 0] * used[1][0] + scores[half, 1] * used[1][1], atol=1e-3)
    mean, _ = pooled(scores, "mean", human, [half, ~half])
    assert np.allclose(mean, scores.mean(axis=1))


def test_likelihood_members_are_standardised_over_their_finite_scores():
    import numpy as np

    from benchmarks.quality.panel.panel_summeval import standardised

    z = standardised(np.array([-10.0, -20.0, np.nan, -30.0]))
    assert np.isnan(z[2]) and np.nanmean(z) == pytest.approx(0.0) and np.nanstd(z) == pytest.approx(1.0)
