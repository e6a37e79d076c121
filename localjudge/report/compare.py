"""Two judges on the same cases: how their scores relate and the cases where they differ most."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from localjudge import stats
from localjudge.report.rows import Row


@dataclass(frozen=True)
class Comparison:
    """Judge A against judge B on the cases of one metric both scored."""

    metric: str
    judge_a: str
    judge_b: str
    shared: int  # cases both judged
    both_scored: int
    mean_difference: float | None  # mean of A's score minus B's (0-1 scale)
    spearman: float | None
    pairs: list[tuple[str, float, float]]  # (case id, A's score, B's score) of every case both scored
    largest: list[tuple[str, float, float]]  # the `top` pairs of largest |A - B|, largest first


def compare(metric: str, a: str, rows_a: list[Row], b: str, rows_b: list[Row], top: int) -> Comparison | None:
    """Judges `a` and `b` on `metric`; None when they share no case."""
    score_b = {r.case_id: r.score for r in rows_b}
    shared = [r for r in rows_a if r.case_id in score_b]
    if not shared:
        return None
    pairs = [(r.case_id, r.score, score_b[r.case_id]) for r in shared]
    scored = [(c, float(x), float(y)) for c, x, y in pairs if x is not None and y is not None]
    diff = np.array([x - y for _, x, y in scored])  # (both_scored,)
    point = None
    if len(scored) >= stats.MIN_CORR_ITEMS:
        point = stats.correlations(np.array([x for _, x, _ in scored]), np.array([y for _, _, y in scored])).spearman
    order = np.argsort(-np.abs(diff), kind="stable")[:top]
    return Comparison(
        metric=metric,
        judge_a=a,
        judge_b=b,
        shared=len(shared),
        both_scored=len(scored),
        mean_difference=float(diff.mean()) if len(scored) else None,
        spearman=point,
        pairs=scored,
        largest=[scored[i] for i in order],
    )
