"""Pairwise preference from likelihood: which of two responses the judge finds likelier as its reply.

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

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from localjudge.metrics.fields import FieldName
from localjudge.metrics.likelihood_spec import LikelihoodMetric, PMIContrast
from localjudge.scoring.aggregate import Aggregation

if TYPE_CHECKING:
    from localjudge.io.cases import TestCase
    from localjudge.judges.judge import Judge

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
    from localjudge.metrics import likelihood as L  # it imports the spec this module is part of

    m = metric.as_likelihood()
    prompt = L.condition_prompt(judge, m, case)
    contrast = L.contrast_prompt(judge, m, case)
    return prompt, contrast, [L.continuation(prompt, str(case.get(f) or "")) for f in metric.output_fields]
