"""Hybrid records: a fitted combination of component metrics' scores, case by case."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from localjudge.io.cases import TestCase
from localjudge.metrics.spec import HybridMetric
from localjudge.runs.records import ResultRecord, unscored


def hybrid_records(
    metric: HybridMetric,
    cases: Sequence[TestCase],
    records: Mapping[tuple[str, str], ResultRecord],
    base: Callable[[TestCase], dict],
) -> list[ResultRecord]:
    """One record per case from its component records (`records` keyed by (case id, metric name))."""
    names = [m.name for m in metric.component_metrics]
    lo, hi = metric.human_scale
    out = []
    for case in cases:
        parts = [records[(case.id, n)] for n in names]
        values = [getattr(r, c.field) for r, c in zip(parts, metric.components)]
        if any(v is None for v in values):
            why = next(f"{n}: {r.unscored_reason or 'no score'}" for n, r, v in zip(names, parts, values) if v is None)
            out.append(unscored(base(case), f"a component is unscored ({why})"))
            continue
        raw = metric.intercept + math.fsum(c.weight * (v - c.mean) / c.std for c, v in zip(metric.components, values))
        score = min(1.0, max(0.0, (raw - lo) / (hi - lo)))
        out.append(
            ResultRecord(
                **base(case),
                score=score,
                raw_score=raw,
                distribution=None,
                valid_mass=None,
                passed=None if metric.threshold is None else score >= metric.threshold,
                hybrid={n: float(v) for n, v in zip(names, values)},
            )
        )
    return out
