"""The bias lab's scoring step: judges score responses and become `PointwiseRecord`s / `PairwiseRecord`s.

Every judge scores every response with a G-Eval metric (the prompt's `reference` is the
metric's `expected_output`), and measures its own perplexity of the response given the prompt
it would have answered itself (the covariate of `perplexity_adjusted`). With a pairwise metric,
each judge also compares every pair of responses from different families on the same item (or
every pair, `pairs="all"`), in both orders (`evaluate` asks both); with `recognition`, a judge
that is also a generator is asked which response of each pair holding its own it wrote
(`bias.recognition`). A judge reads each response against its prompt, or against a field of the
prompt (`source_field`, e.g. the article a summary was asked of). With a records folder, every
phase keeps its records there and a rerun continues them. Judges are loaded one at a time and
freed before the next.

Examples:
    >>> from localjudge.bias.judging import judge_responses, run_bias
    >>> from localjudge.runs.generation import read_responses
    >>> from localjudge.metrics import builtin_metric
    >>> judgments = run_bias(read_responses("responses.jsonl"), ["smollm2-135m", "gemma3-270m"],
    ...                     builtin_metric("correctness"), builtin_metric("pairwise"))  # doctest: +SKIP
"""

from __future__ import annotations

import gc
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from localjudge.bias.cases import (
    Pairs,
    by_item,
    check_responses,
    human_score,
    pair_case,
    pointwise_case,
    response_pairs,
    source_text,
)
from localjudge.bias.kept import Log, judge_by_item
from localjudge.bias.recognition import Recognition, recognise
from localjudge.bias.records import (
    LOGPPL,
    LogpplRecord,
    PairwiseRecord,
    PointwiseRecord,
    RecognitionRecord,
)
from localjudge.engine.options import EngineOptions
from localjudge.errors import ConfigError
from localjudge.errors import repeated as _repeated
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge, JudgeInfo
from localjudge.kinds.geval.spec import GEvalMetric
from localjudge.kinds.pairwise import PairwiseMetric
from localjudge.kinds.records import PairwiseDetail, ResultRecord
from localjudge.runs.evaluate import evaluate
from localjudge.runs.generation import ResponseRecord, generation_prompt, response_continuation
from localjudge.runs.options import RunOptions, ScoringOptions
from localjudge.stats.numbers import finite


@dataclass(frozen=True)
class Judgments:
    """What one judge said about a set of responses.

    Attributes:
        judge: who judged (name, family, provenance, dtype, device).
        pointwise: one record per response; empty without a pointwise metric.
        pairwise: one record per pair of an item compared; empty without a pairwise metric.
    """

    judge: JudgeInfo
    pointwise: tuple[PointwiseRecord, ...]
    pairwise: tuple[PairwiseRecord, ...]
    recognition: tuple[PairwiseRecord, ...] = ()
    """Its answers to "which one did you write?", as pairs whose "preferred" response is the one it
    says it wrote; empty unless asked (`recognition`)."""


def judge_logppl(judge: Judge, responses: Sequence[ResponseRecord]) -> list[float | None]:
    """The judge's mean NLL per token of each response, given the prompt it would itself answer."""
    prefixes = [generation_prompt(judge, TestCase(id=r.id, input=r.input, context=r.context)) for r in responses]
    conts = [response_continuation(judge, r.response) for r in responses]
    # one batched pass: the output layer only at response positions, shared prompt heads once
    lls = judge.loglikelihood(prefixes, conts)
    return [finite(-ll.mean) for ll in lls]


def records_path(records_dir: Path, judge_name: str, metric_name: str) -> Path:
    """The file in `records_dir` that holds one judge's full result records for one metric (or for its
    "logppl" and "recognition" phases)."""
    return records_dir / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', judge_name)}.{metric_name}.jsonl"


def _evaluate(cases, metric, judge, out: Path | None, run: RunOptions, scoring: ScoringOptions):
    again = run.resume and out is not None and out.exists()  # continue the records file, else start it afresh
    records = RunOptions(out=out, resume=again, overwrite=out is not None and not again, progress=run.progress)
    return evaluate(cases, [metric], judge, run=records, scoring=scoring).records


def _timed(log: Log | None, phase: str, prompts: int, work: Callable[[], list[ResultRecord]]) -> list[ResultRecord]:
    start = time.perf_counter()
    out = work()
    if log is not None:
        log(phase, "-", time.perf_counter() - start, prompts)
    return out


def _logppl(
    judge: Judge, responses: Sequence[ResponseRecord], path: Path | None, resume: bool, log: Log | None
) -> list[float | None]:
    """`judge_logppl` of every response; with a file, one item at a time, kept there as each completes."""
    if path is None:
        start = time.perf_counter()
        values = judge_logppl(judge, responses)
        if log is not None:
            log("logppl", "-", time.perf_counter() - start, len(responses))
        return values

    def logppl(item_id: str, item: list[ResponseRecord]) -> list[LogpplRecord]:
        info = judge.info.model_dump()
        return [
            LogpplRecord(item_id=r.id, generator=r.generator, logppl=lp, judge=info)
            for r, lp in zip(item, judge_logppl(judge, item))
        ]

    have = judge_by_item(
        judge,
        [r for item in by_item(responses).values() for r in item],  # each item's in generator order
        logppl,
        records=LOGPPL,
        path=path,
        resume=resume,
        unit_key=lambda r: (r.id, r.generator),
        record_key=lambda kept: (kept.item_id, kept.generator),
        item_of=lambda r: r.id,
        phase="logppl",
        log=log,
    )
    return [have[(r.id, r.generator)].logppl for r in responses]


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
    pairs: Pairs = "cross_family",
    source_field: str | None = None,
    recognition: Recognition | None = None,
    log: Log | None = None,
) -> Judgments:
    """One judge's pointwise scores, perplexities and (optionally) pairwise judgments and self-recognition.

    Args:
        judge: A loaded judge.
        responses: From `read_responses`; one per (prompt, generator).
        metric: The G-Eval metric for pointwise scores; None for pairwise only.
        pairwise_metric: The pairwise metric for pairs of responses; None for pointwise only.
        human_field: Extra field of the prompts holding a human score of each response.
        records_dir: Folder for the records of every phase: `evaluate`'s (one file per metric), the
            perplexities (<judge>.logppl.jsonl) and the recognition answers (<judge>.recognition.jsonl).
        run: `resume` continues the files in `records_dir` instead of starting them afresh;
            `progress` shows progress bars.
        scoring: How each response is scored, as for `evaluate` (truncate, min_valid_mass...).
        pairs: Which pairs of an item's responses the pairwise metric compares (`response_pairs`).
        source_field: The prompts' field a response is judged against (e.g. "article"); default
            the prompt itself. Perplexity always reads the prompt the generator answered.
        recognition: Ask "which one did you write?" on the pairs holding the judge's own response.
        log: Called after each unit of work: phase, item ("-" for a whole phase), seconds, prompts.

    Returns:
        The judge's judgments; unscored items have score None (skipped by the analysis).

    Examples:
        >>> v = judge_responses(judge, responses, builtin_metric("correctness"))  # doctest: +SKIP
        >>> [(p.generator, p.score) for p in v.pointwise][:2]  # doctest: +SKIP
    """
    run, scoring = run or RunOptions(), scoring or ScoringOptions()
    if metric is None and pairwise_metric is None:
        raise ConfigError("give a pointwise metric, a pairwise metric, or both")
    check_responses(responses, metric)
    rdir = Path(records_dir) if records_dir is not None else None

    def kept(phase: str) -> Path | None:
        return None if rdir is None else records_path(rdir, judge.info.name, phase)

    point: tuple[PointwiseRecord, ...] = ()
    if metric is not None:
        cases = [pointwise_case(r, source_field) for r in responses]
        results = _timed(
            log, "pointwise", len(cases), lambda: _evaluate(cases, metric, judge, kept(metric.name), run, scoring)
        )
        logppl = _logppl(judge, responses, kept("logppl"), run.resume, log)
        point = pointwise_records(judge.info, responses, results, logppl, human_field)
    chosen = response_pairs(responses, pairs)
    pair: tuple[PairwiseRecord, ...] = ()
    if pairwise_metric is not None and chosen:  # one family only: nothing to compare
        cases = [pair_case(a, b, pairwise_metric, source_field) for a, b in chosen]
        results = _timed(
            log,
            "pairwise",
            2 * len(cases),
            lambda: _evaluate(cases, pairwise_metric, judge, kept(pairwise_metric.name), run, scoring),
        )
        pair = tuple(pairwise_record(judge.info, a, b, res, human_field) for (a, b), res in zip(chosen, results))
    recognised: tuple[PairwiseRecord, ...] = ()
    if recognition is not None:
        answers = recognise(
            judge,
            chosen,
            recognition,
            lambda r: source_text(r, source_field),
            path=kept("recognition"),
            resume=run.resume,
            min_valid_mass=scoring.min_valid_mass,
            log=log,
        )
        recognised = recognition_records(judge.info, chosen, answers)
    return Judgments(judge=judge.info, pointwise=point, pairwise=pair, recognition=recognised)


def pointwise_records(
    info: JudgeInfo,
    responses: Sequence[ResponseRecord],
    results: Sequence[ResultRecord],
    logppl: Sequence[float | None],
    human_field: str | None,
) -> tuple[PointwiseRecord, ...]:
    """The lab's pointwise records of one judge: its result records and perplexities, in response order."""
    return tuple(
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
        for r, res, lp in zip(responses, results, logppl)
    )


def recognition_records(
    info: JudgeInfo, pairs: Sequence[tuple[ResponseRecord, ResponseRecord]], answers: Sequence[RecognitionRecord]
) -> tuple[PairwiseRecord, ...]:
    """Recognition answers as pairwise records (A "preferred" = the judge says it wrote A), no human labels."""
    got = {(r.item_id, r.generator_a, r.generator_b): r for r in answers}
    out = []
    for a, b in pairs:
        g = got.get((a.id, a.generator, b.generator))
        if g is not None:
            out.append(_pair_from(info, a, b, g.p_a_first, g.p_a_second, None))
    return tuple(out)


def pairwise_record(
    info: JudgeInfo, a: ResponseRecord, b: ResponseRecord, res: ResultRecord, human_field: str | None
) -> PairwiseRecord:
    d = (
        res.detail if res.score is not None and isinstance(res.detail, PairwiseDetail) else None
    )  # an unscored pair keeps its readings, not a judgment
    p1, p2 = (None, None) if d is None else (d.p_first_better_shown_first, d.p_first_better_shown_second)
    return _pair_from(info, a, b, p1, p2, human_field)


def _pair_from(
    info: JudgeInfo,
    a: ResponseRecord,
    b: ResponseRecord,
    p_a_first: float | None,
    p_a_second: float | None,
    human_field: str | None,
) -> PairwiseRecord:
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
        p_a_first=p_a_first,
        p_a_second=p_a_second,
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
) -> list[Judgments]:
    """Loads each judge in turn, collects its judgments and frees it before loading the next.

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
        One `Judgments` per judge, in the order given.
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
            judgments = judge_responses(
                judge,
                responses,
                metric,
                pairwise_metric,
                human_field=human_field,
                records_dir=records_dir,
                run=run,
                scoring=scoring,
            )
            out.append(judgments)
        finally:
            del judge  # free the weights before the next judge loads
            gc.collect()
    return out
