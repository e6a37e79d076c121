"""Metric definitions (G-Eval, likelihood, entailment, reference, pairwise, hybrid, verdict), from Python or files."""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from localjudge.errors import ConfigError, field_path
from localjudge.io.files import load_yaml
from localjudge.metrics.entailment import EntailmentMetric
from localjudge.metrics.fields import FieldName, Reasoning
from localjudge.metrics.likelihood_spec import LikelihoodMetric, PMIContrast
from localjudge.metrics.pairwise_likelihood import PairwiseLikelihoodMetric
from localjudge.metrics.verdict_spec import VerdictMetric

__all__ = [  # kinds defined in modules of their own are part of this module's interface too
    "EntailmentMetric",
    "FieldName",
    "GEvalMetric",
    "HybridComponent",
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
    "dump_metric",
    "load_metric_file",
    "metric_from_dict",
]


class RubricRange(BaseModel):
    """Scores low..high (inclusive) and what they mean."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    low: int = Field(description="Lowest score of the range.")
    high: int = Field(description="Highest score of the range (equal to low for a single point).")
    description: str = Field(min_length=1, description="What an output in this range looks like.")


class GEvalMetric(BaseModel):
    """A G-Eval metric: task, criteria, evaluation steps, optional rubric, fields and scale.

    Examples:
        >>> m = GEvalMetric(name="clarity", task="Judge an answer.", criteria="Is it clear?",
        ...                 fields=["input", "actual_output"], low=1, high=5)
        >>> m.normalize(4.0)
        0.75
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["geval"] = Field(default="geval", description="Metric kind.")
    name: str = Field(min_length=1, description="Metric name, used in results.")
    task: str = Field(min_length=1, description="What the judge is shown and asked to do.")
    criteria: str = Field(min_length=1, description="Precise definition of the quality judged.")
    steps: list[str] | None = Field(
        default=None, description="Evaluation steps; None: generated once by the judge and cached."
    )
    rubric: list[RubricRange] = Field(default_factory=list, description="Optional score ranges with descriptions.")
    fields: list[FieldName] = Field(min_length=1, description="Test-case fields the judge reads.")
    required: list[FieldName] | None = Field(
        default=None, description="Fields that must be present (default: all of `fields`)."
    )
    field_labels: dict[str, str] = Field(
        default_factory=dict, description="Headings shown for fields, e.g. {'input': 'Source document'}."
    )
    low: int = Field(default=1, description="Lowest score.")
    high: int = Field(default=5, description="Highest score.")
    threshold: float = Field(default=0.5, ge=0, le=1, description="Pass threshold on the normalised 0-1 score.")
    reasoning: Reasoning = Field(
        default="none", description="none: score only; before: analysis then score; after: score then explanation."
    )

    @model_validator(mode="after")
    def _check(self) -> GEvalMetric:
        if not 0 <= self.low < self.high <= 100:
            raise ValueError(f"invalid scale {self.low}..{self.high}: need 0 <= low < high <= 100")
        if self.steps is not None and (not self.steps or any(not s.strip() for s in self.steps)):
            raise ValueError("steps must be a non-empty list of non-empty strings (or omitted to generate them)")
        for r in self.rubric:
            if r.low > r.high:
                raise ValueError(f"rubric range {r.low}-{r.high} is reversed")
            if r.low < self.low or r.high > self.high:
                raise ValueError(f"rubric range {r.low}-{r.high} lies outside the scale {self.low}..{self.high}")
        ranges = sorted(self.rubric, key=lambda r: r.low)
        for a, b in pairwise(ranges):
            if b.low <= a.high:
                raise ValueError(f"rubric ranges {a.low}-{a.high} and {b.low}-{b.high} overlap")
        if len(set(self.fields)) != len(self.fields):
            raise ValueError("fields are repeated")
        if self.required is not None and not set(self.required) <= set(self.fields):
            raise ValueError("required fields must be among fields")
        return self

    @property
    def required_fields(self) -> list[str]:
        """Fields a case must have to be scored."""
        return list(self.required if self.required is not None else self.fields)

    def rubric_gaps(self) -> list[int]:
        """Scores of the scale no rubric range covers (empty when there is no rubric)."""
        if not self.rubric:
            return []
        covered = {s for r in self.rubric for s in range(r.low, r.high + 1)}
        return [s for s in range(self.low, self.high + 1) if s not in covered]

    def normalize(self, expected: float) -> float:
        """Maps a raw score on low..high to 0..1."""
        return (expected - self.low) / (self.high - self.low)


class PairwiseMetric(BaseModel):
    """Which of two outputs for the same input is better, judged in both presentation orders."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["pairwise"] = Field(default="pairwise", description="Metric kind.")
    name: str = Field(min_length=1, description="Metric name, used in results.")
    task: str = Field(min_length=1, description="What the judge is shown and asked to do.")
    criteria: str = Field(min_length=1, description="What makes one output better than the other.")
    output_fields: tuple[str, str] = Field(
        default=("output_1", "output_2"), description="The two case fields compared."
    )
    allow_tie: bool = Field(default=False, description="Offer a third label, a tie.")
    threshold: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="P(output 1 better) at or above which output 1 'passes'; none: no pass/fail (a comparison "
        "reports output 1's win rate instead).",
    )


class ReferenceMetric(BaseModel):
    """Overlap of a field with a reference text, computed without a model: ROUGE-L F1.

    A signal of another kind than the judge's: the judge never sees the reference, so a hybrid
    of this and a likelihood metric can rank better than either (benchmarks/summeval_results.md).

    Examples:
        >>> ReferenceMetric(kind="reference", name="overlap").required_fields
        ['actual_output', 'expected_output']
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["reference"] = Field(description="Metric kind.")
    name: str = Field(min_length=1, description="Metric name, used in results.")
    measure: Literal["rouge_l"] = Field(
        default="rouge_l", description="ROUGE-L F1 (rouge-score's tokens, no stemming)."
    )
    target: FieldName = Field(default="actual_output", description="The field compared with the reference.")
    reference: FieldName = Field(default="expected_output", description="The reference field.")
    threshold: float | None = Field(
        default=None, ge=0, le=1, description="Pass threshold on the score; none: no pass/fail."
    )

    @model_validator(mode="after")
    def _check(self) -> ReferenceMetric:
        if self.target == self.reference:
            raise ValueError(f"the target and the reference are the same field {self.target!r}")
        return self

    @property
    def required_fields(self) -> list[str]:
        """Fields a case must have to be scored."""
        return [self.target, self.reference]


class HybridComponent(BaseModel):
    """One scorer inside a hybrid metric and how its score is weighted."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: dict[str, Any] = Field(description="The component metric's full definition (steps pinned).")
    field: Literal["raw_score", "score"] = Field(default="raw_score", description="Which score of its records is used.")
    mean: float = Field(description="Mean of the component's score on the fit data.")
    std: float = Field(gt=0, description="Standard deviation of the component's score on the fit data.")
    weight: float = Field(description="Weight of the standardised score.")


class HybridMetric(BaseModel):
    """Several metrics of the same case combined linearly, as fitted by `localjudge calibrate --hybrid`.

    raw_score = intercept + Σ weight · (component score − mean) / std, a prediction on the human
    scale the hybrid was fitted to; score = raw_score mapped to 0..1 over that scale (clipped).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["hybrid"] = Field(description="Metric kind.")
    name: str = Field(min_length=1, description="Metric name, used in results.")
    components: list[HybridComponent] = Field(min_length=1, description="The combined scorers.")
    intercept: float = Field(description="Prediction when every component sits at its fit mean.")
    method: str = Field(description="How the weights were chosen (e.g. 'ridge α=1', 'zmean', 'x alone').")
    human_field: str = Field(description="The human label the hybrid predicts.")
    human_scale: tuple[float, float] = Field(description="Lowest and highest human label seen in fitting.")
    threshold: float | None = Field(
        default=None, ge=0, le=1, description="Pass threshold on the score; none: no pass/fail."
    )
    fit: dict[str, Any] = Field(default_factory=dict, description="What it was fitted on and how it did (report).")

    @model_validator(mode="after")
    def _check(self) -> HybridMetric:
        metrics = self.component_metrics
        names = [m.name for m in metrics]
        if len(set(names)) != len(names):
            raise ValueError(f"component metrics repeated: {names}")
        if any(isinstance(m, HybridMetric | VerdictMetric) for m in metrics) or self.name in names:
            raise ValueError("a hybrid cannot contain a hybrid, a verdict or a metric of its own name")
        lo, hi = self.human_scale
        if not hi > lo:
            raise ValueError(f"human_scale {lo}..{hi} is empty")
        return self

    @property
    def component_metrics(self) -> list[Metric]:
        """The component metrics, validated."""
        return [metric_from_dict(c.metric, f"hybrid {self.name!r} component") for c in self.components]


Metric = (
    GEvalMetric
    | PairwiseMetric
    | LikelihoodMetric
    | ReferenceMetric
    | HybridMetric
    | EntailmentMetric
    | VerdictMetric
    | PairwiseLikelihoodMetric
)
_KINDS: dict[str, type[Metric]] = {
    "pairwise_likelihood": PairwiseLikelihoodMetric,
    "verdict": VerdictMetric,
    "entailment": EntailmentMetric,
    "pairwise": PairwiseMetric,
    "likelihood": LikelihoodMetric,
    "reference": ReferenceMetric,
    "hybrid": HybridMetric,
}


def metric_from_dict(data: dict, source: str = "<dict>") -> Metric:
    """Validates a metric definition (as read from YAML/JSON)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a metric definition must be a mapping")
    kind = data.get("kind")
    cls = _KINDS.get(kind, GEvalMetric) if isinstance(kind, str) else GEvalMetric
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = field_path(first["loc"]) or "metric"
        raise ConfigError(f"{source}: {where}: {first['msg'].removeprefix('Value error, ')}") from None


def load_metric_file(path: str | Path, field_labels: Mapping[str, str] | None = None) -> Metric:
    """Reads a metric definition from a .yaml/.yml/.json file, its fields named by `field_labels`.

    The labels become the headings of the fields the metric shows, and replace the words the
    file lists under `names:` ({field: [words naming it]}) in its task, criteria, steps and rubric
    (`localjudge.metrics.labels`).
    """
    from localjudge.metrics.labels import apply_names, check_labels, relabel  # labels builds on this module

    path = Path(path)
    labels = check_labels(field_labels)
    data = apply_names(load_yaml(path, "metric file"), labels, str(path))
    return relabel(metric_from_dict(data, str(path)), labels)


def dump_metric(metric: Metric) -> str:
    """The metric as YAML, e.g. to pin generated steps."""
    return yaml.safe_dump(
        metric.model_dump(mode="json", exclude_none=True), sort_keys=False, allow_unicode=True, width=100
    )
