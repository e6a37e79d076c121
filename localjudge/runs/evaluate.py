"""`evaluate`: judge test cases with metrics, streaming results, resumable, with a summary."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from localjudge.errors import ConfigError, clip, repeated
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds import Metric, kind_of
from localjudge.kinds.base import CaseBatch, MetricContext, missing
from localjudge.kinds.context_length import within_context
from localjudge.kinds.records import ResultRecord
from localjudge.metrics.spec import components
from localjudge.runs.options import EvaluateKeywords, RunOptions, ScoringOptions, options_of
from localjudge.runs.results_file import open_results, read_results, replace_results
from localjudge.runs.summary import MetricSummary, summarize, valid_mass_threshold

if TYPE_CHECKING:
    from typing_extensions import Unpack

log = logging.getLogger(__name__)


class EvaluationResult(BaseModel):
    """All records of a run, cases in input order and metrics in the order given, plus summaries."""

    model_config = ConfigDict(extra="forbid")

    records: list[ResultRecord] = Field(description="One record per (case, metric).")
    summaries: list[MetricSummary] = Field(description="One summary per metric.")

    def get(self, case_id: str, metric: str) -> ResultRecord:
        """The record of one case and metric."""
        for r in self.records:
            if r.case_id == case_id and r.metric == metric:
                return r
        raise KeyError((case_id, metric))


def evaluate(
    cases: Sequence[TestCase],
    metrics: Sequence[Metric],
    judge: Judge,
    *,
    run: RunOptions | None = None,
    scoring: ScoringOptions | None = None,
    **keywords: Unpack[EvaluateKeywords],
) -> EvaluationResult:
    """Judges every case with every metric.

    Args:
        cases: the test cases (ids unique).
        metrics: metrics of any kind (names unique); a hybrid's or verdict's components are
            judged too, before it.
        judge: a loaded judge (`load_judge`).
        run: how the run writes (`RunOptions`: out, resume, overwrite, progress); `out` is a JSONL
            file records stream to as they complete; once the run finishes, it is rewritten
            atomically with its records in input order (cases × metrics).
        scoring: how each case is scored (`ScoringOptions`: hardened, truncate, min_valid_mass,
            steps_cache, chunk_size).
        **keywords: the fields of `run` (out, resume, overwrite, progress) and of `scoring`
            (`EvaluateKeywords`), instead of the objects.

    Examples:
        >>> from localjudge import RunOptions, builtin_metric, load_cases, load_judge
        >>> cases, metrics = load_cases("cases.jsonl"), [builtin_metric("correctness")]  # doctest: +SKIP
        >>> result = evaluate(cases, metrics, load_judge(), run=RunOptions(out="r.jsonl"))  # doctest: +SKIP
        >>> result = evaluate(cases, metrics, load_judge(), out="r.jsonl", resume=True)  # doctest: +SKIP
        >>> result.summaries[0].mean_score  # doctest: +SKIP
    """
    run, scoring = options_of(run, scoring, keywords, "evaluate")
    names = [m.name for m in metrics]
    if len(set(names)) != len(names):
        raise ConfigError(f"metric names repeated: {repeated(names)}; give each metric once")
    metrics = with_components([_answered(judge, m) for m in metrics])
    names = [m.name for m in metrics]
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"case ids repeated: {repeated(ids)}; give every case a unique id")
    _warn_untuned(judge, metrics)
    run.check_output()
    out = run.out
    done: dict[tuple[str, str], ResultRecord] = {}
    if out is not None and run.resume and out.exists():  # resuming
        for r in read_results(out):
            judge.info.check_same_judge(r.judge, str(out))
            done[(r.case_id, r.metric)] = r
    # every check runs before the file is touched: a refused resume leaves it as it was
    contexts = {}
    for metric in metrics:
        if any((c.id, metric.name) not in done for c in cases):
            contexts[metric.name] = ctx = _context(judge, metric, scoring)
            _check_same_spec(ctx, [r for (_, name), r in done.items() if name == metric.name], out)
    chunk = scoring.chunk_size or (256 if judge.info.device.startswith("cuda") else 16)
    todo = {(c.id, m.name) for c in cases for m in metrics} - set(done)
    bar = _progress_bar(len(todo), run.progress)
    writer = open_results(out, run.mode) if out is not None else None  # resuming, it cuts a torn last record
    fresh: dict[tuple[str, str], ResultRecord] = {}

    def emit(rec: ResultRecord) -> None:
        fresh[(rec.case_id, rec.metric)] = rec
        if writer:
            writer.write(rec)

    try:
        for metric in metrics:
            pending = [c for c in cases if (c.id, metric.name) not in done]
            if not pending:
                continue
            ctx = contexts[metric.name]
            needs = ctx.kind.needs(metric)
            ready = []
            for case in pending:
                lacking = missing(needs.required, case)
                if lacking:
                    emit(ctx.unscored(judge, case, f"case has no {', '.join(lacking)}"))
                    bar.update(1)
                else:
                    ready.append(case)
            # neighbours share their leading fields (an article's summaries), hence a prompt prefix
            # that the engine computes once per batch
            ready.sort(key=lambda c: tuple(str(c.get(f) or "") for f in needs.sort_by))
            for start in range(0, len(ready), chunk):
                items = [within_context(judge, ctx, c) for c in ready[start : start + chunk]]
                for rec in ctx.kind.score(CaseBatch(judge, ctx, items, {**done, **fresh})):
                    emit(rec)
                bar.update(len(items))
            if writer:
                writer.sync()
    finally:
        bar.close()
        if writer:
            writer.close()
    allrec = {**done, **fresh}
    records = [allrec[(c.id, m.name)] for c in cases for m in metrics]
    if out is not None:
        _put_in_input_order(out, records, done, fresh)
    return EvaluationResult(records=records, summaries=summarize(records, names))


def _answered(judge: Judge, metric: Metric) -> Metric:
    """The metric a judge answers `metric` with: its head's, where it has one for that name, else the metric."""
    from localjudge.metrics.spec import metric_from_dict

    spec = judge.readings.get(metric.name)
    return metric if spec is None else metric_from_dict(spec)


def _warn_untuned(judge: Judge, metrics: Sequence[Metric]) -> None:
    """Warns when a tuned judge reads a metric its adapter was not trained on (its figures do not carry over)."""
    if not judge.tuned_for:
        return
    others = [m.name for m in metrics if m.name not in judge.tuned_for]
    if others:
        log.warning(
            "judge %s was tuned for %s; %s %s not: %s reading is the tuned weights' on a metric they never trained on",
            judge.info.name,
            ", ".join(judge.tuned_for),
            ", ".join(others),
            "is" if len(others) == 1 else "are",
            "its" if len(others) == 1 else "their",
        )


def _put_in_input_order(out, records: list[ResultRecord], done: dict, fresh: dict) -> None:
    """Rewrites the finished results file with its records in input order (cases × metrics).

    Records of the file that this run did not ask for (a resume with fewer cases or metrics)
    are kept, after the others, in the order they were in.
    """
    on_disk = [*done, *fresh]  # the file's order: what was there, then what was appended
    wanted = [(r.case_id, r.metric) for r in records]
    asked = set(wanted)
    if on_disk[: len(wanted)] == wanted:
        return  # already in order: the file stays as written
    replace_results(out, records + [r for k, r in done.items() if k not in asked])


def with_components(metrics: Sequence[Metric]) -> list[Metric]:
    """The metrics with every hybrid's and verdict's components added before them (once each)."""
    parts = {m.name: components(m) for m in metrics}
    plain: list[Metric] = [m for m in metrics if not parts[m.name]]
    combined = [m for m in metrics if parts[m.name]]
    by_name = {m.name: m for m in plain}
    for h in combined:
        for c in parts[h.name]:
            known = by_name.get(c.name)
            if known is None:
                by_name[c.name] = c
                plain.append(c)
            elif known.model_dump(mode="json") != c.model_dump(mode="json"):
                raise ConfigError(
                    f"metric {c.name!r} is given and is also a component of {h.kind} {h.name!r} with another "
                    "definition; drop one of them"
                )
    return plain + combined


def _context(judge: Judge, metric: Metric, scoring: ScoringOptions) -> MetricContext[Any]:
    kind = kind_of(metric)
    prepared = kind.prepare(judge, metric, scoring.hardened, scoring.steps_cache)
    return MetricContext(metric, kind, prepared, scoring)


def _check_same_spec(ctx: MetricContext[Any], done: list[ResultRecord], out) -> None:
    """Refuses to mix records of a changed metric definition or template into a resumed file."""
    spec, version, mass = ctx.prepared.spec, ctx.prepared.template_version, ctx.recorded_min_valid_mass
    for r in done:
        if r.metric_spec != spec or r.template_version != version:
            raise ConfigError(
                f"{out}: metric {clip(ctx.metric.name)} was defined differently (or with another prompt "
                "template) when those results were written; write to a new --out"
            )
        theirs = valid_mass_threshold(r)
        if theirs != mass:
            raise ConfigError(
                f"{out}: metric {clip(ctx.metric.name)} was judged with min_valid_mass {theirs:g} when those "
                f"results were written, not {mass:g}; resume with --min-valid-mass {theirs:g}, "
                "or write to a new --out"
            )


def _progress_bar(total: int, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, disable=None if enabled else True, unit="item", desc="judging", dynamic_ncols=True)
