"""Commands: metrics, score, eval, steps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import click

from localjudge.cli.options import (
    CASE_FILE_FLAGS,
    SectionedCommand,
    judge_inputs,
    judge_options,
    load_from_options,
    panel_judge_options,
    read_scale,
    run_options,
)
from localjudge.cli.output import print_table
from localjudge.cli.panel import panel_option, panel_settings, quorum_option, run_panel
from localjudge.cli.reading import field_label_option, labelled_metrics, read_distributions, scoring_options


@click.command("metrics")
def metrics_cmd() -> None:
    """List the built-in metrics with their scales and fields."""
    from localjudge.kinds import kind_of
    from localjudge.metrics import builtin_metric, builtin_names

    rows = []
    for name in builtin_names():
        m = builtin_metric(name, style_guide="(yours)")
        listed = kind_of(m).describe(m)
        rows.append((name, listed.scale, listed.fields))
    print_table(["metric", "scale", "fields"], rows)


@click.command("score", cls=SectionedCommand)
@click.argument("texts", nargs=-1)
@click.option(
    "--file",
    "file",
    type=click.Path(exists=True, dir_okay=False),
    help="Read prompts from a JSONL file of strings or {'text': ...}.",
)
@click.option("--low", type=int, default=None, help="Lowest score of the scale.")
@click.option("--high", type=int, default=None, help="Highest score of the scale.")
@click.option("--labels", default=None, help="Comma-separated label scale instead of scores, e.g. A,B.")
@scoring_options("min_valid_mass")
@run_options("progress")
@panel_option
@quorum_option
@panel_judge_options
def score_cmd(texts, file, low, high, labels, scoring, run, panel, pooling, judge_names, **judge_kw) -> None:
    """Print exact score distributions at the end of already-rendered prompts, by one judge or a panel."""
    from localjudge.errors import ConfigError
    from localjudge.stats.numbers import finite_json

    prompts = list(texts) + (_read_prompts(Path(file)) if file else [])
    if not prompts:
        raise ConfigError("give prompts as arguments or with --file")
    empty = [k for k, p in enumerate(prompts, 1) if not p.strip()]
    if empty:
        raise ConfigError(f"prompt {empty[0]} is empty; give every prompt some text to score")
    scale = read_scale(low, high, labels)  # every check that needs no model comes before the (slow) load
    threshold = scoring.min_valid_mass
    if len(judge_names) > 1 or panel is not None or pooling.quorum is not None:
        from localjudge.cli.panel import score_panel, score_panel_options

        options = score_panel_options(panel, pooling.quorum)
        options.check_members(len(judge_names))
        score_panel(prompts, scale, threshold, judge_names, options, judge_kw, run.progress)
        return
    judge = load_from_options(judge_names[0] if judge_names else None, **judge_kw, progress=run.progress)
    for p, d in zip(prompts, read_distributions(judge, prompts, scale, threshold)):
        # an unscored item's NaN statistics become null (NaN is not JSON); unscored_reason says why
        record = {"prompt": p[-60:], "min_valid_mass": threshold, **finite_json(d.model_dump(mode="json"))}
        click.echo(json.dumps(record, allow_nan=False))


def _read_prompts(path: Path) -> list[str]:
    """Prompts from a JSONL file of strings or {"text": ...} objects; errors name file and line."""
    from localjudge.errors import DataError
    from localjudge.io.jsonl import read_rows

    prompts = []
    for n, item in read_rows(path, "prompts file"):
        if isinstance(item, dict):
            if not isinstance(item.get("text"), str):
                raise DataError(f"{path}:{n}: field 'text' missing or not a string")
            item = item["text"]
        elif not isinstance(item, str):
            raise DataError(f'{path}:{n}: expected a string or {{"text": ...}}, got {type(item).__name__}')
        if not item.strip():
            raise DataError(f"{path}:{n}: the prompt is empty; give it some text to score")
        prompts.append(item)
    return prompts


@click.command("steps", cls=SectionedCommand)
@click.option("--metric", "metric_name", required=True, help="Built-in metric name or metric file.")
@run_options(
    "out", "overwrite", "progress", out_required=True, out="Write the metric with its steps pinned to this .yaml file."
)
@click.option(
    "--style-guide", type=click.Path(exists=True, dir_okay=False), default=None, help="Style guide file (style metric)."
)
@click.option("--regenerate", is_flag=True, help="Ignore built-in or pinned steps and let the judge write them.")
@judge_options
def steps_cmd(metric_name, run, style_guide, regenerate, **judge_kw) -> None:
    """Generate (once, cached) the evaluation steps of a metric and write them for review and pinning."""
    from localjudge.errors import ConfigError
    from localjudge.io.files import read_text, refuse_overwriting
    from localjudge.kinds import kind_of
    from localjudge.kinds.geval.spec import GEvalMetric
    from localjudge.kinds.geval.steps import resolve_steps
    from localjudge.metrics import resolve_metric
    from localjudge.metrics.spec import dump_metric

    out = str(run.out)
    refuse_overwriting(
        [out],
        [
            ("metric file", _file_or_none(metric_name)),
            ("style guide", style_guide),
            *judge_inputs(judge_kw["judge_name"], judge_kw["registry"]),
        ],
    )
    run.check_output(resumable=False)
    guide = read_text(style_guide, "style guide", ConfigError) if style_guide else None
    metric = resolve_metric(metric_name, style_guide=guide)
    if not kind_of(metric).has_steps:
        raise click.UsageError("only G-Eval metrics have evaluation steps")
    metric = cast("GEvalMetric", metric)  # the kind with steps is G-Eval's
    if regenerate:
        metric = metric.model_copy(update={"steps": None})
    judge = load_from_options(**judge_kw, progress=run.progress)
    steps, source = resolve_steps(judge, metric)
    Path(out).write_text(dump_metric(metric.model_copy(update={"steps": steps})), encoding="utf-8")
    click.echo(f"{len(steps)} steps ({source}) written to {out}:")
    for i, s in enumerate(steps, 1):
        click.echo(f"  {i}. {s}")


@click.command("eval", cls=SectionedCommand)
@click.argument("data", type=click.Path(dir_okay=False))
@click.option(
    "--metric", "metric_names", multiple=True, required=True, help="Built-in metric name or metric file; repeatable."
)
@run_options(
    *CASE_FILE_FLAGS,
    out="Stream result records to this JSONL file (in input order once the run ends).",
    skip_invalid="Skip malformed rows of DATA, listing each one.",
)
@scoring_options("truncate", "min_valid_mass", "chunk_size")
@click.option(
    "--reasoning",
    type=click.Choice(["none", "before", "after"]),
    default=None,
    help="Override the metrics' reasoning mode.",
)
@click.option(
    "--style-guide", type=click.Path(exists=True, dir_okay=False), default=None, help="Style guide file (style metric)."
)
@field_label_option
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Judge only the first N cases.")
@click.option("--json", "as_json", is_flag=True, help="Print a machine-readable summary.")
@click.option(
    "--report",
    "report_out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write an HTML page of the run here, as `localjudge report` does (a panel's needs --out).",
)
@click.option(
    "--distributed",
    is_flag=True,
    help="Split the cases over the processes of `torchrun --nproc-per-node N -m localjudge eval ...` (or "
    "`accelerate launch`), one per GPU; rank 0 reports and writes --out.",
)
@panel_option
@quorum_option
@panel_judge_options
def eval_cmd(
    data,
    metric_names,
    run,
    scoring,
    reasoning,
    style_guide,
    field_labels,
    limit,
    as_json,
    report_out,
    distributed,
    panel,
    pooling,
    judge_names,
    **judge_kw,
) -> None:
    """Judge the test cases in DATA (.jsonl, .json or .csv) with one or more metrics, by one judge or a panel."""
    from localjudge.cli.summary import print_run
    from localjudge.errors import ConfigError, repeated
    from localjudge.io.cases import load_cases
    from localjudge.io.files import read_text, refuse_overwriting
    from localjudge.metrics.builtin import with_reasoning
    from localjudge.runs.evaluate import evaluate

    out = str(run.out) if run.out else None
    judge_kw["judge_name"] = judge_names[0] if len(judge_names) == 1 else None
    settings = None
    if len(judge_names) > 1 or panel is not None or pooling.quorum is not None:
        settings = panel_settings(panel, pooling.quorum)
        settings.check_members(len(judge_names))
    if settings is not None and distributed:
        raise ConfigError("--distributed runs one judge; run each panel member's eval on its own instead")
    if report_out:
        _check_report(report_out, out, settings is not None, run.overwrite or run.resume)
    if out or report_out:
        refuse_overwriting(
            [o for o in (out, report_out) if o],
            [
                ("data file", data),
                ("style guide", style_guide),
                *[("metric file", _file_or_none(n)) for n in metric_names],
                ("panel weights", panel if settings is not None and settings.method == "fitted" else None),
                *judge_inputs(judge_kw["judge_name"], judge_kw["registry"]),
            ],
        )
    run.check_output()
    skipped: list[str] | None = [] if run.skip_invalid else None
    try:
        cases = load_cases(data, skipped)
    finally:  # listed even when nothing valid is left and the run stops
        for msg in skipped or []:
            click.echo(f"skipped: {msg}", err=True)
    cases = cases[:limit] if limit else cases
    guide = read_text(style_guide, "style guide", ConfigError) if style_guide else None
    metrics = [with_reasoning(m, reasoning) for m in labelled_metrics(metric_names, guide, field_labels)]
    names = [m.name for m in metrics]
    if len(set(names)) != len(names):
        raise ConfigError(f"metric {repeated(names)} given twice; give each --metric once")
    if settings is not None:
        judge_kw.pop("judge_name")
        run_panel(cases, metrics, judge_names, settings, run, scoring, judge_kw, as_json, out)
        if report_out:
            _write_report(report_out, out, cases, members=judge_names, quiet=as_json)
        return
    judge_kw = {**judge_kw, "judge_name": _judge_for(metrics, judge_kw["judge_name"], judge_kw["registry"])}
    if distributed:
        from localjudge.runs.distributed import evaluate_distributed, local_device, write_records

        if run.resume:
            raise ConfigError("--resume is not supported with --distributed; rerun the whole set")
        engine = judge_kw["engine"]
        engine = engine if engine.device else engine.replace(device=local_device())
        judge = load_from_options(**{**judge_kw, "engine": engine}, progress=run.progress)
        result = evaluate_distributed(cases, metrics, judge, scoring=scoring, progress=run.progress)
        if result is None:  # not rank 0: rank 0 prints and writes everything
            return
        if out:
            write_records(result, out, run.overwrite)
    else:
        judge = load_from_options(**judge_kw, progress=run.progress)
        result = evaluate(cases, metrics, judge, run=run, scoring=scoring)
    for r in result.records:
        if r.truncated:
            click.echo(f"truncated: case {r.case_id!r} ({r.metric}): {r.truncated}", err=True)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "judge": judge.info.model_dump(),
                    "out": out,
                    "skipped_rows": skipped or [],
                    "summaries": [s.model_dump() for s in result.summaries],
                },
                indent=1,
            )
        )
    else:
        print_run(result, judge.info.name)
        if out:
            click.echo(f"\nresults: {out}")
    if report_out:
        _write_report(report_out, out, cases, records=result.records, quiet=as_json)


def _check_report(report_out: str, out: str | None, panel: bool, replace: bool) -> None:
    """Refuses a --report that would end the run in an error, before the run."""
    from localjudge.cli.report import refuse_existing
    from localjudge.errors import ConfigError

    if panel and not out:
        raise ConfigError("--report of a panel reads the panel's results files: give --out too")
    if out and Path(out).resolve() == Path(report_out).resolve():
        raise ConfigError(f"--report {report_out} is the --out file; give the page another path")
    refuse_existing(report_out, replace)


def _write_report(report_out: str, out: str | None, cases, records=None, members=(), quiet=False) -> None:
    """The page of this run: its own records, or (a panel) the panel's file and each member's beside it."""
    from localjudge.cli.report import echo_report
    from localjudge.report import ReportOptions, eval_run, write_report, write_runs

    if records is not None:
        report = write_runs([eval_run(records, out or "eval")], report_out, ReportOptions(), cases)
    else:
        assert out is not None  # _check_report refused a panel's report without --out
        from localjudge.panel.run import member_path

        paths: list[str | Path] = [out, *(p for n in members if (p := member_path(out, n)).is_file())]
        report = write_report(paths, report_out, ReportOptions(), cases)
    echo_report(report, err=quiet)  # --json keeps stdout for its JSON


def _judge_for(metrics, named: str | None, registry: str | None) -> str | None:
    """The judge `eval` loads: the one named, else one able to judge these metrics' kinds (runs/judge_choice.py)."""
    from localjudge.errors import LocalJudgeError
    from localjudge.judges.registry import REGISTRY_PATH, availability, load_registry
    from localjudge.runs.judge_choice import choose_judge

    path = Path(registry) if registry else REGISTRY_PATH
    reg = load_registry(path)

    def installed(name: str) -> bool:
        try:
            return availability(reg.get(name), path).startswith("yes")
        except LocalJudgeError:  # not in this registry
            return False

    choice = choose_judge([m.kind for m in metrics], installed, named, reg.default)
    if choice.notice:
        click.echo(choice.notice, err=True)
    return choice.name


def _file_or_none(path: str) -> str | None:
    from localjudge.io.files import is_file

    return path if is_file(path) else None
