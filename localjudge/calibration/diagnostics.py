"""Scale-use, sample-size and readiness checks on judge-vs-human scores.

Pure functions over arrays and already-computed correlations; they build report models.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from localjudge.calibration.results import (
    Readiness,
    SampleSizeCheck,
    ScaleDiagnostics,
    ScoreSummary,
)
from localjudge.stats import required_n

COMPRESSION_MIN_RHO = 0.5
"""Rank agreement above which a narrow judge spread counts as compression, not noise."""
COMPRESSION_RATIO = 0.5
"""Judge spread below this share of the human spread is compressed."""

# 65: fewest items to tell ρ = 0.7 from ρ = 0.5, one-sided α = 0.05, power 0.8.
MIN_LABELLED = required_n(0.7, 0.5, alpha=0.05, power=0.8, two_sided=False)
# 119–150: items to tell ρ = 0.8 from ρ = 0.7, one-sided and two-sided.
AIM_LOW = required_n(0.8, 0.7, alpha=0.05, power=0.8, two_sided=False)
AIM_HIGH = required_n(0.8, 0.7, alpha=0.05, power=0.8, two_sided=True)


def score_summary(scores: np.ndarray, scale: tuple[float, float] | None) -> ScoreSummary:
    """Min, max, mean and std of (n,) finite scores, also as fractions of `scale` if known."""
    low, high, mean = float(scores.min()), float(scores.max()), float(scores.mean())
    std = float(scores.std(ddof=1)) if len(scores) > 1 else 0.0
    if scale is None:
        return ScoreSummary(min=low, max=high, mean=mean, std=std)
    bottom, width = scale[0], scale[1] - scale[0]
    return ScoreSummary(
        min=low,
        max=high,
        mean=mean,
        std=std,
        scale=scale,
        min_frac=(low - bottom) / width,
        max_frac=(high - bottom) / width,
        mean_frac=(mean - bottom) / width,
        std_frac=std / width,
    )


def _iqr_over_range(scores: np.ndarray) -> float:
    width = float(np.ptp(scores))
    if width == 0:
        return 0.0
    q1, q3 = np.percentile(scores, [25, 75])
    return float(q3 - q1) / width


def scale_diagnostics(
    judge: np.ndarray,
    human: np.ndarray,
    spearman: float | None,
    judge_scale: tuple[float, float] | None = None,
    human_scale: tuple[float, float] | None = None,
) -> ScaleDiagnostics:
    """Compares how widely judge and human scores spread, and flags compression.

    With both scales known, spread is std / scale width, which catches a judge that keeps to
    the middle of its scale. Without them only the shape is comparable (IQR / observed range),
    which catches scores bunched in the middle with a few extremes but not a uniform squeeze.

    Args:
        judge: (n,) scored judge scores.
        human: (n,) human scores of the same items.
        spearman: Dataset-level Spearman ρ of these items (None when undefined).
        judge_scale: (low, high) of the judge scale, if known.
        human_scale: (low, high) of the human scale, if known.
    """
    judge_stats = score_summary(judge, judge_scale)
    human_stats = score_summary(human, human_scale)
    basis: Literal["scale", "iqr_over_range"]
    if judge_stats.std_frac is not None and human_stats.std_frac is not None:
        basis, judge_spread, human_spread = "scale", judge_stats.std_frac, human_stats.std_frac
    else:
        basis, judge_spread, human_spread = (
            "iqr_over_range",
            _iqr_over_range(judge),
            _iqr_over_range(human),
        )
    compressed = (
        spearman is not None and spearman >= COMPRESSION_MIN_RHO and judge_spread < COMPRESSION_RATIO * human_spread
    )
    return ScaleDiagnostics(
        judge=judge_stats,
        human=human_stats,
        spread_basis=basis,
        judge_spread=judge_spread,
        human_spread=human_spread,
        compressed=compressed,
    )


def sample_size_check(n_labelled: int, min_items: int = MIN_LABELLED) -> SampleSizeCheck:
    """Warns when there are too few labelled items to judge the judge.

    Args:
        n_labelled: Items with both a judge and a human score.
        min_items: The threshold; by default `MIN_LABELLED` (65).
    """
    sufficient = n_labelled >= min_items
    warning = None
    if not sufficient:
        warning = (
            f"only {n_labelled} labelled items (< {min_items}): too few to tell ρ = 0.7 from "
            f"ρ = 0.5 (one-sided α = 0.05, power 0.8); aim for {AIM_LOW}–{AIM_HIGH}, enough to "
            "tell ρ = 0.8 from ρ = 0.7"
        )
    return SampleSizeCheck(
        n_labelled=n_labelled,
        min_recommended=min_items,
        aim_low=AIM_LOW,
        aim_high=AIM_HIGH,
        sufficient=sufficient,
        warning=warning,
    )


def readiness(
    rho: float | None,
    ci_low: float | None,
    *,
    summary_level: bool,
    target: float,
    sample: SampleSizeCheck,
) -> Readiness:
    """READY to gate releases when ρ ≥ target and there are enough labelled items.

    Args:
        rho: Spearman ρ to judge by: summary level when groups are given, else dataset level.
        ci_low: Lower bound of its interval, reported as a caveat when below the target.
        summary_level: Whether `rho` is the summary-level ρ.
        target: The ρ required.
        sample: The sample-size check.
    """
    level = "summary-level" if summary_level else "dataset-level"
    reasons = []
    if rho is None:
        reasons.append(f"{level} Spearman ρ is undefined (constant scores or no usable group)")
    elif rho < target:
        reasons.append(f"{level} Spearman ρ = {rho:.3f} < target {target:.2f}")
    if not sample.sufficient:
        reasons.append(f"only {sample.n_labelled} labelled items (< {sample.min_recommended})")
    ready = not reasons
    if ready:
        line = (
            f"READY to gate releases: {level} Spearman ρ = {rho:.3f} ≥ target {target:.2f} "
            f"on {sample.n_labelled} labelled items"
        )
        if ci_low is not None and ci_low < target:
            caveat = f"CI lower bound {ci_low:.3f} is below the target; more labels firm it up"
            reasons.append(caveat)
            line += f" (caveat: {caveat})"
    else:
        line = "NOT READY: " + "; ".join(reasons)
    return Readiness(
        ready=ready,
        statistic="summary_spearman" if summary_level else "dataset_spearman",
        value=rho,
        target=target,
        reasons=reasons,
        line=line,
    )
