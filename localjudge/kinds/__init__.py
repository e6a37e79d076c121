"""Metric kinds: one module per kind, each owning what its metrics do differently, registered here.

`KINDS` is the registry, the one place that lists the kinds: a kind's name (its specs' `kind`
field) maps to its `MetricKind` object (`kinds.base`). Loading metric definitions builds its
union of specs from it (`localjudge.metrics.spec`), and the run loop, the summary, the command
line and the integrations ask `kind_of(metric or record)` instead of testing types. A new kind
is one module defining a spec and a `MetricKind`, plus one line here.

Examples:
    >>> from localjudge.metrics import builtin_metric
    >>> kind_of(builtin_metric("correctness")).needs(builtin_metric("correctness")).required
    ['input', 'actual_output', 'expected_output']
    >>> kind_of("pairwise").compares_outputs
    True
"""

from __future__ import annotations

from typing import Any

from localjudge.errors import DataError, clip
from localjudge.io.cases import TestCase
from localjudge.kinds.base import MetricKind, MetricSpec, missing
from localjudge.kinds.entailment import ENTAILMENT
from localjudge.kinds.geval import GEVAL
from localjudge.kinds.hybrid import HYBRID
from localjudge.kinds.likelihood import LIKELIHOOD
from localjudge.kinds.pairwise import PAIRWISE
from localjudge.kinds.pairwise_likelihood import PAIRWISE_LIKELIHOOD
from localjudge.kinds.reference import REFERENCE
from localjudge.kinds.verdict import VERDICT

__all__ = ["DEFAULT_KIND", "KINDS", "Metric", "MetricKind", "kind_of", "missing_fields"]

Metric = MetricSpec
"""A metric of any kind (the type of the registered kinds' specs)."""

KINDS: dict[str, MetricKind[Any]] = {
    "geval": GEVAL,
    "pairwise": PAIRWISE,
    "likelihood": LIKELIHOOD,
    "reference": REFERENCE,
    "hybrid": HYBRID,
    "entailment": ENTAILMENT,
    "verdict": VERDICT,
    "pairwise_likelihood": PAIRWISE_LIKELIHOOD,
}

DEFAULT_KIND = "geval"
"""The kind of a definition that names none."""


def kind_of(metric: MetricSpec | str) -> MetricKind[Any]:
    """The kind of a metric, or of a record's `kind` name.

    Raises:
        DataError: the name is not a registered kind (e.g. a record written by a newer localjudge).
    """
    name = metric if isinstance(metric, str) else metric.kind
    kind = KINDS.get(name)
    if kind is None:
        raise DataError(f"unknown metric kind {clip(name)}; localjudge knows {', '.join(KINDS)}")
    return kind


def missing_fields(metric: MetricSpec, case: TestCase) -> list[str]:
    """Fields the metric needs that the case lacks."""
    return missing(kind_of(metric).needs(metric).required, case)
