"""The hybrid kind: several metrics of the same case combined linearly, as fitted by `calibrate fit-hybrid`.

raw_score = intercept + Σ weight · (component score − mean) / std, a prediction on the human
scale the hybrid was fitted to; score = raw_score mapped to 0..1 over that scale (clipped). The
components are judged first, in the same run (`Needs.components`); a case with an unscored
component is unscored, naming it.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from localjudge.kinds.base import (
    CaseBatch,
    Explanation,
    Listing,
    MetricKind,
    MetricSpec,
    Needs,
    ReadyCase,
    narrow_spread,
)
from localjudge.kinds.records import ComponentScores, ResultRecord

HYBRID_VERSION = "hybrid-v1"
NARROW_SPREAD = 0.15
"""Scores spanning less than this share of the 0-1 scale do not separate cases."""


class FittedComponent(BaseModel):
    """One scorer a fitted metric reads, and its weight: a hybrid's in its linear prediction, a
    verdict's in its log-odds; both take weight · (score − mean) / std."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: dict[str, Any] = Field(description="The component metric's full definition (steps pinned).")
    field: Literal["raw_score", "score"] = Field(default="raw_score", description="Which score of its records is read.")
    mean: float = Field(description="Mean of the component's score on the fit data.")
    std: float = Field(gt=0, description="Standard deviation of the component's score on the fit data.")
    weight: float = Field(description="Weight of the standardised score.")


class FittedMetric(BaseModel):
    """What the definitions of hybrids and verdicts share: other metrics read through fitted weights."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(description="Metric kind.")
    name: str = Field(min_length=1, description="Metric name, used in results.")
    components: list[FittedComponent] = Field(min_length=1, description="The scorers read.")
    intercept: float = Field(
        description="The reading when every component sits at its fit mean (a hybrid's prediction, a verdict's "
        "log-odds)."
    )

    @model_validator(mode="after")
    def _check_components(self) -> FittedMetric:
        names = [c.metric.get("name") for c in self.components]
        if len(set(names)) != len(names):
            raise ValueError(f"component metrics repeated: {names}")
        if self.name in names:
            raise ValueError(f"a {self.kind} cannot contain a hybrid, a verdict or a metric of its own name")
        return self


class HybridMetric(FittedMetric):
    """Several metrics of the same case combined linearly, as fitted by `localjudge calibrate fit-hybrid`.

    raw_score = intercept + Σ weight · (component score − mean) / std, a prediction on the human
    scale the hybrid was fitted to; score = raw_score mapped to 0..1 over that scale (clipped).
    """

    kind: Literal["hybrid"] = Field(description="Metric kind.")
    method: str = Field(description="How the weights were chosen (e.g. 'ridge α=1', 'zmean', 'x alone').")
    human_field: str = Field(description="The human label the hybrid predicts.")
    human_scale: tuple[float, float] = Field(description="Lowest and highest human label seen in fitting.")
    threshold: float | None = Field(
        default=None, ge=0, le=1, description="Pass threshold on the score; none: no pass/fail."
    )
    fit: dict[str, Any] = Field(default_factory=dict, description="What it was fitted on and how it did (report).")

    @model_validator(mode="after")
    def _check_scale(self) -> HybridMetric:
        lo, hi = self.human_scale
        if not hi > lo:
            raise ValueError(f"human_scale {lo}..{hi} is empty")
        return self


class FittedSpec(MetricSpec, Protocol):
    """A metric read from other metrics' scores through fitted components: a hybrid or a verdict."""

    @property
    def components(self) -> list[FittedComponent]:
        """The scorers read, with their fitted weights."""

    @property
    def intercept(self) -> float:
        """The linear reading when every component sits at its fit mean."""


F = TypeVar("F", bound=FittedSpec)


class FittedKind(MetricKind[F]):
    """What hybrids and verdicts share: they judge nothing themselves; their components are judged first
    (each reporting its own missing fields), a case with an unscored component is unscored, naming it,
    and a scored one reads intercept + Σ weight · (score − mean) / std, which `scaled` maps to 0..1."""

    detail = ComponentScores

    def needs(self, metric: F) -> Needs:
        return Needs(required=[], sort_by=[], components=tuple(c.metric for c in metric.components))

    @abstractmethod
    def scaled(self, metric: F, raw: float) -> float:
        """The 0-1 score of a case whose linear reading is `raw` (its raw_score)."""

    def score(self, batch: CaseBatch[F]) -> list[ResultRecord]:
        judge, ctx = batch.judge, batch.ctx
        metric = ctx.metric
        names = [c.metric["name"] for c in metric.components]
        out = []
        for it, values, raw in linear_readings(metric.components, metric.intercept, batch.items, batch.judged):
            if isinstance(values, str):
                out.append(ctx.unscored(judge, it.case, values))
                continue
            parts = ComponentScores({n: float(v) for n, v in zip(names, values)})
            out.append(ctx.record(judge, it.case, self.scaled(metric, raw), raw_score=raw, detail=parts))
        return out

    def explain(self, record: ResultRecord) -> Explanation:
        if record.score is None or record.raw_score is None:
            return super().explain(record)
        parts = ", ".join(f"{k} {v:.3f}" for k, v in component_scores(record).items())
        return Explanation(self.reading(record, parts))

    @abstractmethod
    def reading(self, record: ResultRecord, parts: str) -> str:
        """A scored record in words, given its component scores in words (`parts`)."""


class HybridKind(FittedKind[HybridMetric]):
    """A fitted linear combination of other metrics' scores (see the module docstring)."""

    name = "hybrid"
    spec = HybridMetric
    version = HYBRID_VERSION

    def scaled(self, metric: HybridMetric, raw: float) -> float:
        """The prediction over the human scale the hybrid was fitted to, clipped to 0..1."""
        lo, hi = metric.human_scale
        return min(1.0, max(0.0, (raw - lo) / (hi - lo)))

    def notes(
        self, scores: Sequence[float], mean_valid_mass: float | None, has_threshold: bool, flipped: int
    ) -> list[str]:
        return narrow_spread(scores, NARROW_SPREAD)

    def describe(self, metric: HybridMetric) -> Listing:
        return Listing(
            f"predicted {metric.human_field} ({metric.method})", ", ".join(c.metric["name"] for c in metric.components)
        )

    def reading(self, record: ResultRecord, parts: str) -> str:
        human = record.metric_spec.get("human_field")
        return f"predicted {human} {record.raw_score:.2f} from {parts}; score {record.score:.3f}"


def linear_readings(
    components: Sequence[FittedComponent],
    intercept: float,
    items: Sequence[ReadyCase],
    judged: Mapping[tuple[str, str], ResultRecord],
) -> Iterator[tuple[ReadyCase, list[float] | str, float]]:
    """Per item: its components' scores and intercept + Σ weight · (score − mean) / std (hybrids and
    verdicts alike), or the unscored reason (a str) and NaN when a component has no score."""
    names = [c.metric["name"] for c in components]
    for it in items:
        parts = [judged[(it.case.id, n)] for n in names]
        values = component_values(parts, [c.field for c in components])
        if isinstance(values, str):
            yield it, values, math.nan
            continue
        yield it, values, intercept + math.fsum(c.weight * (v - c.mean) / c.std for c, v in zip(components, values))


def component_values(parts: Sequence[ResultRecord], fields: Sequence[str]) -> list[float] | str:
    """Each component record's score (`raw_score` or `score`), or why one is missing (the unscored reason)."""
    values: list[Any] = [getattr(r, f) for r, f in zip(parts, fields)]
    for r, v in zip(parts, values):
        if v is None:
            return f"a component is unscored ({r.metric}: {r.unscored_reason or 'no score'})"
    return [float(v) for v in values]


HYBRID = HybridKind()


def component_scores(record: ResultRecord) -> dict[str, float]:
    """The components' scores a hybrid's or a verdict's record combined (empty when unscored)."""
    return record.detail.root if isinstance(record.detail, ComponentScores) else {}
