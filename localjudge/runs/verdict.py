"""Verdict records: a fitted verdict applied to its components' scores, case by case."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from localjudge.calibration.logistic import sigmoid
from localjudge.io.cases import TestCase
from localjudge.metrics.verdict_spec import VerdictMetric
from localjudge.runs.records import ResultRecord, unscored

VERDICT_VERSION = "verdict-v1"


def verdict_records(
    metric: VerdictMetric,
    cases: Sequence[TestCase],
    records: Mapping[tuple[str, str], ResultRecord],
    base: Callable[[TestCase], dict],
) -> list[ResultRecord]:
    """One record per case from its component records (`records` keyed by (case id, metric name)).

    score = P(acceptable), raw_score = its log-odds, passed = score >= the fitted threshold; a case
    with an unscored component is unscored, naming it.
    """
    names = [m.name for m in metric.component_metrics]
    out = []
    for case in cases:
        parts = [records[(case.id, n)] for n in names]
        values = [getattr(r, c.field) for r, c in zip(parts, metric.components)]
        if any(v is None for v in values):
            why = next(f"{n}: {r.unscored_reason or 'no score'}" for n, r, v in zip(names, parts, values) if v is None)
            out.append(unscored(base(case), f"a component is unscored ({why})"))
            continue
        logit = metric.intercept + math.fsum(c.weight * (v - c.mean) / c.std for c, v in zip(metric.components, values))
        p = float(sigmoid(np.array(logit)))
        out.append(
            ResultRecord(
                **base(case),
                score=p,
                raw_score=logit,
                distribution=None,
                valid_mass=None,
                passed=p >= metric.threshold,
                verdict={n: float(v) for n, v in zip(names, values)},
            )
        )
    return out
