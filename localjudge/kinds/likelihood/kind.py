"""The likelihood kind: how likely the judge finds the output itself, token by token (GPTScore, PMI).

The prompt (`kinds.likelihood.prompts`) shows the condition fields and an instruction naming the
criterion; the score aggregates the log-probabilities of the target's tokens after it (mean, sum,
or a token-level reading that lets one surprising claim decide). With `pmi`, each token's
log-probability without the source fields is subtracted first. Under `--truncate` the condition
is cut before the target: the text scored stays whole while it can.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds.base import CaseBatch, Explanation, Listing, Measure, MetricContext, MetricKind, Needs
from localjudge.kinds.likelihood import prompts as L
from localjudge.kinds.likelihood.spec import LikelihoodMetric
from localjudge.kinds.records import (
    LikelihoodDetail,
    ResultRecord,
    SentenceValue,
    TokenReading,
    TokenSpan,
    TokenStats,
)
from localjudge.scoring.aggregate import TokenReading as Aggregated
from localjudge.scoring.aggregate import UnitValue, read_tokens
from localjudge.scoring.likelihood import ContinuationLogprobs, split_boundary
from localjudge.scoring.spans import split_sentences
from localjudge.stats.numbers import finite


@dataclass(frozen=True)
class _Counts:
    """What the judge reads for one case, in tokens, each counted as the engine tokenises it."""

    condition: int  # the prompt the target follows (boundary rule applied), the target excluded
    target: int  # the continuation scored
    contrast: int | None  # the PMI contrast prompt, the target excluded; None without PMI

    @property
    def window(self) -> int:
        """Tokens the longer reading needs in the judge's context: the condition and the target."""
        return self.condition + self.target


class LikelihoodKind(MetricKind[LikelihoodMetric]):
    """The target's token log-probabilities (or per-token PMI), aggregated (see the module docstring)."""

    name = "likelihood"
    spec = LikelihoodMetric
    detail = LikelihoodDetail
    version = L.LIKELIHOOD_TEMPLATE_VERSION

    def needs(self, metric: LikelihoodMetric) -> Needs:
        return Needs(required=metric.required_fields, sort_by=[*metric.fields, metric.target])

    def measure(self, judge: Judge, ctx: MetricContext[LikelihoodMetric], case: TestCase) -> Measure:
        m = ctx.metric
        read = _read(judge, m, case)
        # the condition is cut before the target: the text scored stays whole while it can
        cuttable = [f for f in m.fields if case.get(f) is not None] or [m.target]
        return Measure(read.counts.window, f"the {m.name} prompt and {m.target} have", cuttable, read)

    def score(self, batch: CaseBatch[LikelihoodMetric]) -> list[ResultRecord]:
        """Records of cases that have every field the metric needs, in input order."""
        judge, ctx, items = batch.judge, batch.ctx, batch.items
        m = ctx.metric
        reads: list[_Read] = [it.payload for it in items]
        if m.sentences is not None:
            return _score_sentences(batch, reads)
        blank = [not r.continuation.strip() for r in reads]
        live = [r for r, b in zip(reads, blank) if not b]
        prompts = [r.prompt for r in live] + [r.contrast for r in live if r.contrast is not None]
        conts = [r.continuation for r in live] * (2 if m.pmi is not None else 1)
        lls = iter(judge.loglikelihood(prompts, conts))
        given = {id(r): next(lls) for r in live}
        contrast = {id(r): next(lls) for r in live} if m.pmi is not None else {}
        out = []
        for it, r, b in zip(items, reads, blank):
            fields = dict(prompt_tokens=r.counts.condition, truncated=it.cut)
            if b:  # nothing was read; the prompt's size still holds
                detail = _detail(m, r.counts, None, None)
                out.append(ctx.unscored(judge, it.case, f"the {m.target} is blank", detail=detail, **fields))
                continue
            out.append(_record(ctx, it.case, r.counts, given[id(r)], contrast.get(id(r)), fields, judge))
        return out

    def notes(
        self, scores: Sequence[float], mean_valid_mass: float | None, has_threshold: bool, flipped: int
    ) -> list[str]:
        if has_threshold:
            return []
        return [
            "likelihood scores rank cases against each other (higher: likelier given the source); "
            "they are not pass/fail judgments and have no pass mark"
        ]

    def describe(self, metric: LikelihoodMetric) -> Listing:
        words = "" if metric.unit == "token" else ", words"
        words += f", {metric.sentences} of sentences" if metric.sentences else ""
        scale = f"{'PMI' if metric.pmi else 'log-prob'} ({metric.aggregation}{words})"
        return Listing(scale, f"{', '.join(metric.fields) or '-'} -> {metric.target}")

    def explain(self, record: ResultRecord) -> Explanation:
        d, raw, score = record.detail, record.raw_score, record.score
        if not isinstance(d, LikelihoodDetail) or raw is None or score is None:
            return super().explain(record)
        if d.tokens is not None:
            return Explanation(_tokens(d.tokens, raw, score))
        if d.sentences:
            least = min(d.sentences, key=lambda x: math.inf if x.value is None else x.value)
            how = record.metric_spec.get("sentences", "mean")
            return Explanation(
                f"{how} over {len(d.sentences)} sentences, each read alone after the prompt: {raw:.3f}, score "
                f"{score:.3f}; least likely sentence {least.text[:80]!r} ({least.value})"
            )
        what = "mean log-probability per token" if d.aggregation == "mean" else "log-probability"
        target = record.metric_spec.get("target", "actual_output")
        if d.without_source is not None:
            given, without = getattr(d.given_source, d.aggregation), getattr(d.without_source, d.aggregation)
            return Explanation(
                f"PMI {raw:.3f}: {what} of the {target} ({d.n_tokens} tokens) {given:.3f} given the source, "
                f"{without:.3f} without it; score sigmoid(PMI) = {score:.3f}"
            )
        return Explanation(
            f"{what} of the {target} ({d.n_tokens} tokens) {raw:.3f}; score exp({raw:.3f}) = {score:.3f}"
        )


def _tokens(t: TokenReading, raw: float, score: float) -> str:
    """A token-level reading in words: the aggregate and the units that drove it down."""
    what = "PMI" if t.values == "pmi" else "log-probability"
    worst = "; ".join(f"{u.text.strip()!r} {u.value:.2f}" for u in t.worst)
    sentence = f"; worst sentence {t.worst_sentence.text.strip()[:80]!r}" if t.worst_sentence is not None else ""
    return (
        f"{t.aggregation} of the {t.units} {t.unit}s' {what} ({t.focus}): {raw:.3f}, score {score:.3f}; "
        f"lowest: {worst}{sentence}"
    )


def _value(m: LikelihoodMetric, ll: ContinuationLogprobs) -> float:
    return ll.mean if m.aggregation == "mean" else ll.sum


def _stats(ll: ContinuationLogprobs) -> TokenStats:
    return TokenStats(sum=finite(ll.sum), mean=finite(ll.mean), min=finite(ll.min))


def _detail(
    m: LikelihoodMetric,
    counts: _Counts,
    given: ContinuationLogprobs | None,
    contrast: ContinuationLogprobs | None,
    tokens: TokenReading | None = None,
) -> LikelihoodDetail:
    """The token counts, and the readings of the target under each condition that was read."""
    return LikelihoodDetail(
        n_tokens=counts.target,
        condition_tokens=counts.condition,
        contrast_tokens=counts.contrast,
        aggregation=m.aggregation,
        given_source=_stats(given) if given is not None else None,
        without_source=_stats(contrast) if contrast is not None else None,
        pmi_min=(
            finite(min(a - b for a, b in zip(given.logprobs, contrast.logprobs)))
            if given is not None and contrast is not None
            else None
        ),
        tokens=tokens,
    )


def _span(u: UnitValue) -> TokenSpan:
    return TokenSpan(text=u.text, value=u.value, start=u.start, tokens=u.stop - u.start, word=u.word)


def read_target(
    m: LikelihoodMetric,
    given: ContinuationLogprobs,
    contrast: ContinuationLogprobs | None,
    surfaces: Sequence[str],
) -> Aggregated:
    """The metric's aggregate of the target's token log-probabilities (with a contrast: per-token PMI).

    `surfaces` are the judge's token surfaces (`backend.token_surfaces()`), indexed by token id.
    """
    values = np.array(given.logprobs)  # (T,)
    if contrast is not None:
        values = values - np.array(contrast.logprobs)  # per-token PMI: the very same tokens
    return read_tokens(
        values,
        [surfaces[i] for i in given.token_ids],
        m.aggregation,
        unit=m.unit,
        focus=m.focus,
        quantile=m.quantile,
        below=m.below,
    )


def _read_tokens(
    judge: Judge, m: LikelihoodMetric, given: ContinuationLogprobs, contrast: ContinuationLogprobs | None
) -> tuple[float, TokenReading]:
    """The token-level aggregate of the target and what the record shows of it."""
    r = read_target(m, given, contrast, judge.backend.token_surfaces())
    reading = TokenReading(
        values="pmi" if contrast is not None else "logprob",
        aggregation=m.aggregation,
        unit=m.unit,
        focus=m.focus,
        units=r.units,
        worst=[_span(u) for u in r.worst],
        worst_sentence=_span(r.worst_sentence) if r.worst_sentence is not None else None,
    )
    return r.value, reading


def _to_score(m: LikelihoodMetric, raw: float, pmi: bool) -> float:
    """raw_score on 0..1: a log-probability as a probability, a PMI as the share of the two conditions'."""
    if m.aggregation == "count_below":
        return 1 / (1 - raw)  # raw = minus the count: 1 with no unit below, 1/2 with one, ...
    return 1 / (1 + math.exp(-raw)) if pmi else math.exp(raw)


def _record(
    ctx: MetricContext[LikelihoodMetric],
    case: TestCase,
    counts: _Counts,
    given: ContinuationLogprobs,
    contrast: ContinuationLogprobs | None,
    fields: dict,
    judge: Judge,
) -> ResultRecord:
    m = ctx.metric
    if not m.token_level:  # as before token-level readings, to the bit
        raw = _value(m, given) - (_value(m, contrast) if contrast is not None else 0.0)
        detail = _detail(m, counts, given, contrast)
    else:
        raw, reading = _read_tokens(judge, m, given, contrast)
        detail = _detail(m, counts, given, contrast, reading)
        if reading.units == 0:
            why = "the target has no salient word (a number, or a capitalised word past a sentence's start)"
            reason = f"{why}, and the metric reads only those (focus: salient)"
            return ctx.unscored(judge, case, reason, detail=detail, **fields)
    if not math.isfinite(raw):
        return ctx.unscored(judge, case, "a log-probability of the target is not finite", detail=detail, **fields)
    return ctx.record(judge, case, _to_score(m, raw, contrast is not None), raw_score=raw, detail=detail, **fields)


def _score_sentences(batch: CaseBatch[LikelihoodMetric], reads: list[_Read]) -> list[ResultRecord]:
    """Records of a metric with `sentences`: each sentence of the target read alone after the prompt (and the
    contrast prompt), all of a batch's sentences in one engine call so a source's KV serves every one."""
    judge, ctx, items = batch.judge, batch.ctx, batch.items
    m = ctx.metric
    split = [split_sentences(r.continuation.strip()) or [r.continuation.strip()] for r in reads]
    prompts, conts = [], []
    for r, sents in zip(reads, split):
        for sent in sents:
            if sent:
                prompts.append(r.prompt)
                conts.append(L.continuation(r.prompt, sent))
    contrasts = [r.contrast for r, sents in zip(reads, split) for sent in sents if sent and r.contrast is not None]
    lls = iter(judge.loglikelihood(prompts + contrasts, conts + (conts if contrasts else [])))
    given = [[next(lls) for sent in sents if sent] for sents in split]
    without = [[next(lls) for sent in sents if sent] for sents in split] if contrasts else [[] for _ in split]
    out = []
    for it, r, sents, g, w in zip(items, reads, split, given, without):
        fields: dict[str, Any] = dict(prompt_tokens=r.counts.condition, truncated=it.cut)
        if not g:  # nothing was read; the prompt's size still holds
            detail = _detail(m, r.counts, None, None)
            out.append(ctx.unscored(judge, it.case, f"the {m.target} is blank", detail=detail, **fields))
            continue
        values = [_value(m, a) - (_value(m, b) if w else 0.0) for a, b in zip(g, w or g)]
        raw = float(np.mean(values)) if m.sentences == "mean" else min(values)
        whole = ContinuationLogprobs(
            token_ids=tuple(t for a in g for t in a.token_ids), logprobs=tuple(x for a in g for x in a.logprobs)
        )
        contrast = (
            ContinuationLogprobs(
                token_ids=tuple(t for a in w for t in a.token_ids), logprobs=tuple(x for a in w for x in a.logprobs)
            )
            if w
            else None
        )
        read = [
            SentenceValue(text=t, value=finite(v), tokens=a.n_tokens)
            for t, v, a in zip([x for x in sents if x], values, g)
        ]
        detail = _detail(m, r.counts, whole, contrast).model_copy(update={"sentences": read})
        if not math.isfinite(raw):
            out.append(
                ctx.unscored(judge, it.case, "a log-probability of a sentence is not finite", detail=detail, **fields)
            )
            continue
        score = _to_score(m, raw, contrast is not None)
        out.append(ctx.record(judge, it.case, score, raw_score=raw, detail=detail, **fields))
    return out


@dataclass(frozen=True)
class _Read:
    """One case's prompts, the continuation read and its token counts (the boundary rule applied)."""

    prompt: str
    contrast: str | None
    continuation: str
    counts: _Counts


def _read(judge: Judge, m: LikelihoodMetric, case: TestCase) -> _Read:
    prompt = L.condition_prompt(judge, m, case)
    contrast = L.contrast_prompt(judge, m, case)
    cont = L.continuation(prompt, str(case.get(m.target) or ""))
    head, scored = split_boundary(prompt, cont)  # as `Judge.loglikelihood` splits them
    counts = _Counts(
        condition=judge.count_tokens(head),
        target=len(judge.backend.encode_continuation(scored)),
        contrast=None if contrast is None else judge.count_tokens(split_boundary(contrast, cont)[0]),
    )
    return _Read(prompt, contrast, cont, counts)


LIKELIHOOD = LikelihoodKind()
