"""Metric definitions of any kind, from Python, dicts or files, and back to YAML.

A definition is validated against the union of every registered kind's spec
(`localjudge.kinds.KINDS`), discriminated by its `kind` field (a definition without one is a
G-Eval metric), so a kind added to the registry is loadable at once. The specs themselves live
with their kinds (`localjudge.kinds.<kind>`) and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Union

import yaml
from pydantic import Discriminator, Tag, TypeAdapter, ValidationError

from localjudge.errors import ConfigError, field_path
from localjudge.io.files import load_yaml
from localjudge.kinds import DEFAULT_KIND, KINDS, Metric, kind_of
from localjudge.kinds.entailment import EntailmentMetric
from localjudge.kinds.fields import FieldName, Reasoning
from localjudge.kinds.geval.spec import GEvalMetric, RubricRange
from localjudge.kinds.hybrid import FittedComponent, HybridMetric
from localjudge.kinds.likelihood.spec import LikelihoodMetric, PMIContrast
from localjudge.kinds.pairwise import PairwiseMetric
from localjudge.kinds.pairwise_likelihood import PairwiseLikelihoodMetric
from localjudge.kinds.reference import ReferenceMetric
from localjudge.kinds.verdict import VerdictMetric
from localjudge.metrics.labels import apply_names, check_labels, relabel

__all__ = [  # the built-in kinds' specs are part of this module's interface: the members of its union
    "EntailmentMetric",
    "FieldName",
    "FittedComponent",
    "GEvalMetric",
    "HybridMetric",
    "LikelihoodMetric",
    "Metric",
    "PMIContrast",
    "PairwiseLikelihoodMetric",
    "PairwiseMetric",
    "Reasoning",
    "ReferenceMetric",
    "RubricRange",
    "VerdictMetric",
    "components",
    "dump_metric",
    "load_metric_file",
    "metric_from_dict",
]


def _tag(value: Any) -> str:
    """The kind a definition names; an unknown or missing one is read as the default (G-Eval) spec,
    whose validation then says what is wrong with its `kind`."""
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return kind if isinstance(kind, str) and kind in KINDS else DEFAULT_KIND


@cache
def _union(kinds: tuple[tuple[str, type], ...]) -> TypeAdapter:
    """The discriminated union of the registered kinds' specs (built once per registry)."""
    members = tuple(Annotated[spec, Tag(name)] for name, spec in kinds)
    union: Any = Annotated[Union[members], Discriminator(_tag)]  # noqa: UP007 (a tuple of types known at run time)
    return TypeAdapter(union)


def metric_from_dict(data: Any, source: str = "<dict>") -> Metric:
    """Validates a metric definition (as read from YAML/JSON), and the definitions it combines.

    Raises:
        ConfigError: the definition (or one of its components) is invalid, naming `source` and the field.
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a metric definition must be a mapping")
    try:
        metric: Metric = _union(tuple((name, kind.spec) for name, kind in KINDS.items())).validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = field_path(first["loc"][1:]) or "metric"  # loc[0] is the kind's tag in the union
        raise ConfigError(f"{source}: {where}: {first['msg'].removeprefix('Value error, ')}") from None
    parts = components(metric)
    if any(kind_of(part).needs(part).components for part in parts):
        raise ConfigError(
            f"{source}: metric: a {metric.kind} cannot contain a hybrid, a verdict or a metric of its own name"
        )
    return metric


def components(metric: Metric) -> list[Metric]:
    """The metrics a hybrid or verdict combines, validated (none for the other kinds)."""
    return [
        metric_from_dict(c, f"{metric.kind} {metric.name!r} component")
        for c in kind_of(metric).needs(metric).components
    ]


def load_metric_file(path: str | Path, field_labels: Mapping[str, str] | None = None) -> Metric:
    """Reads a metric definition from a .yaml/.yml/.json file, its fields named by `field_labels`.

    The labels become the headings of the fields the metric shows, and replace the words the
    file lists under `names:` ({field: [words naming it]}) in its task, criteria, steps and rubric
    (`localjudge.metrics.labels`).
    """
    path = Path(path)
    labels = check_labels(field_labels)
    data = apply_names(load_yaml(path, "metric file"), labels, str(path))
    return relabel(metric_from_dict(data, str(path)), labels)


def dump_metric(metric: Metric) -> str:
    """The metric as YAML, e.g. to pin generated steps."""
    return yaml.safe_dump(
        metric.model_dump(mode="json", exclude_none=True), sort_keys=False, allow_unicode=True, width=100
    )
