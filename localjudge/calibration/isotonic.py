"""Isotonic (monotone) mapping of judge scores onto the human scale, and its held-out check.

Pool-adjacent-violators in pure numpy (no scikit-learn). The mapping is fitted on a
calibration split and judged on the held-out split, so the "after" numbers are not flattered
by fitting and scoring on the same items.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

from localjudge.calibration.options import CalibrationOptions
from localjudge.errors import DataError
from localjudge.labels import grouped_split
from localjudge.stats import correlations

MIN_SPLIT_ITEMS = 40
"""Fewest scored items each split needs before an isotonic fit is worth reporting."""


def pav(y: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Weighted least-squares non-decreasing fit to `y`, in the given order.

    Args:
        y: (n,) values, already ordered by the predictor.
        weights: (n,) positive weights; all 1 when None.

    Returns:
        (n,) non-decreasing values minimising Σ w·(y − fit)².

    Examples:
        >>> pav(np.array([1.0, 3.0, 2.0, 4.0])).tolist()
        [1.0, 2.5, 2.5, 4.0]
    """
    y = np.asarray(y, float)
    weights = np.ones_like(y) if weights is None else np.asarray(weights, float)
    means: list[float] = []
    totals: list[float] = []
    counts: list[int] = []
    for value, weight in zip(y, weights):
        means.append(float(value))
        totals.append(float(weight))
        counts.append(1)
        # merge the last two blocks while they violate monotonicity
        while len(means) > 1 and means[-2] > means[-1]:
            m2, w2, c2 = means.pop(), totals.pop(), counts.pop()
            m1, w1, c1 = means.pop(), totals.pop(), counts.pop()
            means.append((m1 * w1 + m2 * w2) / (w1 + w2))
            totals.append(w1 + w2)
            counts.append(c1 + c2)
    return np.repeat(means, counts)


@dataclass(frozen=True)
class IsotonicMap:
    """A fitted monotone step mapping, linearly interpolated between the fitted judge scores."""

    knots: np.ndarray  # (k,) increasing distinct judge scores seen in the fit
    values: np.ndarray  # (k,) non-decreasing fitted human scores at the knots

    def __call__(self, judge: np.ndarray) -> np.ndarray:
        """Maps judge scores (n,) to the human scale (n,); clamped outside the fitted range."""
        return np.interp(np.asarray(judge, float), self.knots, self.values)


def fit_isotonic(judge: np.ndarray, human: np.ndarray) -> IsotonicMap:
    """Fits the monotone mapping judge → human that minimises squared error.

    Items with tied judge scores are pooled (mean human score, weighted by count) so every
    distinct judge score gets exactly one fitted value.

    Args:
        judge: (n,) judge scores, all finite.
        human: (n,) human scores, all finite.
    """
    knots, inverse, counts = np.unique(judge, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=np.asarray(human, float))  # (k,)
    return IsotonicMap(knots, pav(sums / counts, counts.astype(float)))


class FitScores(NamedTuple):
    """Agreement of (mapped) judge scores with human scores on the held-out split."""

    spearman: float | None
    pearson: float | None
    mae: float


class FitOutcome(NamedTuple):
    """Held-out agreement before and after the isotonic mapping."""

    n_calibration: int
    n_heldout: int
    before: FitScores
    after: FitScores
    before_mapping: Literal["linear_scale", "identity"]


def evaluate_isotonic(
    judge: np.ndarray,
    human: np.ndarray,
    groups: np.ndarray | None = None,
    settings: CalibrationOptions | None = None,
) -> FitOutcome:
    """Fits an isotonic mapping on one split and compares before/after on the other.

    The split gives `settings.split` of the items (or groups) to the fit, drawn with `settings.seed`.

    "Before" MAE maps judge scores linearly from the judge scale to the human scale when both
    scales are known; otherwise it compares raw scores, which only makes sense on one scale.

    Raises:
        DataError: If either split has fewer than `MIN_SPLIT_ITEMS` items.
    """
    settings = settings or CalibrationOptions()
    split = grouped_split(groups, settings.split, settings.seed, len(judge))
    n_cal, n_held = len(split.first), len(split.rest)
    if min(n_cal, n_held) < MIN_SPLIT_ITEMS:
        raise DataError(
            f"too few items for --fit isotonic: the calibration split has {n_cal} and the "
            f"held-out split {n_held} scored items; each needs at least {MIN_SPLIT_ITEMS} "
            "(label more items, adjust --split, or drop --fit)"
        )
    mapping = fit_isotonic(judge[split.first], human[split.first])
    held_judge, held_human = judge[split.rest], human[split.rest]

    before_mapping: Literal["linear_scale", "identity"] = "identity"
    baseline = held_judge
    if settings.judge_scale is not None and settings.human_scale is not None:
        (jl, jh), (hl, hh) = settings.judge_scale, settings.human_scale
        baseline = hl + (held_judge - jl) / (jh - jl) * (hh - hl)
        before_mapping = "linear_scale"

    def scores(predicted: np.ndarray) -> FitScores:
        point = correlations(predicted, held_human)
        return FitScores(point.spearman, point.pearson, float(np.mean(abs(predicted - held_human))))

    return FitOutcome(n_cal, n_held, scores(baseline), scores(mapping(held_judge)), before_mapping)
