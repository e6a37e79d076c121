"""The likelihood metric's definition: prompt parts, PMI contrast, and how token values are aggregated."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from localjudge.kinds.fields import FieldName, check_fields
from localjudge.scoring.aggregate import Aggregation, Focus, Unit

TOKEN_LEVEL = ("min", "quantile", "count_below", "sentence_min")
"""Aggregations that read single tokens, words or sentences (and record the worst of them)."""


class PMIContrast(BaseModel):
    """The second condition of a PMI metric: the same prompt without the source fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    without: list[FieldName] = Field(
        min_length=1, description="Condition fields left out of the contrast prompt (the source)."
    )
    instruction: str | None = Field(
        default=None, description="Instruction of the contrast prompt (default: the metric's own)."
    )


class LikelihoodMetric(BaseModel):
    """How likely the judge finds the output itself, token by token, given the condition fields.

    GPTScore-style (Fu et al., 2023): the prompt shows the condition fields, then an instruction
    naming the criterion ("Write a faithful summary of the article."); the score aggregates the
    log-probabilities of the target field's tokens after it: their mean (the default) or sum, or a
    token-level reading that lets one surprising claim decide (`min`, `quantile`, `count_below`,
    `sentence_min`, over tokens or words, all or only names and numbers; see
    `localjudge.scoring.aggregate`). With `pmi`, each token's log-probability under the same prompt
    without the source fields is subtracted first: the output is scored by how much more likely the
    source makes it (pointwise mutual information).

    Examples:
        >>> m = LikelihoodMetric(kind="likelihood", name="faithful", instruction="Write a faithful summary.",
        ...                      fields=["input"], field_labels={"input": "Article"})
        >>> m.required_fields
        ['input', 'actual_output']
        >>> LikelihoodMetric(kind="likelihood", name="worst", instruction="Write a summary.", fields=["input"],
        ...                  aggregation="min", unit="word").token_level
        True
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["likelihood"] = Field(description="Metric kind.")
    name: str = Field(min_length=1, description="Metric name, used in results.")
    instruction: str = Field(min_length=1, description="The request the target answers, naming the criterion.")
    fields: list[FieldName] = Field(
        default_factory=list, description="Condition fields shown before the instruction, in order."
    )
    target: FieldName = Field(default="actual_output", description="The field whose likelihood is read.")
    required: list[FieldName] | None = Field(
        default=None, description="Fields that must be present (default: all of `fields` and the target)."
    )
    field_labels: dict[str, str] = Field(
        default_factory=dict, description="Headings shown for fields; an empty heading shows the text alone."
    )
    target_label: str = Field(
        default="Response",
        description=(
            "Heading the target follows ('Summary' gives 'Summary: <target>'); empty: right after the instruction."
        ),
    )
    format: Literal["plain", "chat"] = Field(
        default="plain",
        description=(
            "plain text, or the judge's chat template (condition in the user turn, target as the judge's reply)."
        ),
    )
    aggregation: Aggregation = Field(
        default="mean",
        description="How the token values become one score: mean, sum, min, quantile, count_below or sentence_min.",
    )
    unit: Unit = Field(
        default="token", description="Aggregate single tokens, or words (each the sum of its tokens' values)."
    )
    focus: Focus = Field(
        default="all",
        description="All units, or only salient words (with a digit, or capitalised past a sentence's start).",
    )
    quantile: float | None = Field(
        default=None, gt=0, lt=1, description="q of `aggregation: quantile` (0.1: the lowest tenth of the units)."
    )
    below: float | None = Field(
        default=None, lt=0, description="Threshold of `aggregation: count_below`, in nats per unit (e.g. -5)."
    )
    sentences: Literal["mean", "min"] | None = Field(
        default=None,
        description="Read each sentence of the target alone after the prompt (not after the sentences before it) "
        "and score the mean or the least of their values (each aggregated as `aggregation`: mean or sum); "
        "none: the target whole.",
    )
    pmi: PMIContrast | None = Field(
        default=None, description="Subtract the log-likelihood without the source fields (PMI), token by token."
    )
    threshold: float | None = Field(
        default=None, ge=0, le=1, description="Pass threshold on the score; none: no pass/fail."
    )

    @model_validator(mode="after")
    def _check(self) -> LikelihoodMetric:
        check_fields(self.fields, self.target, "condition")
        if self.required is not None and not set(self.required) <= set(self.fields) | {self.target}:
            raise ValueError("required fields must be among fields and the target")
        if self.pmi is not None and not set(self.pmi.without) <= set(self.fields):
            raise ValueError(f"pmi.without {self.pmi.without} must be among the condition fields {self.fields}")
        if (self.quantile is None) == (self.aggregation == "quantile"):
            raise ValueError("quantile: give it with aggregation: quantile, and only then")
        if (self.below is None) == (self.aggregation == "count_below"):
            raise ValueError("below: give it with aggregation: count_below, and only then")
        if self.sentences is not None and (self.aggregation not in ("mean", "sum") or self.token_level):
            raise ValueError("sentences: each sentence is read by its mean or sum; give aggregation mean or sum")
        if self.aggregation == "sentence_min" and (self.unit, self.focus) != ("token", "all"):
            raise ValueError("aggregation: sentence_min averages every token of a sentence; leave unit and focus out")
        return self

    @model_serializer(mode="wrap")
    def _omit_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # the token-level settings appear only when set, so metrics defined before them keep
        # byte-identical specs in their records (and resume against older files)
        out = handler(self)
        for key, default in (
            ("unit", "token"),
            ("focus", "all"),
            ("quantile", None),
            ("below", None),
            ("sentences", None),
        ):
            if key in out and out[key] == default:
                del out[key]
        return out

    @property
    def token_level(self) -> bool:
        """Whether the score reads single units (and the record names the worst ones)."""
        return self.aggregation in TOKEN_LEVEL or (self.unit, self.focus) != ("token", "all")

    @property
    def required_fields(self) -> list[str]:
        """Fields a case must have to be scored."""
        return list(self.required if self.required is not None else [*self.fields, self.target])
