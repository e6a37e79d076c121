"""Per metric and judge: the mean score with its bootstrap interval, the share unscored and why, a histogram."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from localjudge import stats
from localjudge.report.options import ReportOptions
from localjudge.report.rows import Row


@dataclass(frozen=True)
class Histogram:
    """Counts of scores in equal bins between the lowest and the highest score seen."""

    low: float
    high: float
    counts: list[int]  # (bins,)


@dataclass(frozen=True)
class GroupSummary:
    """What one judge made of one metric's cases."""

    metric: str
    judge: str
    kind: str
    n: int
    scored: int
    mean: float | None  # mean score (0-1) of the scored cases
    ci: tuple[float, float] | None  # percentile bootstrap interval of the mean
    pass_rate: float | None  # of the scored cases with a pass mark
    mean_valid_mass: float | None
    unscored_reasons: dict[str, int]  # reason -> cases, most frequent first
    histogram: Histogram | None
    outcomes: list[str]  # the distribution's outcomes (scores or labels), in order


def group_key(row: Row) -> tuple[str, str]:
    """The (metric, judge) a row is summarised under."""
    return row.metric, row.judge


def summarise(metric: str, judge: str, rows: list[Row], settings: ReportOptions) -> GroupSummary:
    """Summarises one metric's rows by one judge (`rows` all share both)."""
    scores = np.array([r.score for r in rows if r.score is not None], dtype=float)  # (scored,)
    ci = None
    if len(scores) >= 2 and settings.n_bootstrap > 0:
        means = stats.resample_means(scores, settings.n_bootstrap, settings.seed)  # (B,)
        interval = stats.percentile_interval(means, settings.ci_level)
        ci = None if interval is None else (interval.low, interval.high)
    marked = [r.outcome == "pass" for r in rows if r.outcome in ("pass", "fail")]
    masses = [r.valid_mass for r in rows if r.valid_mass is not None]
    reasons = Counter(r.unscored_reason or "no reason recorded" for r in rows if r.score is None)
    return GroupSummary(
        metric=metric,
        judge=judge,
        kind=rows[0].kind,
        n=len(rows),
        scored=len(scores),
        mean=float(scores.mean()) if len(scores) else None,
        ci=ci,
        pass_rate=sum(marked) / len(marked) if marked else None,
        mean_valid_mass=float(np.mean(masses)) if masses else None,
        unscored_reasons=dict(reasons.most_common()),
        histogram=histogram(scores, settings.bins) if len(scores) else None,
        outcomes=outcomes(rows),
    )


def histogram(scores: np.ndarray, bins: int) -> Histogram:
    """Counts of `scores` (n,) in `bins` equal bins from their lowest to their highest."""
    low, high = float(scores.min()), float(scores.max())
    if high == low:  # one value: one full bin in the middle, the range widened around it
        counts = [0] * bins
        counts[bins // 2] = len(scores)
        return Histogram(low - 0.5 / bins, high + 0.5 / bins, counts)
    counts_array, _ = np.histogram(scores, bins=bins, range=(low, high))
    return Histogram(low, high, [int(c) for c in counts_array])


def outcomes(rows: list[Row]) -> list[str]:
    """Every outcome the rows' distributions name, numeric ones in numeric order, else as first seen."""
    seen: dict[str, None] = {}
    for r in rows:
        for key in r.distribution or ():
            seen.setdefault(key)
    names = list(seen)
    try:
        return sorted(names, key=float)
    except ValueError:
        return names
