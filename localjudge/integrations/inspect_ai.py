"""A localjudge metric as an inspect_ai scorer, scored by a local judge.

`localjudge_scorer` is a registered inspect_ai `@scorer`: a sample's input, the model's completion
and the target become a case's `input`, `actual_output` and `expected_output` (passages from the
sample's metadata, `retrieval_context` or Ragas's `retrieved_contexts`, and `context`), and any
localjudge metric scores it. The Score's value is the record's 0-1 score; its metadata holds the
metric, the judge, the distribution over the scale and the valid mass. A case whose score cannot
be read is inspect's unscored value (`Score.unscored`: NaN, which inspect's metrics skip), with the
reason, never a 0.

Install inspect_ai beside localjudge (`pip install 'localjudge-offline[inspect]'`; Python 3.11+).

Examples:
    >>> from inspect_ai import Task, eval  # doctest: +SKIP
    >>> from inspect_ai.dataset import Sample  # doctest: +SKIP
    >>> from inspect_ai.solver import generate  # doctest: +SKIP
    >>> from localjudge.integrations.inspect_ai import localjudge_scorer  # doctest: +SKIP
    >>> task = Task(dataset=[Sample(input="Capital of France?", target="Paris")], solver=generate(),
    ...             scorer=localjudge_scorer("correctness", judge="qwen2.5-coder-1.5b"))  # doctest: +SKIP
    >>> eval(task, model="mockllm/model")  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localjudge.errors import LocalJudgeError, MissingExtraError, install_command
from localjudge.integrations.readout import reason
from localjudge.integrations.shared import shared_judge
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds import Metric, kind_of, missing_fields
from localjudge.metrics.builtin import resolve_metric
from localjudge.runs.evaluate import evaluate

INSTALL_INSPECT = install_command("inspect")
"""How to install inspect_ai beside localjudge (pyproject.toml, the `inspect` extra)."""

try:
    from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
    from inspect_ai.solver import TaskState
except ImportError as exc:  # pragma: no cover - the tests run with the extra installed
    raise MissingExtraError.of("the inspect_ai scorer", "the inspect_ai package", exc, INSTALL_INSPECT) from None

__all__ = ["INSTALL_INSPECT", "localjudge_scorer", "to_test_case"]


def to_test_case(state: TaskState, target: Target) -> TestCase:
    """A sample's input, the model's completion and the target as a localjudge `TestCase`."""
    meta = state.metadata or {}
    passages = meta.get("retrieval_context", meta.get("retrieved_contexts"))
    context = meta.get("context")
    return TestCase(
        id=str(state.sample_id),
        input=state.input_text or None,
        actual_output=state.output.completion,
        expected_output=target.text or None,
        retrieval_context=[passages] if isinstance(passages, str) else passages,
        context=[context] if isinstance(context, str) else context,
    )


@scorer(metrics=[mean(), stderr()])
def localjudge_scorer(
    metric: Metric | str = "correctness",
    judge: Judge | str | None = None,
    threshold: float | None = None,
    steps_cache: str | Path | None = None,
) -> Scorer:
    """A localjudge metric as an inspect_ai scorer.

    Args:
        metric: a built-in metric name, a .yaml/.json metric file or a `Metric`; pairwise metrics
            compare two outputs, which a sample does not have.
        judge: a loaded `Judge`, or a judge name loaded once per process (None: the registry default,
            which answers G-Eval metrics at chance: name a capable judge, README, Pick a judge).
        threshold: pass mark on the 0-1 score, recorded as `passed` in the metadata; default the metric's.
        steps_cache: directory for generated evaluation steps (default ~/.cache/localjudge).

    Returns:
        A scorer whose Score value is the 0-1 score, or `Score.unscored` with the reason.
    """
    m = resolve_metric(metric) if isinstance(metric, str) else metric
    if kind_of(m).compares_outputs:
        raise LocalJudgeError(f"metric {m.name} compares two outputs; a sample has one: run it with `localjudge eval`")
    loaded = judge if isinstance(judge, Judge) else shared_judge(judge)
    pass_mark = m.threshold if threshold is None else threshold
    cache = Path(steps_cache) if steps_cache is not None else None

    async def score(state: TaskState, target: Target) -> Score:
        case = to_test_case(state, target)
        meta: dict[str, Any] = {"metric": m.name, "kind": m.kind, "judge": loaded.info.name}
        lacking = missing_fields(m, case)
        if lacking:
            why = f"the sample has no {', '.join(lacking)}, which metric {m.name} reads"
            return Score.unscored(reason="scoring_failed", explanation=why, metadata={**meta, "unscored_reason": why})
        record = evaluate([case], [m], loaded, progress=False, steps_cache=cache).records[0]
        meta |= {
            "distribution": record.distribution,
            "valid_mass": record.valid_mass,
            "raw_score": record.raw_score,
            "unscored_reason": record.unscored_reason,
            "passed": None if record.score is None or pass_mark is None else record.score >= pass_mark,
            "judge_record": record.judge,
        }
        if record.score is None:  # too little mass on valid scores: the judge's answer could not be read
            return Score.unscored(reason="grader_failed", explanation=reason(record), metadata=meta)
        return Score(value=record.score, answer=case.actual_output, explanation=reason(record), metadata=meta)

    return score
