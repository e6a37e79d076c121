"""A run's summary per metric: scores, pass rate or (comparisons) win rate, and why cases went unscored.

The fields every kind shares are computed here; each kind adds its own detail
(`MetricKind.summarise`: a comparison's win rate, a verdict's expected accuracy) and says what
its scores cannot tell (`MetricKind.notes`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, SerializerFunctionWrapHandler, model_serializer

from localjudge.kinds import DEFAULT_KIND, kind_of
from localjudge.kinds.records import ResultRecord
from localjudge.scoring.distribution import DEFAULT_MIN_VALID_MASS


class MetricSummary(BaseModel):
    """Aggregate of one metric over a run."""

    model_config = ConfigDict(extra="forbid")

    metric: str = Field(description="Metric name.")
    kind: str = Field(description="Metric kind (geval, pairwise, likelihood, reference, hybrid, entailment, ...).")
    n: int = Field(description="Cases judged.")
    scored: int = Field(description="Cases with a score.")
    unscored: int = Field(description="Cases without a score (missing fields, too little valid mass).")
    unscored_reasons: dict[str, int] = Field(
        default_factory=dict, description="Why cases are unscored: reason -> number of cases, most frequent first."
    )
    mean_score: float | None = Field(
        description="Mean score over scored cases; pairwise: mean P(output 1 better), the preference for output 1."
    )
    pass_rate: float | None = Field(
        description="Share of scored cases that passed; null when the metric has no threshold."
    )
    mean_valid_mass: float | None = Field(description="Mean probability on valid scores (unscored cases included).")
    min_valid_mass: float | None = Field(
        default=None, description="Valid mass below which a case was unscored (G-Eval, pairwise); null otherwise."
    )
    score_min: float | None = Field(default=None, description="Lowest score over scored cases.")
    score_max: float | None = Field(default=None, description="Highest score over scored cases.")
    notes: list[str] = Field(
        default_factory=list, description="Warnings on what the scores can tell (see `reading_notes`)."
    )
    detail: SerializeAsAny[BaseModel] | None = Field(
        default=None,
        description="What the kind adds (its `MetricKind.summary_detail` model): a comparison's win_rate, "
        "mean_disagreement and flipped, a verdict's expected_accuracy; written as fields of the summary.",
    )

    @model_serializer(mode="wrap")
    def _detail_as_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # the layout summaries had before kinds owned their detail: a comparison's fields (null for
        # other kinds) after pass_rate, any other kind's after the notes, left out when null
        out = handler(self)
        detail = out.pop("detail", None) or {}
        fields: dict[str, Any] = {}
        for name, value in out.items():
            fields[name] = value
            if name == "pass_rate":
                fields |= {k: detail.pop(k, None) for k in WRITTEN_IN_EVERY_SUMMARY}
        return fields | {k: v for k, v in detail.items() if v is not None}


WRITTEN_IN_EVERY_SUMMARY = ("win_rate", "mean_disagreement", "flipped")
"""Summary detail fields every summary carries (null unless the kind compares two outputs)."""


def reading_notes(
    kind: str, scores: Sequence[float], mean_valid_mass: float | None, has_threshold: bool, flipped: int = 0
) -> list[str]:
    """What a reader must know before taking a metric's scores as verdicts, in plain words (the kind's notes)."""
    return kind_of(kind).notes(scores, mean_valid_mass, has_threshold, flipped)


def summarize(records: Sequence[ResultRecord], metrics: Sequence[str]) -> list[MetricSummary]:
    """Per-metric means, pass (or win) rates, and unscored counts with their reasons."""
    out = []
    for name in metrics:
        rs = [r for r in records if r.metric == name]
        scored = [r for r in rs if r.score is not None]
        masses = [r.valid_mass for r in rs if r.valid_mass is not None]
        values = [r.score for r in rs if r.score is not None]  # the scores of `scored`
        judged = [r for r in scored if r.passed is not None]
        mass = sum(masses) / len(masses) if masses else None
        kind = kind_of(rs[0].kind if rs else DEFAULT_KIND)
        own = kind.summarise(rs)
        flipped = getattr(own.detail, "flipped", None) or 0
        out.append(
            MetricSummary(
                metric=name,
                kind=rs[0].kind if rs else DEFAULT_KIND,
                n=len(rs),
                scored=len(scored),
                unscored=len(rs) - len(scored),
                unscored_reasons=dict(Counter(r.unscored_reason or "" for r in rs if r.score is None).most_common()),
                mean_score=sum(values) / len(values) if values else None,
                pass_rate=sum(bool(r.passed) for r in judged) / len(judged) if judged else None,
                mean_valid_mass=mass,
                min_valid_mass=_threshold(rs) if kind.reads_distribution else None,
                score_min=min(values, default=None),
                score_max=max(values, default=None),
                notes=[*kind.notes(values, mass, any(r.threshold is not None for r in rs), flipped), *own.notes],
                detail=own.detail,
            )
        )
    return out


def valid_mass_threshold(record: ResultRecord) -> float | None:
    """The valid-mass threshold a record was judged under (records from before it was recorded: the default)."""
    if not kind_of(record.kind).reads_distribution:
        return None
    return DEFAULT_MIN_VALID_MASS if record.min_valid_mass is None else record.min_valid_mass


def _threshold(records: Sequence[ResultRecord]) -> float:
    # every record of a metric in one run shares it (a resume with another one is refused)
    return next((t for r in records if (t := valid_mass_threshold(r)) is not None), DEFAULT_MIN_VALID_MASS)
