"""The bias lab's cases: responses checked, grouped by item, paired, and made into the test cases judges score.

A response is scored as the test case `<item id>|<generator>`; a pair as `<item id>|<generator A>|<generator
B>`, A before B by generator name. `bias.judging` scores them; `bias.records_folder` reads the kept records
back by the same ids.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from typing import Literal

from localjudge.errors import ConfigError, DataError, clip
from localjudge.io.cases import TestCase
from localjudge.kinds.geval.spec import GEvalMetric
from localjudge.kinds.pairwise import PairwiseMetric
from localjudge.runs.generation import ResponseRecord

ID_SEP = "|"  # joins item id and generator names into case ids
Pairs = Literal["cross_family", "all"]
"""Which pairs of an item's responses a pairwise metric compares: those of different families, or all."""


def check_responses(
    responses: Sequence[ResponseRecord], metric: GEvalMetric | None, human_field: str | None = None
) -> None:
    """Refuses response sets the analysis cannot use, saying what to fix.

    Raises:
        DataError: No responses, a repeated (id, generator), a generator with two families, or
            a human score (in `human_field`) that is not a number.
        ConfigError: The metric needs a field no response carries.
    """
    if not responses:
        raise DataError("no responses to judge; make them with `localjudge generate`")
    seen: set[tuple[str, str]] = set()
    families: dict[str, str] = {}
    for r in responses:
        if (r.id, r.generator) in seen:
            raise DataError(f"generator {clip(r.generator)} answered prompt {clip(r.id)} twice; keep one response")
        seen.add((r.id, r.generator))
        if families.setdefault(r.generator, r.generator_family) != r.generator_family:
            raise DataError(f"generator {clip(r.generator)} is tagged with two families; fix the responses file")
        human_score(r, human_field)
    if metric is None:
        return
    have = {
        "input": True,
        "actual_output": True,
        "expected_output": any(r.reference for r in responses),
        "context": any(r.context for r in responses),
        "retrieval_context": False,
    }
    lacking = [f for f in metric.required_fields if not have[f]]
    if lacking:
        source = {"expected_output": "a 'reference' field", "context": "a 'context' field"}
        hint = ", ".join(source.get(f, repr(f)) for f in lacking)
        raise ConfigError(
            f"metric {clip(metric.name)} needs {', '.join(lacking)}, which no response has; "
            f"add {hint} to the prompts file and regenerate, or pick another --metric"
        )


def source_text(r: ResponseRecord, field: str | None = None) -> str:
    """What a judge reads a response against: its prompt, or the prompt's `field` (e.g. an article).

    Raises:
        DataError: The prompt has no text in `field`.
    """
    if field is None:
        return r.input
    value = r.extra.get(field)
    if not isinstance(value, str) or not value:
        raise DataError(f"prompt {clip(r.id)} has no text in its field {clip(field)} for the judges to read")
    return value


def pointwise_case(r: ResponseRecord, source_field: str | None = None) -> TestCase:
    """The test case that scores one response (reference → expected_output)."""
    return TestCase(
        id=ID_SEP.join((r.id, r.generator)),
        input=source_text(r, source_field),
        actual_output=r.response,
        expected_output=r.reference,
        context=r.context,
    )


def by_item(responses: Sequence[ResponseRecord]) -> dict[str, list[ResponseRecord]]:
    """Responses grouped by item in first-seen order, each item's sorted by generator name."""
    out: dict[str, list[ResponseRecord]] = {}
    for r in responses:
        out.setdefault(r.id, []).append(r)
    return {k: sorted(v, key=lambda r: r.generator) for k, v in out.items()}


def response_pairs(
    responses: Sequence[ResponseRecord], pairs: Pairs = "cross_family"
) -> list[tuple[ResponseRecord, ResponseRecord]]:
    """The pairs a pairwise metric compares, A before B by generator name.

    "cross_family": the responses of different families to each item, items sorted by id;
    "all": every pair of each item's responses, items in the order the responses give them.
    """
    groups = by_item(responses)
    if pairs == "all":
        return [pair for item in groups.values() for pair in combinations(item, 2)]
    return [
        (a, b)
        for item in sorted(groups)
        for a, b in combinations(groups[item], 2)
        if a.generator_family != b.generator_family
    ]


def pair_case(
    a: ResponseRecord, b: ResponseRecord, metric: PairwiseMetric, source_field: str | None = None
) -> TestCase:
    """The test case that compares two responses: A as the metric's first output, B as its second."""
    f1, f2 = metric.output_fields
    return TestCase(
        id=ID_SEP.join((a.id, a.generator, b.generator)),
        input=source_text(a, source_field),
        extra={f1: a.response, f2: b.response},
    )


def human_score(r: ResponseRecord, field: str | None) -> float | None:
    """The human score of a response from its prompt's extra fields, or None."""
    if field is None:
        return None
    value = r.extra.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise DataError(
            f"response {clip(r.id)} of {clip(r.generator)}: human field {clip(field)} is {clip(value)}, not a number"
        )
    return float(value)
