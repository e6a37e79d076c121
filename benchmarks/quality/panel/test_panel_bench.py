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


def test_rag_pair_accuracy_counts_ties_half_and_needs_both_answers_scored():
    from benchmarks.quality.panel.panel_faithfulness import rag_figures
    from localjudge.io.cases import TestCase

    cases = [
        TestCase(id=f"{p}-{y}", input="q", actual_output="a", extra={"pair": p, "label": y})
        for p in ("p1", "p2", "p3", "p4")
        for y in (1, 0)
    ]
    # p1 right, p2 a tie, p3 wrong, p4 one answer unscored
    out = rag_figures(cases, [0.9, 0.1, 0.5, 0.5, 0.2, 0.8, 0.7, None])
    assert out["pair_accuracy"] == pytest.approx(0.5) and out["scored"] == 7 and out["n"] == 8


def test_summedits_balanced_accuracy_fits_each_domains_threshold_on_the_others():
    from benchmarks.quality.panel.panel_faithfulness import DOMAINS, summedits_figures
    from localjudge.io.cases import TestCase

    cases, scores = [], []
    for d in DOMAINS:
        for y in (0, 0, 1, 1):
            extra = {"label": y, "domain": d}
            cases.append(TestCase(id=f"{d}-{len(cases)}", input="doc", actual_output="s", extra=extra))
            scores.append(y + (2.0 if d == "scitldr" else 0.0))  # scitldr reads high: the others' cut passes all
    out = summedits_figures(cases, scores)
    assert out["per_domain"]["scitldr"] == pytest.approx(0.5)
    assert all(out["per_domain"][d] == pytest.approx(1.0) for d in DOMAINS if d != "scitldr")
    assert out["balanced_accuracy"] == pytest.approx(0.9) and out["scored"] == 20


def test_subpanels_are_parsed_once_for_every_panel_study():
    import argparse

    from benchmarks.lib.common import subpanels

    parser = argparse.ArgumentParser()
    assert subpanels(parser, ["qwens=a, b"], ["a", "b", "c"]) == {"qwens": ["a", "b"]}
    with pytest.raises(SystemExit):
        subpanels(parser, ["solo=a"], ["a", "b"])
    with pytest.raises(SystemExit):
        subpanels(parser, ["odd=a,z"], ["a", "b"])
