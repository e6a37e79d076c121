"""Assertions for your own test suites: does one case pass a metric with a given judge?

An unscored case (missing fields, too little probability on valid scores) fails either
assertion with its reason: it was not judged, so nothing about it can be asserted.

Examples:
    >>> from localjudge import load_judge
    >>> from localjudge.testing.assertions import assert_passes
    >>> judge = load_judge()  # doctest: +SKIP
    >>> assert_passes({"input": "2+2?", "actual_output": "4", "expected_output": "4"},
    ...               "correctness", judge)  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localjudge.errors import ConfigError
from localjudge.io.cases import TestCase, case_from_row
from localjudge.judges.judge import Judge
from localjudge.kinds import Metric, kind_of
from localjudge.kinds.records import ResultRecord
from localjudge.metrics.builtin import resolve_metric
from localjudge.runs.evaluate import evaluate

__all__ = ["assert_fails", "assert_passes", "judge_case"]


def judge_case(
    case: TestCase | dict[str, Any], metric: Metric | str, judge: Judge, steps_cache: Path | None = None
) -> ResultRecord:
    """Evaluates one case (a `TestCase` or a dict of its fields) with one metric (or its name)."""
    if isinstance(case, dict):
        case = case_from_row(case, "<case>", 0)
    if isinstance(metric, str):
        metric = resolve_metric(metric)
    return evaluate([case], [metric], judge, progress=False, steps_cache=steps_cache).records[0]


def describe(record: ResultRecord, threshold: float) -> str:
    """One line on a record: score against threshold, distribution summary, reason."""
    if record.score is None:
        return f"{record.metric} on case {record.case_id!r}: unscored ({record.unscored_reason})"
    top = sorted((record.distribution or {}).items(), key=lambda kv: -kv[1])[:3]
    dist = ", ".join(f"{k}: {p:.2f}" for k, p in top)
    raw = "" if record.raw_score is None else f", raw {record.raw_score:.2f}"
    why = f"; reasoning: {record.reasoning}" if record.reasoning else ""
    return (
        f"{record.metric} on case {record.case_id!r}: score {record.score:.3f} (threshold {threshold:g}{raw}); "
        f"distribution {{{dist}}}, mode {record.mode}, valid mass {record.valid_mass:.2f}{why}"
    )


def _judged(case, metric, judge, threshold, steps_cache) -> tuple[ResultRecord, float, bool | None]:
    record = judge_case(case, metric, judge, steps_cache)
    threshold = record.threshold if threshold is None else threshold
    if threshold is None:  # the kind's own pass mark, if it has one (pairwise: output 1 preferred)
        threshold = kind_of(record.kind).default_pass_mark
    if threshold is None:
        raise ConfigError(
            f"metric {record.metric} has no pass mark ({record.kind} scores rank cases against each other); "
            "give threshold=... to assert against one"
        )
    passed = None if record.score is None else record.score >= threshold
    return record, threshold, passed


def assert_passes(
    case: TestCase | dict[str, Any],
    metric: Metric | str,
    judge: Judge,
    threshold: float | None = None,
    *,
    steps_cache: Path | None = None,
) -> ResultRecord:
    """Raises `AssertionError` unless the case scores at or above the threshold.

    Args:
        case: a `TestCase`, or a dict with DeepEval field names.
        metric: a metric, a built-in metric name or a metric file.
        judge: a loaded judge.
        threshold: on the normalised 0-1 score; default the metric's own (a pairwise metric without
            one: 0.5, i.e. output 1 is preferred).
        steps_cache: directory for generated evaluation steps (default ~/.cache/localjudge).

    Returns:
        The result record, for further checks.
    """
    record, threshold, passed = _judged(case, metric, judge, threshold, steps_cache)
    if not passed:
        raise AssertionError(f"expected a pass: {describe(record, threshold)}")
    return record


def assert_fails(
    case: TestCase | dict[str, Any],
    metric: Metric | str,
    judge: Judge,
    threshold: float | None = None,
    *,
    steps_cache: Path | None = None,
) -> ResultRecord:
    """Raises `AssertionError` unless the case scores below the threshold (see `assert_passes`)."""
    record, threshold, passed = _judged(case, metric, judge, threshold, steps_cache)
    if passed is not False:
        raise AssertionError(f"expected a failure: {describe(record, threshold)}")
    return record
