"""Metric kinds: one module (or subpackage) per kind, each owning what its metrics do differently.

`KINDS` is the registry (`kinds.registry`): a kind's name (its specs' `kind` field) maps to its
`MetricKind` object (`kinds.base`). Every kind, localjudge's own and another package's, is
declared as an entry point in the group `localjudge.kinds` and registered from there when this
package is imported; `register_kind` adds one in a running process. Loading metric definitions
builds its union of specs from the registry (`localjudge.metrics.spec`), and the run loop, the
summary, the command line and the integrations ask `kind_of(metric or record)` instead of
testing types. A new kind is one module defining a spec, its records' detail and a
`MetricKind`, plus one registration.

Examples:
    >>> from localjudge.metrics import builtin_metric
    >>> kind_of(builtin_metric("correctness")).needs(builtin_metric("correctness")).required
    ['input', 'actual_output', 'expected_output']
    >>> kind_of("pairwise").compares_outputs
    True
"""

from __future__ import annotations

from localjudge.io.cases import TestCase
from localjudge.kinds.base import KindSummary, MetricContext, MetricKind, MetricSpec, missing
from localjudge.kinds.options import ScoringOptions
from localjudge.kinds.records import ResultRecord
from localjudge.kinds.registry import KINDS, kind_of, load_entry_points, register_kind, unregister_kind

__all__ = [
    "DEFAULT_KIND",
    "KINDS",
    "KindSummary",
    "Metric",
    "MetricContext",
    "MetricKind",
    "ResultRecord",
    "ScoringOptions",
    "kind_of",
    "missing_fields",
    "register_kind",
    "unregister_kind",
]

Metric = MetricSpec
"""A metric of any kind (the type of the registered kinds' specs)."""

DEFAULT_KIND = "geval"
"""The kind of a definition that names none."""

load_entry_points()


def missing_fields(metric: MetricSpec, case: TestCase) -> list[str]:
    """Fields the metric needs that the case lacks."""
    return missing(kind_of(metric).needs(metric).required, case)
