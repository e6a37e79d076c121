"""The reference kind: overlap of a field with a reference text, computed without a model (ROUGE-L F1).

A signal of another kind than the judge's: the judge never sees the reference, so a hybrid of
this and a likelihood metric can rank better than either (benchmarks/quality/summeval/summeval_results.md).
raw_score = score = ROUGE-L F1 in [0, 1]. A field with no token to compare (ROUGE-L reads ASCII
letters and digits, as rouge-score does) is unscored with the reason, not scored 0.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from localjudge.kinds.base import CaseBatch, Explanation, Listing, MetricKind, Needs
from localjudge.kinds.fields import FieldName
from localjudge.kinds.records import ResultRecord
from localjudge.lexical import rouge_l, tokens

REFERENCE_VERSION = "rouge-l-v1"
"""Version of the overlap measure (tokenisation of `localjudge.lexical`), recorded as the template version."""


class ReferenceMetric(BaseModel):
    """Overlap of a field with a reference text, computed without a model: ROUGE-L F1.

    A signal of another kind than the judge's: the judge never sees the reference, so a hybrid
    of this and a likelihood metric can rank better than either (benchmarks/quality/summeval/summeval_results.md).

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


class ReferenceKind(MetricKind[ReferenceMetric]):
    """ROUGE-L F1 of the target against the reference; no judge is asked."""

    name = "reference"
    spec = ReferenceMetric
    version = REFERENCE_VERSION

    def needs(self, metric: ReferenceMetric) -> Needs:
        return Needs(required=metric.required_fields, sort_by=metric.required_fields)

    def score(self, batch: CaseBatch[ReferenceMetric]) -> list[ResultRecord]:
        judge, ctx, items = batch.judge, batch.ctx, batch.items
        m = ctx.metric
        out = []
        for it in items:
            target, reference = _text(it.case.get(m.target)), _text(it.case.get(m.reference))
            blank = [f for f, t in ((m.target, target), (m.reference, reference)) if not tokens(t)]
            if blank:
                out.append(ctx.unscored(judge, it.case, f"the {blank[0]} has no ASCII letters or digits for ROUGE-L"))
                continue
            f1 = rouge_l(target, reference)
            out.append(ctx.record(judge, it.case, f1, raw_score=f1))
        return out

    def describe(self, metric: ReferenceMetric) -> Listing:
        return Listing("ROUGE-L F1, no model", f"{metric.target} vs {metric.reference}")

    def explain(self, record: ResultRecord) -> Explanation:
        spec = record.metric_spec
        if record.score is None:
            return Explanation("")
        return Explanation(
            f"ROUGE-L F1 of the {spec.get('target')} against the {spec.get('reference')}: {record.score:.3f}"
        )


def _text(value: str | list[str] | None) -> str:
    # a list field (context chunks) is compared as one text
    return "\n".join(value) if isinstance(value, list) else (value or "")


REFERENCE = ReferenceKind()
