"""The bias lab's scoring step: judges score responses and become `PointwiseRecord`s / `PairwiseRecord`s.

Every judge scores every response with a G-Eval metric (the prompt's `reference` is the
metric's `expected_output`), and measures its own perplexity of the response given the prompt
it would have answered itself (the covariate of `perplexity_adjusted`). With a pairwise metric,
each judge also compares every pair of responses from different families on the same item, in
both orders (`evaluate` asks both). Judges are loaded one at a time and freed before the next.

Examples:
    >>> from localjudge.bias.judging import judge_responses, run_bias
    >>> from localjudge.runs.generation import read_responses
    >>> from localjudge.metrics import builtin_metric
    >>> verdicts = run_bias(read_responses("responses.jsonl"), ["smollm2-135m", "gemma3-270m"],
    ...                     builtin_metric("correctness"), builtin_metric("pairwise"))  # doctest: +SKIP
"""

from __future__ import annotations

import gc
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Literal

from localjudge.bias.records import PairwiseRecord, PointwiseRecord
from localjudge.engine.options import EngineOptions
from localjudge.errors import ConfigError, DataError, clip
from localjudge.errors import repeated as _repeated
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge, JudgeInfo
from localjudge.kinds.geval.spec import GEvalMetric
from localjudge.kinds.pairwise import PairwiseMetric
from localjudge.kinds.records import PairwiseDetail, ResultRecord
from localjudge.runs.evaluate import evaluate
from localjudge.runs.generation import ResponseRecord, generation_prompt, response_continuation
from localjudge.runs.options import RunOptions, ScoringOptions

_SEP = "|"  # joins item id and generator names into case ids


@dataclass(frozen=True)
class JudgeVerdicts:
    """What one judge said about a set of responses.

    Attributes:
        judge: who judged (name, family, provenance, dtype, device).
        pointwise: one record per response; empty without a pointwise metric.
        pairwise: one record per cross-family pair of an item; empty without a pairwise metric.
    """

    judge: JudgeInfo
    pointwise: tuple[PointwiseRecord, ...]
    pairwise: tuple[PairwiseRecord, ...]


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


def pointwise_case(r: ResponseRecord) -> TestCase:
    """The test case that scores one response (reference → expected_output)."""
    return TestCase(
        id=_SEP.join((r.id, r.generator)),
        input=r.input,
        actual_output=r.response,
        expected_output=r.reference,
        context=r.context,
    )


def cross_family_pairs(responses: Sequence[ResponseRecord]) -> list[tuple[ResponseRecord, ResponseRecord]]:
    """Every pair of responses to the same item from different families, A before B by generator name."""
    by_item: dict[str, list[ResponseRecord]] = {}
    for r in responses:
        by_item.setdefault(r.id, []).append(r)
    pairs = []
    for item in sorted(by_item):
        ordered = sorted(by_item[item], key=lambda r: r.generator)
        pairs += [(a, b) for a, b in combinations(ordered, 2) if a.generator_family != b.generator_family]
    return pairs


def pair_case(a: ResponseRecord, b: ResponseRecord, metric: PairwiseMetric) -> TestCase:
    """The test case that compares two responses: A as the metric's first output, B as its second."""
    f1, f2 = metric.output_fields
    return TestCase(
        id=_SEP.join((a.id, a.generator, b.generator)), input=a.input, extra={f1: a.response, f2: b.response}
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


def judge_logppl(judge: Judge, responses: Sequence[ResponseRecord]) -> list[float | None]:
    """The judge's mean NLL per token of each response, given the prompt it would itself answer."""
    prefixes = [generation_prompt(judge, TestCase(id=r.id, input=r.input, context=r.context)) for r in responses]
    conts = [response_continuation(judge, r.response) for r in responses]
    # one batched pass: the output layer only at response positions, shared prompt heads once
    lls = judge.loglikelihood(prefixes, conts)
    return [None if not math.isfinite(ll.mean) else -ll.mean for ll in lls]


def records_path(records_dir: Path, judge_name: str, metric_name: str) -> Path:
    """The file in `records_dir` that holds one judge's full result records for one metric."""
    return records_dir / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', judge_name)}.{metric_name}.jsonl"


def _records_file(records_dir: Path | None, judge: Judge, metric_name: str) -> Path | None:
    return None if records_dir is None else records_path(records_dir, judge.info.name, metric_name)


def _evaluate(cases, metric, judge, out: Path | None, run: RunOptions, scoring: ScoringOptions):
    again = run.resume and out is not None and out.exists()  # continue the records file, else start it afresh
    records = RunOptions(out=out, resume=again, overwrite=out is not None and not again, progress=run.progress)
    return evaluate(cases, [metric], judge, run=records, scoring=scoring).records


def judge_responses(
    judge: Judge,
    responses: Sequence[ResponseRecord],
    metric: GEvalMetric | None,
    pairwise_metric: PairwiseMetric | None = None,
    *,
    human_field: str | None = None,
    records_dir: str | Path | None = None,
    run: RunOptions | None = None,
    scoring: ScoringOptions | None = None,
) -> JudgeVerdicts:
    """One judge's pointwise scores, perplexities and (optionally) pairwise verdicts.

    Args:
        judge: A loaded judge.
        responses: From `read_responses`; one per (prompt, generator).
        metric: The G-Eval metric for pointwise scores; None for pairwise only.
        pairwise_metric: The pairwise metric for own-vs-other pairs; None for pointwise only.
        human_field: Extra field of the prompts holding a human score of each response.
        records_dir: Folder for the full result records of `evaluate` (one file per metric).
        run: `resume` continues result files in `records_dir` instead of starting them afresh;
            `progress` shows progress bars.
        scoring: How each response is scored, as for `evaluate` (truncate, min_valid_mass...).

    Returns:
        The judge's verdicts; unscored items have score None (skipped by the analysis).

    Examples:
        >>> v = judge_responses(judge, responses, builtin_metric("correctness"))  # doctest: +SKIP
        >>> [(p.generator, p.score) for p in v.pointwise][:2]  # doctest: +SKIP
    """
    run, scoring = run or RunOptions(), scoring or ScoringOptions()
    if metric is None and pairwise_metric is None:
        raise ConfigError("give a pointwise metric, a pairwise metric, or both")
    check_responses(responses, metric)
    rdir = Path(records_dir) if records_dir is not None else None
    info = judge.info
    point: list[PointwiseRecord] = []
    if metric is not None:
        results = _evaluate(
            [pointwise_case(r) for r in responses],
            metric,
            judge,
            _records_file(rdir, judge, metric.name),
            run,
            scoring,
        )
        logppl = judge_logppl(judge, responses)
        for r, res, lp in zip(responses, results, logppl):
            point.append(
                PointwiseRecord(
                    item_id=r.id,
                    judge=info.name,
                    judge_family=info.family,
                    generator=r.generator,
                    generator_family=r.generator_family,
                    score=res.raw_score,
                    response_length=len(r.response),
                    judge_logppl=lp,
                    human_score=human_score(r, human_field),
                )
            )
    pair: list[PairwiseRecord] = []
    if pairwise_metric is not None:
        pairs = cross_family_pairs(responses)
        if pairs:  # one family only: nothing to compare
            results = _evaluate(
                [pair_case(a, b, pairwise_metric) for a, b in pairs],
                pairwise_metric,
                judge,
                _records_file(rdir, judge, pairwise_metric.name),
                run,
                scoring,
            )
            pair = [_pairwise_record(info, a, b, res, human_field) for (a, b), res in zip(pairs, results)]
    return JudgeVerdicts(judge=info, pointwise=tuple(point), pairwise=tuple(pair))


def _pairwise_record(
    info: JudgeInfo, a: ResponseRecord, b: ResponseRecord, res: ResultRecord, human_field: str | None
) -> PairwiseRecord:
    d = (
        res.detail if res.score is not None and isinstance(res.detail, PairwiseDetail) else None
    )  # an unscored pair keeps its readings, not a verdict
    ha, hb = human_score(a, human_field), human_score(b, human_field)
    preferred: Literal["a", "b"] | None = None if ha is None or hb is None or ha == hb else ("a" if ha > hb else "b")
    return PairwiseRecord(
        item_id=a.id,
        judge=info.name,
        judge_family=info.family,
        generator_a=a.generator,
        family_a=a.generator_family,
        generator_b=b.generator,
        family_b=b.generator_family,
        p_a_first=None if d is None else d.p_first_better_shown_first,
        p_a_second=None if d is None else d.p_first_better_shown_second,
        human_preferred=preferred,
        length_a=len(a.response),
        length_b=len(b.response),
    )


def run_bias(
    responses: Sequence[ResponseRecord],
    judges: Sequence[str],
    metric: GEvalMetric | None,
    pairwise_metric: PairwiseMetric | None = None,
    *,
    device: str | None = None,
    dtype: str | None = None,
    options: EngineOptions | None = None,
    families: Mapping[str, str] | None = None,
    registry_path: str | Path | None = None,
    human_field: str | None = None,
    records_dir: str | Path | None = None,
    run: RunOptions | None = None,
    scoring: ScoringOptions | None = None,
) -> list[JudgeVerdicts]:
    """Loads each judge in turn, collects its verdicts and frees it before loading the next.

    Args:
        responses: From `read_responses`.
        judges: Registry names, model directories, GGUF files or hub ids; each loaded once.
        metric: Pointwise metric, or None.
        pairwise_metric: Pairwise metric, or None.
        device: Device for every judge (`load_judge`'s default when None).
        dtype: Compute dtype for every judge (`load_judge`'s default when None).
        options: Engine options for every judge, as for `load_judge` (not with device or dtype).
        families: Model family of judges loaded by path or hub id (`load_judge(family=...)`).
        registry_path: A models.yaml other than the bundled one.
        human_field, records_dir, run, scoring: as for `judge_responses`.

    Returns:
        One `JudgeVerdicts` per judge, in the order given.
    """
    from localjudge.judges import loading  # torch loads only when a judge does

    run, scoring = run or RunOptions(), scoring or ScoringOptions()
    if len(set(judges)) != len(judges):
        raise ConfigError(f"judges repeated: {_repeated(judges)}; give each --judge once")
    check_responses(responses, metric, human_field)  # before the first (slow) load
    out = []
    for name in judges:
        judge = loading.load_judge(
            name,
            device=device,
            dtype=dtype,
            options=options,
            progress=run.progress,
            family=(families or {}).get(name),
            registry_path=registry_path,
        )
        try:
            verdicts = judge_responses(
                judge,
                responses,
                metric,
                pairwise_metric,
                human_field=human_field,
                records_dir=records_dir,
                run=run,
                scoring=scoring,
            )
            out.append(verdicts)
        finally:
            del judge  # free the weights before the next judge loads
            gc.collect()
    return out
