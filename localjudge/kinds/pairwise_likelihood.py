"""The pairwise likelihood kind: which of two responses the judge finds likelier as its reply.

Each output is read on its own as the judge's reply to the same prompt (the condition fields,
then the instruction), exactly as a likelihood metric reads its target, and aggregated the same
way (mean log-probability per token by default: length-normalised). With `pmi`, each output is
read again without the source fields and the difference taken (contrastive: how much the
instruction makes the response likelier, whatever its fluency). The preference is

    raw_score = reading(output 1) − reading(output 2),   score = sigmoid(raw_score)

`score` is a monotone map of the difference, named P(output 1 better) for symmetry with the
`pairwise` metric, not a calibrated probability. Reading each output alone, the preference has no
presentation order: swapping the outputs swaps the readings, and the score becomes 1 − score.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds.base import (
    CaseBatch,
    Explanation,
    KindSummary,
    Listing,
    Measure,
    MetricContext,
    MetricKind,
    Needs,
)
from localjudge.kinds.comparison import ComparisonSummary, comparison_summary
from localjudge.kinds.fields import FieldName
from localjudge.kinds.likelihood import prompts as L
from localjudge.kinds.likelihood.kind import read_target
from localjudge.kinds.likelihood.spec import LikelihoodMetric, PMIContrast
from localjudge.kinds.records import ComponentScores, ResultRecord
from localjudge.scoring.aggregate import Aggregation
from localjudge.scoring.likelihood import ContinuationLogprobs

PAIRWISE_LIKELIHOOD_VERSION = "pairwise-likelihood-v1"


def _input_only() -> list[FieldName]:
    return ["input"]


class PairwiseLikelihoodMetric(BaseModel):
    """Which of two outputs for the same input the judge finds likelier (see the module docstring).

    Examples:
        >>> m = PairwiseLikelihoodMetric(kind="pairwise_likelihood", name="pref", instruction="Answer it.")
        >>> m.as_likelihood().fields, m.output_fields
        (['input'], ('output_1', 'output_2'))
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["pairwise_likelihood"] = Field(description="Metric kind.")
    name: str = Field(min_length=1, description="Metric name, used in results.")
    instruction: str = Field(min_length=1, description="The request both outputs answer, after the condition fields.")
    fields: list[FieldName] = Field(default_factory=_input_only, description="Condition fields, in order.")
    field_labels: dict[str, str] = Field(
        default_factory=dict, description="Headings shown for fields; an empty heading shows the text alone."
    )
    target_label: str = Field(default="", description="Heading the outputs follow; empty: right after the prompt.")
    format: Literal["plain", "chat"] = Field(
        default="chat", description="plain text, or the judge's chat template (each output as the judge's reply)."
    )
    output_fields: tuple[str, str] = Field(
        default=("output_1", "output_2"), description="The two case fields compared."
    )
    aggregation: Aggregation = Field(default="mean", description="How each output's token values become one reading.")
    pmi: PMIContrast | None = Field(
        default=None, description="Subtract each output's reading without these fields (contrastive)."
    )
    threshold: float | None = Field(
        default=None, ge=0, le=1, description="score at or above which output 1 'passes'; none: a comparison."
    )

    @model_validator(mode="after")
    def _check(self) -> PairwiseLikelihoodMetric:
        if self.output_fields[0] == self.output_fields[1]:
            raise ValueError(f"output_fields compare {self.output_fields[0]!r} with itself; name two fields")
        if set(self.output_fields) & set(self.fields):
            raise ValueError("an output field cannot also be a condition field")
        self.as_likelihood()  # the same checks as a likelihood metric's (pmi.without among the fields, ...)
        return self

    def as_likelihood(self) -> LikelihoodMetric:
        """The likelihood metric that reads one output (its target stands for either output)."""
        return LikelihoodMetric(
            kind="likelihood",
            name=self.name,
            instruction=self.instruction,
            fields=list(self.fields),
            field_labels=dict(self.field_labels),
            target_label=self.target_label,
            format=self.format,
            aggregation=self.aggregation,
            quantile=0.1 if self.aggregation == "quantile" else None,
            below=-5.0 if self.aggregation == "count_below" else None,
            pmi=self.pmi,
        )

    @property
    def required_fields(self) -> list[str]:
        """Fields a case must have to be compared: the outputs (the condition fields may be absent)."""
        return list(self.output_fields)


def condition_prompts(
    judge: Judge, metric: PairwiseLikelihoodMetric, case: TestCase
) -> tuple[str, str | None, list[str]]:
    """The prompt both outputs follow, its contrast (None without PMI) and each output as it follows."""
    m = metric.as_likelihood()
    prompt = L.condition_prompt(judge, m, case)
    contrast = L.contrast_prompt(judge, m, case)
    return prompt, contrast, [L.continuation(prompt, str(case.get(f) or "")) for f in metric.output_fields]


class PairwiseLikelihoodKind(MetricKind[PairwiseLikelihoodMetric]):
    """Each output read alone as the judge's reply, then the readings compared (see the module docstring)."""

    name = "pairwise_likelihood"
    spec = PairwiseLikelihoodMetric
    detail = ComponentScores
    summary_detail = ComparisonSummary

    @property
    def detail_key(self) -> str:
        return "pair"  # each output's reading, as results files have it

    version = PAIRWISE_LIKELIHOOD_VERSION
    compares_outputs = True

    def outputs_read(self, metric: PairwiseLikelihoodMetric) -> list[str]:
        return list(metric.output_fields)

    def needs(self, metric: PairwiseLikelihoodMetric) -> Needs:
        return Needs(required=metric.required_fields, sort_by=[*metric.fields, *metric.output_fields])

    def measure(self, judge: Judge, ctx: MetricContext[PairwiseLikelihoodMetric], case: TestCase) -> Measure:
        m = ctx.metric
        read = condition_prompts(judge, m, case)
        prompt, _, conts = read
        n = judge.count_tokens(prompt) + max(len(judge.backend.encode_continuation(c)) for c in conts)
        # the condition both outputs follow may be cut; the outputs compared stay whole
        cuttable = [f for f in m.fields if case.get(f) is not None]
        return Measure(n, f"the {m.name} prompt and the longer output have", cuttable, read)

    def score(self, batch: CaseBatch[PairwiseLikelihoodMetric]) -> list[ResultRecord]:
        """Records of cases that have both outputs, in input order."""
        judge, ctx, items = batch.judge, batch.ctx, batch.items
        m = ctx.metric
        read: list[tuple[str, str | None, list[str]]] = [it.payload for it in items]
        prompts = [p for p, _, conts in read for _ in conts]
        conts = [c for _, _, cs in read for c in cs]
        given = judge.loglikelihood(prompts, conts)
        without = None
        if m.pmi is not None:
            contrasts = [w for _, w, cs in read for _ in cs]
            assert all(w is not None for w in contrasts)  # a PMI metric always has its contrast prompt
            without = judge.loglikelihood([str(w) for w in contrasts], conts)
        surfaces = judge.backend.token_surfaces()
        f1, f2 = m.output_fields
        out = []
        for k, it in enumerate(items):
            values = [
                _reading(m, given[2 * k + o], None if without is None else without[2 * k + o], surfaces) for o in (0, 1)
            ]
            pair = {f1: values[0], f2: values[1]}
            blank = [f for f, c in zip(m.output_fields, read[k][2]) if not c.strip()]
            fields: dict[str, Any] = dict(prompt_tokens=judge.count_tokens(read[k][0]), truncated=it.cut)
            if blank or not all(math.isfinite(v) for v in values):
                why = f"{blank[0]} is blank" if blank else "a reading of an output is not finite"
                out.append(ctx.unscored(judge, it.case, why, **fields))
                continue
            raw = values[0] - values[1]
            # the same operations for a pair and its swap: swapping the outputs gives exactly 1 - p
            p = 1 / (1 + math.exp(-raw)) if raw >= 0 else 1 - 1 / (1 + math.exp(raw))
            out.append(
                ctx.record(
                    judge,
                    it.case,
                    p,
                    raw_score=raw,
                    distribution={f1: p, f2: 1 - p},
                    mode=f1 if raw > 0 else f2 if raw < 0 else None,
                    detail=ComponentScores(pair),
                    **fields,
                )
            )
        return out

    def summarise(self, records: Sequence[ResultRecord]) -> KindSummary:
        return KindSummary(comparison_summary(records))

    def describe(self, metric: PairwiseLikelihoodMetric) -> Listing:
        return Listing(
            f"{'PMI' if metric.pmi else 'log-prob'} ({metric.aggregation}), difference", ", ".join(metric.output_fields)
        )

    def explain(self, record: ResultRecord) -> Explanation:
        if record.score is None or record.raw_score is None:
            return super().explain(record)
        raw = record.raw_score
        parts = ", ".join(
            f"{k} {v:.3f}"
            for k, v in (record.detail.root if isinstance(record.detail, ComponentScores) else {}).items()
        )
        return Explanation(f"readings {parts}; difference {raw:.3f}, score sigmoid({raw:.3f}) = {record.score:.3f}")


def _reading(
    m: PairwiseLikelihoodMetric,
    given: ContinuationLogprobs,
    without: ContinuationLogprobs | None,
    surfaces: list[str],
) -> float:
    """One output's aggregate of its token log-probabilities (or per-token PMI); NaN for an empty output."""
    if not given.n_tokens:
        return math.nan
    return read_target(m.as_likelihood(), given, without, surfaces).value


PAIRWISE_LIKELIHOOD = PairwiseLikelihoodKind()
