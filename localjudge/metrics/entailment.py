"""Entailment metrics: a yes/no question ("is every claim supported?"), P(yes) read exactly.

The prompt shows the source fields, then the target (the whole response, or one sentence of it),
then the question; the judge's answer position follows "Answer:" in its own turn, and the
probability of each label is read over the full softmax (`Judge.score_labels`), every spelling
of "Yes" and "No" included. The score is P(yes) normalised over the two labels; a case whose
judge puts less than `min_valid_mass` on them is unscored, with the reason. Plain layout, for
fields [input] labelled "Article" and target label "Summary":

    Article:
    <the article>

    Summary:
    <the summary, or one of its sentences>

    Is every claim in the summary supported by the article? Answer Yes or No.
    Answer:

The source comes first, so every summary (and every sentence) of one article shares its prefill.
As in likelihood metrics, content is not fenced: text inside a field can move the probabilities,
not the position they are read at.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from localjudge.metrics.fields import FieldName

if TYPE_CHECKING:
    from localjudge.io.cases import TestCase
    from localjudge.judges.judge import Judge

ENTAILMENT_TEMPLATE_VERSION = "entailment-v1"
PREFILL = "Answer:"


class EntailmentMetric(BaseModel):
    """Whether the source supports the target, read as P(yes) to a yes/no question.

    Examples:
        >>> m = EntailmentMetric(kind="entailment", name="supported", fields=["input"],
        ...                      question="Is every claim in the summary supported by the article?")
        >>> m.required_fields, m.unit
        (['input', 'actual_output'], 'response')
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["entailment"] = Field(description="Metric kind.")
    name: str = Field(min_length=1, description="Metric name, used in results.")
    question: str = Field(min_length=1, description="The yes/no question asked after the source and the target.")
    fields: list[FieldName] = Field(min_length=1, description="Source fields shown first, in order.")
    target: FieldName = Field(default="actual_output", description="The field whose support is asked about.")
    field_labels: dict[str, str] = Field(
        default_factory=dict, description="Headings shown for the source fields, e.g. {'input': 'Article'}."
    )
    target_label: str = Field(default="Response", min_length=1, description="Heading of the target.")
    labels: tuple[str, str] = Field(default=("Yes", "No"), description="The answer meaning yes, then no.")
    unit: Literal["response", "sentence"] = Field(
        default="response",
        description="Ask about the whole target, or about each of its sentences (score: the least supported one).",
    )
    threshold: float | None = Field(
        default=None, ge=0, le=1, description="Pass threshold on P(yes); none: no pass/fail."
    )

    @model_validator(mode="after")
    def _check(self) -> EntailmentMetric:
        if len(set(self.fields)) != len(self.fields):
            raise ValueError("fields are repeated")
        if self.target in self.fields:
            raise ValueError(f"the target {self.target!r} cannot also be a source field")
        yes, no = (x.strip() for x in self.labels)
        if not yes or not no or yes.lower() == no.lower():
            raise ValueError(f"labels {list(self.labels)} must be two different non-empty answers")
        return self

    @property
    def required_fields(self) -> list[str]:
        """Fields a case must have to be scored."""
        return [*self.fields, self.target]


def entailment_prompt(judge: Judge, metric: EntailmentMetric, case: TestCase, target_text: str) -> str:
    """The prompt asking whether the case's source fields support `target_text`."""
    from localjudge.metrics.prompts import DEFAULT_LABELS, field_text  # prompts imports the spec

    parts = []
    for field in metric.fields:
        if case.get(field) is None:
            continue
        label = metric.field_labels.get(field, DEFAULT_LABELS.get(field, field))
        parts.append(f"{label}:\n{field_text(case, field)}")
    yes, no = metric.labels
    parts += [f"{metric.target_label}:\n{target_text.strip()}", f"{metric.question} Answer {yes} or {no}."]
    return judge.render("", "\n\n".join(parts), PREFILL)
