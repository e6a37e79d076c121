"""Scores one chunk of cases with a likelihood metric: prompts, PMI contrast, records."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from localjudge.errors import ContextLengthError, clip
from localjudge.io.cases import LIST_FIELDS, TestCase
from localjudge.judges.judge import Judge
from localjudge.metrics import likelihood as L
from localjudge.metrics.spec import LikelihoodMetric
from localjudge.runs.records import LikelihoodDetail, ResultRecord, TokenStats, unscored
from localjudge.scoring.likelihood import ContinuationLogprobs

if TYPE_CHECKING:
    from localjudge.runs.chunk import MetricContext


@dataclass(frozen=True)
class _Item:
    """One case ready to score: its prompts, the continuation read, what --truncate cut."""

    case: TestCase
    prompt: str
    contrast: str | None
    continuation: str
    tokens: int
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
        fields = dict(prompt_tokens=it.tokens, truncated=it.cut)
        if b:
            out.append(unscored(base(it.case), f"the {m.target} is blank", **fields))
            continue
        out.append(_record(base(it.case), m, given[id(it)], contrast.get(id(it)), fields))
    return out


def _value(m: LikelihoodMetric, ll: ContinuationLogprobs) -> float:
    return ll.mean if m.aggregation == "mean" else ll.sum


def _stats(ll: ContinuationLogprobs) -> TokenStats:
    return TokenStats(sum=ll.sum, mean=ll.mean, min=ll.min)


def _record(
    base: dict, m: LikelihoodMetric, given: ContinuationLogprobs, contrast: ContinuationLogprobs | None, fields: dict
) -> ResultRecord:
    raw = _value(m, given) - (_value(m, contrast) if contrast is not None else 0.0)
    if not math.isfinite(raw):
        return unscored(base, "a log-probability of the target is not finite", **fields)
    # a log-probability maps to a probability; a PMI to the share of the two conditions' likelihood
    score = 1 / (1 + math.exp(-raw)) if contrast is not None else math.exp(raw)
    detail = LikelihoodDetail(
        n_tokens=given.n_tokens,
        aggregation=m.aggregation,
        given_source=_stats(given),
        without_source=_stats(contrast) if contrast is not None else None,
        pmi_min=min(a - b for a, b in zip(given.logprobs, contrast.logprobs)) if contrast is not None else None,
    )
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


def _measure(judge: Judge, m: LikelihoodMetric, case: TestCase) -> tuple[str, str | None, str, int]:
    prompt = L.condition_prompt(judge, m, case)
    cont = L.continuation(prompt, str(case.get(m.target) or ""))
    n = judge.count_tokens(prompt.rstrip(" \t")) + len(judge.backend.encode_continuation(cont))
    return prompt, L.contrast_prompt(judge, m, case), cont, n


def _fit(judge: Judge, m: LikelihoodMetric, case: TestCase, truncate: bool) -> _Item:
    """The case's prompts, cutting the longest condition field under --truncate, else failing when too long."""
    prompt, contrast, cont, n = _measure(judge, m, case)
    limit = judge.info.context_length
    if n <= limit:
        return _Item(case, prompt, contrast, cont, n, None)
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
        prompt, contrast, cont, n = _measure(judge, m, current)
        if n <= limit:
            return _Item(current, prompt, contrast, cont, n, "; ".join(notes))
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
