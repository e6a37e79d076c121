"""Any localjudge metric as a DeepEval metric, scored by a local judge.

`LocalJudgeMetric` wraps a built-in metric name, a metric file or a `Metric` object (G-Eval,
likelihood, reference-overlap or hybrid) as a subclass of DeepEval's `BaseMetric`, so that
`assert_test`, `evaluate` and `deepeval test run` use it like one of DeepEval's own. `GEval`
builds one from DeepEval's GEval arguments, in DeepEval's order (name, evaluation_params, criteria,
evaluation_steps, rubric, model, threshold, top_logprobs, async_mode, strict_mode, verbose_mode), with
`judge` in place of `model`; `model` and `strict_mode=True` are refused, each saying why. An
`LLMTestCase`'s input, actual_output, expected_output, context and retrieval_context become the
same fields of a localjudge `TestCase`.

After `measure`: `score` is the record's 0-1 score (G-Eval: (expected - low) / (high - low), the
expected score over the judge's full distribution on the scale; likelihood: exp(mean log-prob)
or sigmoid(PMI)); `reason` says what it is made of; `score_breakdown` holds the distribution,
valid mass, expected score and log-probabilities (see `readout.breakdown`); `record` is the
whole localjudge `ResultRecord`. An unscored case has no score: `error` says why and `success`
is False, so `assert_test` fails on it and `evaluate` reports it as errored.

Importing this module opts DeepEval's telemetry out (`DEEPEVAL_TELEMETRY_OPT_OUT=1`) unless that
variable is already set: a local judge is there to keep test cases on the machine.

Examples:
    >>> from deepeval.test_case import LLMTestCase
    >>> from localjudge.integrations.deepeval import LocalJudgeMetric
    >>> from localjudge.testing import fake_judge
    >>> metric = LocalJudgeMetric("correctness", judge=fake_judge(lambda prompt: {"4": 0.5, "5": 0.5}))
    >>> metric.measure(LLMTestCase(input="2+2?", actual_output="4", expected_output="4"))
    0.875
    >>> metric.is_successful(), metric.score_breakdown["distribution"]
    (True, {'1': 0.0, '2': 0.0, '3': 0.0, '4': 0.5, '5': 0.5})
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from localjudge.errors import ConfigError, LocalJudgeError, MissingExtraError, clip, install_command
from localjudge.integrations.readout import breakdown, log, reason
from localjudge.integrations.shared import shared_judge
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds import Metric, kind_of, missing_fields
from localjudge.kinds.fields import FieldName
from localjudge.kinds.geval.spec import GEvalMetric, RubricRange
from localjudge.kinds.records import ResultRecord
from localjudge.metrics.builtin import resolve_metric
from localjudge.metrics.spec import metric_from_dict
from localjudge.runs.evaluate import evaluate

# before deepeval is first imported: its settings read the environment, and its telemetry
# (PostHog) would otherwise send an event per run and create ./.deepeval at import
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")


TESTED_DEEPEVAL = "4.3.1"
"""The deepeval release the adapter is tested with (the Makefile and the README install it)."""
INSTALL_DEEPEVAL = f"{install_command('deepeval')} && pip install --no-deps deepeval=={TESTED_DEEPEVAL}"
"""How to install it: deepeval's caps on click and rich conflict with transformers' (pyproject.toml, deepeval extra)."""


try:
    from deepeval.errors import MissingTestCaseParamsError
    from deepeval.metrics import BaseMetric
    from deepeval.test_case import LLMTestCase
except ImportError as exc:  # pragma: no cover - the tests run with the extra installed
    raise MissingExtraError.of("the DeepEval adapter", "the deepeval package", exc, INSTALL_DEEPEVAL) from None

__all__ = ["GEval", "LocalJudgeMetric", "MissingFieldsError", "shared_judge", "to_test_case"]

FIELDS: tuple[FieldName, ...] = ("input", "actual_output", "expected_output", "context", "retrieval_context")
DEEPEVAL_LABELS = {
    "input": "Input",
    "actual_output": "Actual Output",
    "expected_output": "Expected Output",
    "context": "Context",
    "retrieval_context": "Retrieval Context",
}
"""The headings DeepEval's GEval gives the fields, so a ported metric shows the judge the same text."""


class MissingFieldsError(MissingTestCaseParamsError, LocalJudgeError):
    """A test case lacks a field the metric reads (DeepEval skips it under `deepeval test run -s`)."""


def to_test_case(test_case: LLMTestCase) -> TestCase:
    """A DeepEval `LLMTestCase` as a localjudge `TestCase` (its name, if any, becomes the id)."""
    if test_case.multimodal:
        raise ConfigError(
            f"test case {clip(test_case.name or test_case.input)} is multimodal; localjudge judges text only: "
            "give it text fields"
        )
    retrieved = test_case.retrieval_context
    return TestCase(
        id=test_case.name or "deepeval-case",
        input=test_case.input or None,
        actual_output=test_case.actual_output,
        expected_output=test_case.expected_output,
        context=list(test_case.context) if test_case.context else None,
        # DeepEval's own rendering of a RetrievedContextData: "source: text"
        retrieval_context=[p if isinstance(p, str) else f"{p.source}: {p.context}" for p in retrieved]
        if retrieved
        else None,
    )


class LocalJudgeMetric(BaseMetric):
    """A localjudge metric that DeepEval runs like its own, on a local judge.

    Args:
        metric: a built-in metric name, a .yaml/.json metric file, or a `Metric` object; pairwise
            metrics compare two outputs, which an `LLMTestCase` does not have.
        judge: a loaded `Judge`, or a judge name for `shared_judge` (None: the registry default).
        threshold: pass mark on the 0-1 score; default the metric's own (likelihood metrics have
            none: they rank cases, so `assert_test` needs one given here).
        steps_cache: directory for generated evaluation steps (default ~/.cache/localjudge).
        async_mode: DeepEval's: its runners call `a_measure` (True) or `measure`; either judges in this thread.
        verbose_mode: DeepEval's: print `verbose_logs` (judge, steps, distribution, reason) after each case.

    Attributes:
        score: the 0-1 score, None when unscored.
        reason: what the score is made of (or why there is none).
        score_breakdown: distribution, valid mass, expected score, log-probabilities (`readout.breakdown`).
        record: the localjudge `ResultRecord` of the last case measured.
        error: None, or why the case is unscored ("unscored: ...").
    """

    def __init__(
        self,
        metric: Metric | str,
        judge: Judge | str | None = None,
        threshold: float | None = None,
        steps_cache: str | Path | None = None,
        *,
        async_mode: bool = True,
        verbose_mode: bool = False,
    ):
        m = resolve_metric(metric) if isinstance(metric, str) else metric
        if kind_of(m).compares_outputs:
            raise ConfigError(
                f"metric {clip(m.name)} is pairwise: it compares two outputs and a DeepEval LLMTestCase has one; "
                "run it with `localjudge eval` on cases with output_1 and output_2"
            )
        if threshold is not None and threshold != m.threshold:
            m = metric_from_dict({**m.model_dump(), "threshold": threshold}, f"metric {m.name!r} with a threshold")
        # the attributes keep the constructor's names: DeepEval copies a metric per test case by
        # calling the class again with them, and the copy must share this judge, not load another
        self.metric: Metric = m
        self.judge: Judge = judge if isinstance(judge, Judge) else shared_judge(judge)
        self.threshold = m.threshold
        self.steps_cache = steps_cache
        self.evaluation_model = f"{self.judge.info.name} (localjudge)"
        self.strict_mode = False
        self.async_mode = async_mode
        self.verbose_mode = verbose_mode
        self.record: ResultRecord | None = None

    @property
    def __name__(self) -> str:  # DeepEval names a metric by this property
        return self.metric.name

    def measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float | None:
        """Judges one test case; sets score, reason, score_breakdown, record, success and error.

        Returns:
            The score; None when unscored (DeepEval's own metrics always return a number).

        Raises:
            MissingFieldsError: the case lacks a field the metric reads.
        """
        self.score = self.reason = self.score_breakdown = self.record = None  # nothing left of the last case
        case = to_test_case(test_case)
        lacking = missing_fields(self.metric, case)
        if lacking:
            raise MissingFieldsError(
                f"metric {clip(self.metric.name)} needs {', '.join(lacking)}, which the test case does not have; "
                "set it on the LLMTestCase (`deepeval test run -s` skips such cases)"
            )
        cache = Path(self.steps_cache) if self.steps_cache is not None else None
        result = evaluate([case], [self.metric], self.judge, progress=False, steps_cache=cache)
        record = result.get(case.id, self.metric.name)
        self.record = record
        self.score = record.score
        self.reason = reason(record)
        self.score_breakdown = breakdown(record)
        self.verbose_logs = log(record)
        if self.verbose_mode:
            print(self.verbose_logs)
        # unscored is an error state, never a score: DeepEval then fails the case and shows why
        self.error = None if record.score is not None else self.reason
        self.success = self.is_successful()
        return self.score

    async def a_measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float | None:
        """`measure`, for DeepEval's async runner; the judge runs in this thread, one case at a time."""
        return self.measure(test_case)

    def is_successful(self) -> bool | None:
        """False when unscored; None when there is no threshold; else score >= threshold."""
        if self.error is not None:
            self.success = False
        elif self.threshold is None or self.score is None:
            self.success = None
        else:
            self.success = self.score >= self.threshold
        return self.success


# named like the DeepEval class it replaces, so that porting a metric is an import change
def GEval(
    name: str,
    evaluation_params: Sequence[Any] | None = None,
    criteria: str | None = None,
    evaluation_steps: Sequence[str] | None = None,
    rubric: Sequence[Any] | None = None,
    model: Any = None,
    threshold: float = 0.5,
    top_logprobs: int = 20,
    async_mode: bool = True,
    strict_mode: bool = False,
    verbose_mode: bool = False,
    *,
    judge: Judge | str | None = None,
    reasoning: str = "none",
    steps_cache: str | Path | None = None,
) -> LocalJudgeMetric:
    """A G-Eval metric from DeepEval's GEval arguments, in DeepEval's order, scored by a local judge.

    The scale is DeepEval's: 0..10, or the span of the rubric's ranges. Without
    `evaluation_steps`, the judge writes them once from the criteria and they are cached per
    (judge, metric); with them, they are used as given.

    Args:
        name: metric name.
        evaluation_params: the fields shown (`SingleTurnParams` or their names); default input
            and actual_output.
        criteria: what the judge assesses; may be omitted when evaluation_steps are given.
        evaluation_steps: the steps the judge follows.
        rubric: DeepEval `Rubric`s (score_range, expected_outcome) or localjudge `RubricRange`s.
        model: refused unless None: DeepEval's API model; the local judge is `judge`.
        threshold: pass mark on the 0-1 score.
        top_logprobs: accepted and unused: the whole distribution over the scale is read, not the top k.
        async_mode: as DeepEval's (`LocalJudgeMetric`).
        strict_mode: refused unless False: DeepEval's passes only the top score, which an expected
            score over a distribution reaches only with all the probability on it.
        verbose_mode: as DeepEval's: print each case's log.
        judge: a loaded `Judge`, or a judge name (see `shared_judge`).
        reasoning: "none" (score only), "before" or "after": the judge also writes its reasoning.
        steps_cache: directory for generated evaluation steps.

    Examples:
        >>> from localjudge.testing import fake_judge
        >>> m = GEval("Clarity", criteria="Is the answer clear?", evaluation_steps=["Read it."],
        ...           judge=fake_judge(lambda prompt: {"7": 1.0}))
        >>> (m.metric.low, m.metric.high, m.metric.fields)
        (0, 10, ['input', 'actual_output'])
    """
    if model is not None:
        raise ConfigError(
            f"GEval {clip(name)}: model={clip(model)} is DeepEval's API model; a local judge scores this "
            "metric: pass judge=NAME (see `localjudge models`) instead of model="
        )
    if strict_mode:
        raise ConfigError(
            f"GEval {clip(name)}: strict_mode=True passes only the top score, and localjudge's score is the "
            "expected score over the judge's distribution, which reaches the top only with all the probability "
            "on it: set threshold= to the pass mark you want instead"
        )
    if criteria is None and not evaluation_steps:
        raise ConfigError(f"GEval {clip(name)}: give criteria, evaluation_steps or both")
    fields = [_field(p) for p in (evaluation_params or ("input", "actual_output"))]
    ranges = [_rubric_range(r) for r in rubric or ()]
    low, high = (min(r.low for r in ranges), max(r.high for r in ranges)) if ranges else (0, 10)
    guide = "the rubric" if ranges else f"{high} meaning full alignment with the evaluation steps and {low} none"
    metric = metric_from_dict(
        {
            "name": name,
            "task": f"You will be given a test case of an LLM application. Assess it by the evaluation steps: "
            f"give a score from {low} to {high}, {guide}.",
            "criteria": criteria or "How well the test case satisfies the evaluation steps.",
            "steps": list(evaluation_steps) if evaluation_steps else None,
            "rubric": [r.model_dump() for r in ranges],
            "fields": fields,
            "field_labels": {f: DEEPEVAL_LABELS[f] for f in fields},
            "low": low,
            "high": high,
            "threshold": threshold,
            "reasoning": reasoning,
        },
        f"GEval {name!r}",
    )
    assert isinstance(metric, GEvalMetric)  # no `kind`: a G-Eval metric
    return LocalJudgeMetric(
        metric, judge=judge, steps_cache=steps_cache, async_mode=async_mode, verbose_mode=verbose_mode
    )


def _field(param: Any) -> FieldName:
    """A DeepEval `SingleTurnParams` member (or its value) as a localjudge field name."""
    value = getattr(param, "value", param)
    for field in FIELDS:
        if value == field:
            return field
    raise ConfigError(
        f"evaluation param {clip(value)} has no localjudge field; use {', '.join(FIELDS)} "
        "(tools, metadata and tags are not shown to a local judge)"
    )


def _rubric_range(r: Any) -> RubricRange:
    """A DeepEval `Rubric` (score_range, expected_outcome), or a localjudge `RubricRange` as it is."""
    if isinstance(r, RubricRange):
        return r
    try:
        low, high = r.score_range
        return RubricRange(low=low, high=high, description=r.expected_outcome)
    except (AttributeError, TypeError, ValueError) as exc:
        raise ConfigError(
            f"rubric entry {clip(r)} is not a DeepEval Rubric or a RubricRange ({exc}); "
            "give Rubric(score_range=(low, high), expected_outcome='...')"
        ) from None
