"""Pooling the members' records of each case into one panel record, metric by metric.

The weights of a metric are chosen over all its cases at once (`weights`), then every case's
reading is the weighted mean of its members' (`weights.pool`): the score (for a comparison,
P(output 1 better), pooled before any decision), the raw score, and the distribution when the
members share their outcomes. A case some member left unscored is pooled from the members that scored it when they
are at least the quorum (default: every member), their weights renormalised (`case_weights`);
else it gets no pooled score and the reason names the member. Every reading is kept either way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from localjudge.kinds.records import ResultRecord
from localjudge.panel.records import MemberReading, Method, PanelRecord, PanelWeights
from localjudge.panel.weights import Weights, agreement_weights, case_weights, mean_weights, pool
from localjudge.stats.numbers import finite
from localjudge.version import __version__


def member_scores(columns: Sequence[Sequence[ResultRecord]]) -> np.ndarray:
    """(n, M) member scores of n cases, NaN where a member left a case unscored."""
    return np.array([[np.nan if r.score is None else r.score for r in col] for col in columns], dtype=float).T.reshape(
        len(columns[0]) if columns else 0, len(columns)
    )


def member_raw_scores(columns: Sequence[Sequence[ResultRecord]]) -> np.ndarray:
    """(n, M) member raw scores of n cases, NaN where a member left a case unscored or gave no raw score."""
    return np.array(
        [[np.nan if r.score is None or r.raw_score is None else r.raw_score for r in col] for col in columns],
        dtype=float,
    ).T.reshape(len(columns[0]) if columns else 0, len(columns))


def member_scores_of(records: Sequence[PanelRecord]) -> np.ndarray:
    """(n, M) member scores of n panel records, NaN where a member left a case unscored."""
    return np.array(
        [[np.nan if m.score is None else m.score for m in r.members] for r in records], dtype=float
    ).reshape(len(records), len(records[0].members) if records else 0)


def choose_weights(scores: np.ndarray, method: Method, fitted: Sequence[float] | None = None) -> Weights:
    """The weights of one metric's members over its cases (see `weights`)."""
    if method == "mean":
        return mean_weights(scores)
    if method == "agreement":
        return agreement_weights(scores)
    assert fitted is not None, "a fitted panel needs its weights"
    return mean_weights(scores)._replace(weights=np.asarray(fitted, dtype=float))


def pool_metric(
    members: Mapping[str, Sequence[ResultRecord]],
    method: Method,
    weights_file: PanelWeights | None = None,
    quorum: int | None = None,
) -> tuple[list[PanelRecord], Weights]:
    """The panel records of one metric and the weights used.

    Args:
        members: judge name -> that member's records of the metric, all in the same case order.
        method: how the members are weighed.
        weights_file: the fitted weights, for method "fitted".
        quorum: members that must score a case for it to be pooled; None: every member.
    """
    names = list(members)
    columns = [members[n] for n in names]
    ids = [r.case_id for r in columns[0]]
    assert all([r.case_id for r in col] == ids for col in columns), "members' records in the same case order"
    metric = columns[0][0].metric if ids else ""
    fitted = weights_file.for_metric(metric, names) if method == "fitted" and weights_file and ids else None
    scores = member_scores(columns)  # (n, M)
    chosen = choose_weights(scores, method, fitted if method == "fitted" else None) if ids else mean_weights(scores)
    w = chosen.weights
    pooled = pool(scores, w, quorum)  # (n,) NaN where fewer than the quorum scored
    raws = member_raw_scores(columns)  # (n, M)
    raw = pool(raws, w, quorum)  # (n,) pooled as the scores where every pooled member has a raw score
    raw[np.any(np.isnan(raws) != np.isnan(scores), axis=1)] = np.nan
    out = []
    for k, (case_id, s, r) in enumerate(zip(ids, map(finite, pooled), map(finite, raw), strict=True)):
        out.append(_pooled(case_id, [col[k] for col in columns], names, w, method, quorum, s, r))
    return out, chosen


def _pooled(
    case_id: str,
    recs: list[ResultRecord],
    names: list[str],
    panel_w: np.ndarray,
    method: Method,
    quorum: int | None,
    score: float | None,
    raw: float | None,
) -> PanelRecord:
    """The panel record of one case, its pooled score and raw score given (`pool`)."""
    first = recs[0]
    scored = np.array([r.score is not None for r in recs])  # (M,)
    w = case_weights(scored, panel_w, quorum)
    readings = [
        MemberReading(
            judge=n, weight=float(wi), score=r.score, raw_score=r.raw_score, distribution=r.distribution,
            valid_mass=r.valid_mass, unscored_reason=r.unscored_reason,
        )
        for n, r, wi in zip(names, recs, panel_w if w is None else w, strict=True)
    ]  # fmt: skip
    spread = None
    dist = mode = None
    reason = None
    assert (w is None) == (score is None), "pooled where the quorum was met"
    if w is None:
        missing = [n for n, r in zip(names, recs, strict=True) if r.score is None]
        why = next(r.unscored_reason for r in recs if r.score is None)
        reason = f"panel member {', '.join(missing)} left it unscored: {why}"
        if quorum is not None:
            reason = f"{int(scored.sum())} of {len(recs)} members scored it, fewer than the quorum {quorum}; " + reason
    else:
        pooled = [(r, wi) for r, wi in zip(recs, w, strict=True) if r.score is not None]
        pw = np.array([wi for _, wi in pooled], dtype=float)  # (k,) summing to 1
        s = np.array([r.score for r, _ in pooled], dtype=float)  # (k,)
        spread = float(s.max() - s.min())
        dists = [r.distribution for r, _ in pooled]
        if all(d is not None for d in dists) and len({tuple(sorted(d)) for d in dists if d is not None}) == 1:
            keys = list(dists[0] or {})
            dist = {k: float(sum(wi * (d or {})[k] for wi, d in zip(pw, dists, strict=True))) for k in keys}
            mode = max(dist, key=dist.__getitem__)
    threshold = first.threshold
    return PanelRecord(
        case_id=case_id, metric=first.metric, kind=first.kind, method=method, score=score,
        pooled=0 if w is None else int(scored.sum()), raw_score=raw,
        distribution=dist, mode=mode, threshold=threshold,
        passed=None if score is None or threshold is None else score >= threshold,
        spread=spread, members=readings, unscored_reason=reason, extra=first.extra, metric_spec=first.metric_spec,
        judges=[r.judge for r in recs], localjudge_version=__version__,
    )  # fmt: skip
