"""The page's data: every row in columns (numbers rounded, strings listed once), the summaries, the agreements.

Columns keep a page of 50,000 records to a few megabytes and let the page filter them in a loop
over arrays; a case's fields are listed once however many metrics and judges judged it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from localjudge.io.cases import TestCase
from localjudge.report.agreement import Agreement
from localjudge.report.compare import Comparison
from localjudge.report.rows import Run
from localjudge.report.summary import GroupSummary

MOST_POINTS = 4000
"""Points a scatter draws at most (evenly chosen); the page says how many of how many."""


def _r(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else round(x, digits)


class _Index:
    """Strings listed once; a row holds their index."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._at: dict[str, int] = {}

    def __call__(self, item: str) -> int:
        at = self._at.get(item)
        if at is None:
            at = self._at[item] = len(self.items)
            self.items.append(item)
        return at


def _group_data(g: GroupSummary) -> dict[str, Any]:
    return {
        "metric": g.metric,
        "judge": g.judge,
        "kind": g.kind,
        "n": g.n,
        "scored": g.scored,
        "mean": _r(g.mean),
        "ci": None if g.ci is None else [_r(g.ci[0]), _r(g.ci[1])],
        "pass_rate": _r(g.pass_rate),
        "valid_mass": _r(g.mean_valid_mass, 3),
        "unscored": g.unscored_reasons,
        "hist": None
        if g.histogram is None
        else {"low": _r(g.histogram.low), "high": _r(g.histogram.high), "counts": g.histogram.counts},
        "outcomes": g.outcomes,
    }


def _evenly(items: list, most: int) -> list:
    if len(items) <= most:
        return items
    step = len(items) / most
    return [items[int(k * step)] for k in range(most)]


def payload(
    runs: Sequence[Run],
    groups: Sequence[GroupSummary],
    agreements: Sequence[Agreement],
    comparisons: Sequence[Comparison],
    cases: Sequence[TestCase] | None,
    meta: dict[str, Any],
) -> dict[str, Any]:
    """Everything the page shows, as JSON-ready data (see the module docstring for the layout)."""
    group_at = {(g.metric, g.judge): k for k, g in enumerate(groups)}
    outcomes_of = [g.outcomes for g in groups]
    case_index, reasons, outcome_names = _Index(), _Index(), _Index()
    fields: list[dict[str, Any]] = []
    columns: dict[str, list[Any]] = {k: [] for k in ("case", "group", "score", "valid", "outcome", "reason", "dist")}
    details: dict[str, Any] = {}
    for row in (r for run in runs for r in run.rows):
        c = case_index(row.case_id)
        if c == len(fields):
            fields.append(dict(row.extra))
        g = group_at[(row.metric, row.judge)]
        columns["case"].append(c)
        columns["group"].append(g)
        columns["score"].append(_r(row.score))
        columns["valid"].append(_r(row.valid_mass, 3))
        columns["outcome"].append(outcome_names(row.outcome))
        columns["reason"].append(-1 if row.unscored_reason is None else reasons(row.unscored_reason))
        dist = row.distribution
        columns["dist"].append(None if not dist else [round(1000 * dist.get(o, 0.0)) for o in outcomes_of[g]])
        if row.detail:
            details[str(len(columns["case"]) - 1)] = row.detail
    by_id = {c.id: c for c in cases or ()}
    for k, case_id in enumerate(case_index.items):
        given = by_id.get(case_id)
        if given is not None:
            own = given.model_dump(exclude={"id", "extra"}, exclude_none=True)
            fields[k] = {**own, **given.extra, **fields[k]}
    return {
        **meta,
        "groups": [_group_data(g) for g in groups],
        "cases": case_index.items,
        "fields": fields,
        "reasons": reasons.items,
        "outcome_names": outcome_names.items,
        "rows": columns,
        "details": details,
        "agreements": [_agreement_data(a, case_index) for a in agreements],
        "comparisons": [_comparison_data(c, case_index) for c in comparisons],
    }


def _agreement_data(a: Agreement, case_index: _Index) -> dict[str, Any]:
    drawn = _evenly([p for p in a.points if p[0] is not None], MOST_POINTS)
    rho = a.report.dataset.spearman if a.report is not None else None
    return {
        "metric": a.metric,
        "judge": a.judge,
        "human": a.human_field,
        "judge_field": a.judge_field,
        "points": [[_r(j), _r(h), case_index(c)] for j, h, c in drawn],
        "total": len(a.points),
        "unscored": sum(p[0] is None for p in a.points),
        "rho": None if rho is None else [_r(rho.value, 3), _r(rho.ci_low, 3), _r(rho.ci_high, 3)],
        "verdict": a.report.readiness.line if a.report is not None else None,
        "text": a.text,
    }


def _comparison_data(c: Comparison, case_index: _Index) -> dict[str, Any]:
    return {
        "metric": c.metric,
        "a": c.judge_a,
        "b": c.judge_b,
        "shared": c.shared,
        "both": c.both_scored,
        "mean_difference": _r(c.mean_difference),
        "spearman": _r(c.spearman, 3),
        "points": [[_r(x), _r(y)] for _, x, y in _evenly(c.pairs, MOST_POINTS)],
        "largest": [[case_index(k), _r(x), _r(y)] for k, x, y in c.largest],
    }
