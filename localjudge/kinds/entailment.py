"""The entailment kind: a yes/no question ("is every claim supported?"), P(yes) read exactly.

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

from typing import Any, Literal

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from localjudge.errors import ConfigError, clip
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds.base import CaseBatch, Explanation, Listing, Measure, MetricContext, MetricKind, Needs
from localjudge.kinds.fields import FieldName, check_fields
from localjudge.kinds.records import EntailmentDetail, ResultRecord, SentenceSupport
from localjudge.kinds.text import DEFAULT_LABELS, field_text
from localjudge.kinds.training import LabelKind, Outcomes, TrainingExample, yes_no
from localjudge.scoring.spans import split_sentences

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
    sentences: Literal["min", "mean"] = Field(
        default="min",
        description="With unit sentence: score the least supported sentence, or the mean P(yes) over sentences.",
    )
    threshold: float | None = Field(
        default=None, ge=0, le=1, description="Pass threshold on P(yes); none: no pass/fail."
    )

    @model_validator(mode="after")
    def _check(self) -> EntailmentMetric:
        check_fields(self.fields, self.target)
        if self.sentences != "min" and self.unit != "sentence":
            raise ValueError("sentences: mean reads sentences; give it with unit: sentence")
        yes, no = (x.strip() for x in self.labels)
        if not yes or not no or yes.lower() == no.lower():
            raise ValueError(f"labels {list(self.labels)} must be two different non-empty answers")
        return self

    @model_serializer(mode="wrap")
    def _omit_default(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # metrics defined before `sentences` keep byte-identical specs in their records
        out = handler(self)
        if out.get("sentences") == "min":
            del out["sentences"]
        return out

    @property
    def required_fields(self) -> list[str]:
        """Fields a case must have to be scored."""
        return [*self.fields, self.target]


def entailment_prompt(judge: Judge, metric: EntailmentMetric, case: TestCase, target_text: str) -> str:
    """The prompt asking whether the case's source fields support `target_text`."""
    parts = []
    for field in metric.fields:
        if case.get(field) is None:
            continue
        label = metric.field_labels.get(field, DEFAULT_LABELS.get(field, field))
        parts.append(f"{label}:\n{field_text(case, field)}")
    yes, no = metric.labels
    parts += [f"{metric.target_label}:\n{target_text.strip()}", f"{metric.question} Answer {yes} or {no}."]
    return judge.render("", "\n\n".join(parts), PREFILL)


class EntailmentKind(MetricKind[EntailmentMetric]):
    """P(yes) to "is it supported?", per response or per sentence (the least supported one scores).

    Per sentence, every sentence of the target is asked about (all of a case's prompts share its
    source, hence one prefill). A case where any prompt puts less than `min_valid_mass` on the two
    answers is unscored, with the reason and every reading taken.
    """

    name = "entailment"
    spec = EntailmentMetric
    detail = EntailmentDetail
    version = ENTAILMENT_TEMPLATE_VERSION
    reads_distribution = True

    def needs(self, metric: EntailmentMetric) -> Needs:
        return Needs(required=metric.required_fields, sort_by=[*metric.fields, metric.target])

    def measure(self, judge: Judge, ctx: MetricContext[EntailmentMetric], case: TestCase) -> Measure:
        m = ctx.metric
        prompt = entailment_prompt(judge, m, case, _target(m, case))
        cuttable = ["input", "actual_output", "expected_output"]
        return Measure(judge.count_tokens(prompt), f"the {m.name} prompt has", cuttable, prompt)

    def score(self, batch: CaseBatch[EntailmentMetric]) -> list[ResultRecord]:
        judge, ctx, items = batch.judge, batch.ctx, batch.items
        m = ctx.metric
        units = [_units(m, _target(m, it.case)) for it in items]
        prompts = [entailment_prompt(judge, m, it.case, u) for it, us in zip(items, units) for u in us]
        dists = iter(judge.score_labels(prompts, list(m.labels), min_valid_mass=ctx.min_valid_mass))
        yes, _ = m.labels
        out = []
        for it, us in zip(items, units):
            fields: dict[str, Any] = dict(prompt_tokens=judge.count_tokens(it.payload), truncated=it.cut)
            if not us:
                out.append(ctx.unscored(judge, it.case, f"the {m.target} is blank", **fields))
                continue
            ds = [next(dists) for _ in us]
            read = [
                SentenceSupport(text=u, p_yes=d.probs[yes] if d.valid_mass > 0 else None, valid_mass=d.valid_mass)
                for u, d in zip(us, ds)
            ]
            detail = EntailmentDetail(unit=m.unit, sentences=read)
            mass = min(d.valid_mass for d in ds)
            bad = next((k for k, d in enumerate(ds) if not d.scored), None)
            if bad is not None:
                where = "" if m.unit == "response" else f" (sentence {bad + 1} of {len(us)})"
                reason = f"{ds[bad].unscored_reason}{where}"
                out.append(ctx.unscored(judge, it.case, reason, valid_mass=mass, detail=detail, **fields))
                continue
            mode: str | None
            if m.sentences == "mean":  # the sentences' distributions averaged
                dist = {k: float(np.mean([d.probs[k] for d in ds])) for k in ds[0].probs}
                p, mode = dist[yes], max(dist, key=lambda k: dist[k])
            else:
                worst = min(range(len(us)), key=lambda k: ds[k].probs[yes])
                p = ds[worst].probs[yes]
                dist, mode = dict(ds[worst].probs), ds[worst].mode
            scored = ctx.record(
                judge, it.case, p, raw_score=p, distribution=dist, valid_mass=mass, mode=mode, detail=detail, **fields
            )
            out.append(scored)
        return out

    def describe(self, metric: EntailmentMetric) -> Listing:
        how = f"per {metric.unit}" + (", their mean" if metric.sentences == "mean" else "")
        return Listing(f"P({metric.labels[0]}) {how}", f"{', '.join(metric.fields)} -> {metric.target}")

    # -- learning from yes/no labels: taught P(yes) of the whole response, read back as P(yes)

    trainable = True

    def label_kind(self, metric: EntailmentMetric) -> LabelKind:
        return "binary"

    def check_trainable(self, metric: EntailmentMetric) -> None:
        if metric.unit != "response":
            raise ConfigError(
                f"metric {clip(metric.name)} asks about each sentence and keeps the least supported one; a label "
                "for the whole response does not say which sentence is wrong: tune a metric with unit: response"
            )

    def outcomes(self, judge: Judge, metric: EntailmentMetric) -> Outcomes:
        return Outcomes(judge.label_tree(list(metric.labels)), self.outcome_values(metric))

    def outcome_values(self, metric: EntailmentMetric) -> np.ndarray:
        return np.array([1.0, 0.0])

    def training_examples(self, metric: EntailmentMetric, payload: Any, label: float) -> list[TrainingExample]:
        return [TrainingExample(payload, yes_no(label))]

    def explain(self, record: ResultRecord) -> Explanation:
        if record.score is None or not isinstance(record.detail, EntailmentDetail):
            return super().explain(record)
        asked = record.detail.sentences
        worst = min((s for s in asked if s.p_yes is not None), key=lambda s: s.p_yes or 0.0, default=None)
        where = "" if len(asked) == 1 or worst is None else f", least supported sentence: {worst.text[:80]!r}"
        label = record.metric_spec.get("labels", ["Yes"])[0]
        return Explanation(f"P({label}) {record.score:.3f} over {len(asked)} question(s){where}")


def _target(m: EntailmentMetric, case: TestCase) -> str:
    return str(case.get(m.target) or "").strip()


def _units(m: EntailmentMetric, text: str) -> list[str]:
    """What is asked about: the whole target, or each of its sentences (none when it is blank)."""
    if not text:
        return []
    return [text] if m.unit == "response" else (split_sentences(text) or [text])


ENTAILMENT = EntailmentKind()
