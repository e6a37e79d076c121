"""Scores one chunk of cases with a likelihood metric: prompts, PMI contrast, records."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from localjudge.errors import ContextLengthError, clip
from localjudge.io.cases import LIST_FIELDS, TestCase
from localjudge.judges.judge import Judge
from localjudge.metrics import likelihood as L
from localjudge.metrics.spec import LikelihoodMetric
from localjudge.runs.records import LikelihoodDetail, ResultRecord, TokenReading, TokenSpan, TokenStats, unscored
from localjudge.scoring.aggregate import UnitValue, read_tokens
from localjudge.scoring.likelihood import ContinuationLogprobs, split_boundary

if TYPE_CHECKING:
    from localjudge.runs.chunk import MetricContext


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


@dataclass(frozen=True)
class _Item:
    """One case ready to score: its prompts, the continuation read, token counts, what --truncate cut."""

    case: TestCase
    prompt: str
    contrast: str | None
    continuation: str
    counts: _Counts
    cut: str | None


def score_likelihood(
    judge: Judge, ctx: MetricContext, cases: Sequence[TestCase], base: Callable[[TestCase], dict]
) -> list[ResultRecord]:
    """Records of cases that have every field the metric needs, in input order.

    `ctx` is the run's `MetricContext`; `base(case)` gives the provenance fields of a record.
    """
    m = ctx.metric
    assert isinstance(m, LikelihoodMetric)  # score_chunk's dispatch
    items = [_fit(judge, m, c, ctx.truncate) for c in cases]
    blank = [not it.continuation.strip() for it in items]
    live = [it for it, b in zip(items, blank) if not b]
    prompts = [it.prompt for it in live] + [it.contrast for it in live if it.contrast is not None]
    conts = [it.continuation for it in live] * (2 if m.pmi is not None else 1)
    lls = iter(judge.loglikelihood(prompts, conts))
    given = {id(it): next(lls) for it in live}
    contrast = {id(it): next(lls) for it in live} if m.pmi is not None else {}
    out = []
    for it, b in zip(items, blank):
        fields = dict(prompt_tokens=it.counts.condition, truncated=it.cut)
        if b:  # nothing was read; the prompt's size still holds
            detail = _detail(m, it.counts, None, None)
            out.append(unscored(base(it.case), f"the {m.target} is blank", likelihood=detail, **fields))
            continue
        out.append(_record(base(it.case), m, it.counts, given[id(it)], contrast.get(id(it)), fields, judge))
    return out


def _value(m: LikelihoodMetric, ll: ContinuationLogprobs) -> float:
    return ll.mean if m.aggregation == "mean" else ll.sum


def _stats(ll: ContinuationLogprobs) -> TokenStats:
    return TokenStats(sum=_finite(ll.sum), mean=_finite(ll.mean), min=_finite(ll.min))


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


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
            _finite(min(a - b for a, b in zip(given.logprobs, contrast.logprobs)))
            if given is not None and contrast is not None
            else None
        ),
        tokens=tokens,
    )


def _span(u: UnitValue) -> TokenSpan:
    return TokenSpan(text=u.text, value=u.value, start=u.start, tokens=u.stop - u.start, word=u.word)


def _read_tokens(
    judge: Judge, m: LikelihoodMetric, given: ContinuationLogprobs, contrast: ContinuationLogprobs | None
) -> tuple[float, TokenReading]:
    """The token-level aggregate of the target and what the record shows of it."""
    values = np.array(given.logprobs)  # (T,)
    if contrast is not None:
        values = values - np.array(contrast.logprobs)  # per-token PMI: the very same tokens
    surfaces = judge.backend.token_surfaces()
    r = read_tokens(
        values,
        [surfaces[i] for i in given.token_ids],
        m.aggregation,
        unit=m.unit,
        focus=m.focus,
        quantile=m.quantile,
        below=m.below,
    )
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
    base: dict,
    m: LikelihoodMetric,
    counts: _Counts,
    given: ContinuationLogprobs,
    contrast: ContinuationLogprobs | None,
    fields: dict,
    judge: Judge,
) -> ResultRecord:
    if not m.token_level:  # as before token-level readings, to the bit
        raw = _value(m, given) - (_value(m, contrast) if contrast is not None else 0.0)
        detail = _detail(m, counts, given, contrast)
    else:
        raw, reading = _read_tokens(judge, m, given, contrast)
        detail = _detail(m, counts, given, contrast, reading)
        if reading.units == 0:
            why = "the target has no salient word (a number, or a capitalised word past a sentence's start)"
            return unscored(
                base, f"{why}, and the metric reads only those (focus: salient)", likelihood=detail, **fields
            )
    if not math.isfinite(raw):
        return unscored(base, "a log-probability of the target is not finite", likelihood=detail, **fields)
    score = _to_score(m, raw, contrast is not None)
    passed = None if m.threshold is None else score >= m.threshold
    return ResultRecord(
        **base,
        score=score,
        raw_score=raw,
        passed=passed,
        distribution=None,
        valid_mass=None,
        likelihood=detail,
        **fields,
    )


def _measure(judge: Judge, m: LikelihoodMetric, case: TestCase) -> tuple[str, str | None, str, _Counts]:
    prompt = L.condition_prompt(judge, m, case)
    contrast = L.contrast_prompt(judge, m, case)
    cont = L.continuation(prompt, str(case.get(m.target) or ""))
    head, scored = split_boundary(prompt, cont)  # as `Judge.loglikelihood` splits them
    counts = _Counts(
        condition=judge.count_tokens(head),
        target=len(judge.backend.encode_continuation(scored)),
        contrast=None if contrast is None else judge.count_tokens(split_boundary(contrast, cont)[0]),
    )
    return prompt, contrast, cont, counts


def _fit(judge: Judge, m: LikelihoodMetric, case: TestCase, truncate: bool) -> _Item:
    """The case's prompts, cutting the longest condition field under --truncate, else failing when too long."""
    prompt, contrast, cont, counts = _measure(judge, m, case)
    limit, n = judge.info.context_length, counts.window
    if n <= limit:
        return _Item(case, prompt, contrast, cont, counts, None)
    if not truncate:
        raise ContextLengthError(
            f"case {clip(case.id)}: the {m.name} prompt and {m.target} have {n} tokens, more than the judge's "
            f"context of {limit}; shorten the case or pass --truncate"
        )
    notes, current = [], case
    for _ in range(8):
        # the condition is cut before the target: the text scored stays whole while it can
        present = [f for f in m.fields if current.get(f) is not None] or [m.target]
        field = max(present, key=lambda f: _length(current.get(f)))
        keep = int(_length(current.get(field)) * min(0.95, limit / n * 0.95))
        notes.append(f"{field} cut from {_length(current.get(field))} to {keep} characters")
        current = current.model_copy(update={field: _cut(current.get(field), keep, field)})
        prompt, contrast, cont, counts = _measure(judge, m, current)
        n = counts.window
        if n <= limit:
            return _Item(current, prompt, contrast, cont, counts, "; ".join(notes))
    raise ContextLengthError(f"case {clip(case.id)}: cannot truncate the {m.name} prompt to {limit} tokens")


def _length(value) -> int:
    return sum(len(v) for v in value) if isinstance(value, list) else len(value or "")


def _cut(value, keep: int, field: str):
    """The first `keep` characters of a text, or of a list of passages (later passages go first)."""
    if field not in LIST_FIELDS:
        return value[:keep]
    out, left = [], keep
    for passage in value:
        if left <= 0:
            break
        out.append(passage[:left])
        left -= len(passage)
    return out or [""]
