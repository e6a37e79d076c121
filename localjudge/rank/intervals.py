"""Intervals on each item's score and rank from the Fisher information (a Laplace approximation).

The posterior of the strengths is approximated by N(θ̂, φ̂·I⁻¹), I the information matrix of the
fit and φ̂ the dispersion of its readings (`bradley_terry.Strengths`: how far a judge's readings
stray from the model; 1 where too few readings tell). Drawing strengths from it and computing every draw's scores and
ranks gives percentile intervals on both, and the probability that two items are in the wrong
order, which `adaptive` uses to choose the next comparisons. The draws are seeded: the same fit
always gives the same intervals.

Pure maths: arrays in, arrays out.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from localjudge.rank.bradley_terry import Strengths, ranks, win_scores

DRAWS = 2000
"""Draws from the Laplace approximation behind each interval."""


class ItemIntervals(NamedTuple):
    """Percentile intervals of each item of a group."""

    score_low: np.ndarray  # (n,) lower end of the score's interval (0–1)
    score_high: np.ndarray  # (n,)
    rank_low: np.ndarray  # (n,) best rank in the interval (smallest number)
    rank_high: np.ndarray  # (n,) worst rank in the interval


def covariance(fit: Strengths) -> np.ndarray:
    """(n, n) approximate posterior covariance of the strengths: the inverse information times the dispersion."""
    return fit.dispersion * np.linalg.inv(fit.information)


def item_intervals(fit: Strengths, level: float = 0.95, draws: int = DRAWS, seed: int = 0) -> ItemIntervals:
    """Percentile intervals of scores and ranks over draws from N(θ̂, φ̂·I⁻¹).

    Args:
        fit: a group's fitted strengths.
        level: coverage of each interval.
        draws: number of draws.
        seed: seed of the draws.
    """
    n = len(fit.theta)
    rng = np.random.default_rng([seed, 0xB7])
    # (draws, n): θ̂ + L z with L the Cholesky factor of the covariance
    chol = np.linalg.cholesky(covariance(fit))
    theta = fit.theta + rng.standard_normal((draws, n)) @ chol.T
    scores, rk = win_scores(theta), ranks(theta)  # (draws, n) each
    lo, hi = 100 * (1 - level) / 2, 100 * (1 + level) / 2
    return ItemIntervals(
        score_low=np.percentile(scores, lo, axis=0),
        score_high=np.percentile(scores, hi, axis=0),
        rank_low=np.percentile(rk, lo, axis=0, method="lower").astype(int),
        rank_high=np.percentile(rk, hi, axis=0, method="higher").astype(int),
    )


def misorder_probability(fit: Strengths, cov: np.ndarray | None = None) -> np.ndarray:
    """(n, n) probability that each pair's fitted order is the wrong one: Φ(−|θ_i − θ_j| / sd(θ_i − θ_j)).

    0.5 for two items the data cannot tell apart, near 0 for a settled pair; the diagonal is 0.
    """
    cov = covariance(fit) if cov is None else cov
    var = np.diag(cov)  # (n,)
    sd = np.sqrt(np.maximum(var[:, None] + var[None, :] - 2 * cov, 1e-300))  # (n, n) sd of θ_i − θ_j
    z = np.abs(fit.theta[:, None] - fit.theta[None, :]) / sd  # (n, n)
    erfc = np.vectorize(math.erfc)
    out = 0.5 * erfc(z / math.sqrt(2))  # Φ(−z)
    np.fill_diagonal(out, 0.0)
    return out
