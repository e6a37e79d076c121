"""The one context-length policy of every kind: refuse an over-long case, or cut it under `--truncate`.

Each kind measures what a case takes of the judge's context (`MetricKind.measure`: the rendered
prompt, or a prompt and the text scored after it) and names the fields that may be cut. A case
within the judge's context is scored as it is. One over it is an error naming the case and what
was counted, unless `--truncate` is on; then the longest of the cuttable fields (in characters,
a list of passages counted whole) is cut to min(0.95, 0.95 × context / tokens) of its length,
and the case measured again, up to 8 times. Every cut is recorded in the record's `truncated`.
"""

from __future__ import annotations

from typing import Any

from localjudge.errors import ContextLengthError, clip
from localjudge.io.cases import CASE_FIELDS, LIST_FIELDS, TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds.base import MetricContext, ReadyCase

MAX_CUTS = 8


def within_context(judge: Judge, ctx: MetricContext, case: TestCase) -> ReadyCase:
    """The case within the judge's context (cut under `--truncate`), with what its kind measured.

    Raises:
        ContextLengthError: the case is too long and `--truncate` is off, or no cut brings it within the context length.
    """
    measured = ctx.kind.measure(judge, ctx, case)
    if measured is None:  # the kind puts nothing in the judge's context
        return ReadyCase(case, None, None)
    limit, n = judge.info.context_length, measured.tokens
    if n <= limit:
        return ReadyCase(case, measured.payload, None)
    if not ctx.truncate:
        raise ContextLengthError(
            f"case {clip(case.id)}: {measured.what} {n} tokens, more than the judge's context of {limit}; "
            "shorten the case or pass --truncate"
        )
    notes, current = [], case
    for _ in range(MAX_CUTS):
        if not measured.cuttable:
            break
        field = max(measured.cuttable, key=lambda f: length(current.get(f)))
        size = length(current.get(field))
        keep = int(size * min(0.95, limit / n * 0.95))
        notes.append(f"{field} cut from {size} to {keep} characters")
        current = _with(current, field, cut(current.get(field), keep, field))
        measured = ctx.kind.measure(judge, ctx, current)
        assert measured is not None  # a kind that measured a case measures its cut
        n = measured.tokens
        if n <= limit:
            return ReadyCase(current, measured.payload, "; ".join(notes))
    raise ContextLengthError(f"case {clip(case.id)}: cannot truncate the {ctx.metric.name} prompt to {limit} tokens")


def length(value: Any) -> int:
    """Characters of a field: a text's, or a list of passages' together; 0 when absent."""
    return sum(len(v) for v in value) if isinstance(value, list) else len(value or "")


def cut(value: Any, keep: int, field: str) -> Any:
    """The first `keep` characters of a text, or of a list of passages (later passages go first)."""
    if field not in LIST_FIELDS:
        return (value or "")[:keep]
    out, left = [], keep
    for passage in value:
        if left <= 0:
            break
        out.append(passage[:left])
        left -= len(passage)
    return out or [""]


def _with(case: TestCase, field: str, value: Any) -> TestCase:
    if field in CASE_FIELDS:
        return case.model_copy(update={field: value})
    return case.model_copy(update={"extra": {**case.extra, field: value}})
