"""The rank study's own helpers: the system-level τ and the simulated judge loop."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau

from benchmarks.quality.rank.rank_simulation import N, adaptive
from benchmarks.quality.rank.rank_summeval import mean_over_dimensions, pairwise_metric, system_tau


def test_system_tau_is_one_when_the_system_means_agree():
    systems = ["a", "b", "c"] * 4
    docs = [d for d in "wxyz" for _ in range(3)]
    human = [3.0, 2.0, 1.0] * 4
    scores = [0.9, 0.5, 0.1] * 4
    out = system_tau(scores, human, systems, docs, n_boot=50)
    assert out["tau"] == pytest.approx(1.0) and out["systems"] == 3
    assert system_tau([0.1, 0.5, 0.9] * 4, human, systems, docs, n_boot=50)["tau"] == pytest.approx(-1.0)


def test_the_simulated_judge_without_noise_is_ranked_almost_exactly():
    truth = np.linspace(2, -2, N)
    fit = adaptive(truth, np.zeros((N, N)), 32, seed=0)
    assert kendalltau(fit.theta, truth)[0] > 0.95


def test_the_pairwise_metric_of_each_dimension():
    assert pairwise_metric("consistency").name == "consistency_pairwise"


def test_the_mean_over_dimensions_averages_each_scorer_and_skips_one_dimension():
    def row(rho: float, seconds: float) -> dict:
        return {"spearman": rho, "kendall_tau_b": rho / 2, "system": {"tau": None}, "seconds": seconds}

    dims = {"coherence": {"geval": row(0.2, 10), "rank@2": row(0.0, 30)}, "fluency": {"geval": row(0.4, 20)}}
    assert mean_over_dimensions({"coherence": dims["coherence"]}) == []
    lines = mean_over_dimensions(dims)
    assert lines[-1] == "| geval | 0.300 | 0.150 | – | 30 |"  # rank@2 is not in every dimension: no row
