"""Correlation of two score lists: point estimates, bootstrap intervals, summary level, power.

Point estimates are exactly scipy's (`spearmanr`, `pearsonr`, `kendalltau(variant="b")`). A
correlation that is undefined (fewer than `MIN_CORR_ITEMS` items, or either list constant) is
`None`, never NaN and never 0.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import stats

from localjudge.errors import ConfigError
from localjudge.stats.bootstrap import bootstrap_indices, resample_means
from localjudge.stats.estimates import Interval, percentile_interval

MIN_CORR_ITEMS = 3
"""Fewest items a correlation is computed on; with 2 items Pearson is always ±1."""


class PointCorrelations(NamedTuple):
    """Spearman ρ, Pearson r and Kendall τ-b of one pair of score lists (None = undefined)."""

    spearman: float | None
    pearson: float | None
    kendall_tau_b: float | None


class CorrelationIntervals(NamedTuple):
    """Percentile intervals of Spearman, Pearson and Kendall τ-b (None = no interval)."""

    spearman: Interval | None
    pearson: Interval | None
    kendall_tau_b: Interval | None


class SummaryLevel(NamedTuple):
    """Per-group correlations averaged over groups (the SummEval summary-level convention)."""

    means: PointCorrelations
    per_group: np.ndarray  # (G_used, 3) spearman, pearson, kendall of each usable group
    n_used: int
    n_skipped: int


def _undefined(judge: np.ndarray, human: np.ndarray) -> bool:
    # ptp, not std: float rounding makes the std of a constant list slightly non-zero
    return len(judge) < MIN_CORR_ITEMS or np.ptp(judge) == 0 or np.ptp(human) == 0


def correlations(judge: np.ndarray, human: np.ndarray) -> PointCorrelations:
    """Spearman ρ, Pearson r and Kendall τ-b, exactly as scipy computes them.

    Args:
        judge: (n,) judge scores, all finite.
        human: (n,) human scores, all finite.

    Returns:
        The three coefficients; all None when fewer than 3 items or either list is constant.

    Examples:
        >>> correlations(np.array([1.0, 2, 3]), np.array([2.0, 4, 5])).spearman
        1.0
    """
    judge, human = np.asarray(judge, float), np.asarray(human, float)
    assert judge.shape == human.shape and judge.ndim == 1
    if _undefined(judge, human):
        return PointCorrelations(None, None, None)
    return PointCorrelations(
        float(stats.spearmanr(judge, human).statistic),
        float(stats.pearsonr(judge, human).statistic),
        float(stats.kendalltau(judge, human, variant="b").statistic),
    )


def _fast_correlations(judge: np.ndarray, human: np.ndarray) -> tuple[float, float, float]:
    """Same coefficients for bootstrap replicates; NaN when undefined (filtered by the caller)."""
    if _undefined(judge, human):
        return math.nan, math.nan, math.nan

    def pearson(x: np.ndarray, y: np.ndarray) -> float:
        xc, yc = x - x.mean(), y - y.mean()
        return float(xc @ yc / math.sqrt((xc @ xc) * (yc @ yc)))

    spearman = pearson(stats.rankdata(judge), stats.rankdata(human))
    kendall = float(stats.kendalltau(judge, human, variant="b").statistic)
    return spearman, pearson(judge, human), kendall


def bootstrap_correlations(
    judge: np.ndarray,
    human: np.ndarray,
    groups: np.ndarray | None = None,
    *,
    n_bootstrap: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> CorrelationIntervals:
    """Percentile bootstrap intervals of dataset-level Spearman, Pearson and Kendall τ-b.

    Args:
        judge: (n,) judge scores, all finite.
        human: (n,) human scores, all finite.
        groups: (n,) group ids to resample whole groups (cluster bootstrap), or None.
        n_bootstrap: Number of resamples; 0 gives no intervals.
        seed: Random seed.
        level: Coverage of the interval, e.g. 0.95.

    Returns:
        One interval per coefficient; None when fewer than half of the resamples give a
        defined value.
    """
    reps = np.array(
        [_fast_correlations(judge[idx], human[idx]) for idx in bootstrap_indices(len(judge), groups, n_bootstrap, seed)]
    ).reshape(n_bootstrap, 3)  # (B, 3)
    return CorrelationIntervals(*(percentile_interval(reps[:, k], level) for k in range(3)))


def summary_level(judge: np.ndarray, human: np.ndarray, groups: np.ndarray) -> SummaryLevel:
    """Correlation within each group, averaged over groups.

    Groups where either list is constant or that have fewer than 3 items have no defined
    correlation; they are skipped and counted, as in SummEval.

    Args:
        judge: (n,) judge scores, all finite.
        human: (n,) human scores, all finite.
        groups: (n,) group id of each item.
    """
    per_group = []
    for g in np.unique(groups):
        in_g = groups == g
        point = correlations(judge[in_g], human[in_g])
        if point.spearman is not None:
            per_group.append(point)
    n_skipped = len(np.unique(groups)) - len(per_group)
    table = np.array(per_group, dtype=float).reshape(len(per_group), 3)  # (G_used, 3)
    if len(per_group) == 0:
        return SummaryLevel(PointCorrelations(None, None, None), table, 0, n_skipped)
    means = PointCorrelations(*(float(v) for v in table.mean(axis=0)))
    return SummaryLevel(means, table, len(per_group), n_skipped)


def bootstrap_summary_level(
    per_group: np.ndarray, *, n_bootstrap: int = 1000, seed: int = 0, level: float = 0.95
) -> CorrelationIntervals:
    """Percentile intervals of summary-level means, resampling the usable groups.

    Args:
        per_group: (G_used, 3) per-group Spearman, Pearson, Kendall from `summary_level`.
        n_bootstrap: Number of resamples; 0 gives no intervals.
        seed: Random seed.
        level: Coverage of the interval.
    """
    if len(per_group) < 2 or n_bootstrap == 0:
        return CorrelationIntervals(None, None, None)
    means = resample_means(per_group, n_bootstrap, seed)  # (B, 3)
    return CorrelationIntervals(*(percentile_interval(means[:, k], level) for k in range(3)))


def required_n(
    rho_alt: float = 0.8,
    rho_null: float = 0.5,
    alpha: float = 0.05,
    power: float = 0.8,
    *,
    two_sided: bool = True,
) -> int:
    """Items needed to tell correlation `rho_alt` from `rho_null` (Fisher-z power analysis).

    n = ((z_α + z_power) / (atanh(ρ_alt) − atanh(ρ_null)))² + 3, rounded up, with
    z_α = z_{1−α/2} two-sided or z_{1−α} one-sided. It uses the Pearson sampling variance
    1/(n−3) of Fisher's z, a slight underestimate for Spearman's ρ.

    Examples:
        >>> required_n(0.7, 0.5, two_sided=False)
        65
        >>> required_n(0.8, 0.7), required_n(0.8, 0.7, two_sided=False)
        (150, 119)
    """
    if not (-1 < rho_alt < 1 and -1 < rho_null < 1) or rho_alt == rho_null:
        raise ConfigError("required_n needs two different correlations strictly inside (-1, 1)")
    if not (0 < alpha < 1 and 0 < power < 1):
        raise ConfigError("required_n needs alpha and power strictly between 0 and 1")
    z_alpha = stats.norm.ppf(1 - alpha / 2 if two_sided else 1 - alpha)
    effect = math.atanh(rho_alt) - math.atanh(rho_null)
    n = ((z_alpha + stats.norm.ppf(power)) / effect) ** 2 + 3
    return math.ceil(n - 1e-9)  # tolerance: an exact integer must not round up
