"""Commands: models, metrics, score, eval, steps."""

from __future__ import annotations

import json
import math
from pathlib import Path

import click

from localjudge.cli.options import judge_inputs, judge_options, load_from_options, read_scale
from localjudge.cli.output import print_table
from localjudge.cli.reading import (
    field_label_option,
    labelled_metrics,
    min_valid_mass_option,
    min_valid_mass_or_default,
)


@click.command("models")
@click.option(
    "--models",
    "registry",
    type=click.Path(dir_okay=False),
    default=None,
    help="A models.yaml other than the bundled one.",
)
def models_cmd(registry: str | None) -> None:
    """List the judge registry: family, source and whether each judge is available here."""
    from localjudge.judges.registry import REGISTRY_PATH, availability, load_registry

    reg = load_registry(Path(registry)) if registry else load_registry()
    path = Path(registry) if registry else REGISTRY_PATH
    rows = [
        (("*" if j.name == reg.default else " ") + j.name, j.family, j.source.describe(), availability(j, path))
        for j in reg.judges
    ]
    print_table(["judge", "family", "source", "available here"], rows)
    click.echo("\n* default judge")


@click.command("metrics")
def metrics_cmd() -> None:
    """List the built-in metrics with their scales and fields."""
    from localjudge.metrics import builtin_metric, builtin_names
    from localjudge.metrics.spec import HybridMetric, VerdictMetric

    rows = []
    for name in builtin_names():
        m = builtin_metric(name, style_guide="(yours)")
        if m.kind == "likelihood":
            scale = f"{'PMI' if m.pmi else 'log-prob'} ({m.aggregation}{'' if m.unit == 'token' else ', words'})"
            fields = f"{', '.join(m.fields) or '-'} -> {m.target}"
        elif m.kind == "reference":
            scale, fields = "ROUGE-L F1, no model", f"{m.target} vs {m.reference}"
        elif m.kind == "entailment":
            scale = f"P({m.labels[0]}) per {m.unit}"
            fields = f"{', '.join(m.fields)} -> {m.target}"
        elif m.kind == "pairwise_likelihood":
            scale = f"{'PMI' if m.pmi else 'log-prob'} ({m.aggregation}), difference"
            fields = ", ".join(m.output_fields)
        else:
            assert not isinstance(m, HybridMetric | VerdictMetric)  # hybrids and verdicts are fitted, never built in
            scale = f"{m.low}-{m.high}" if m.kind == "geval" else "A/B, both orders"
            fields = ", ".join(m.fields if m.kind == "geval" else m.output_fields)
        rows.append((name, scale, fields))
    print_table(["metric", "scale", "fields"], rows)


@click.command("score")
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
@min_valid_mass_option
@click.option("--no-progress", is_flag=True, help="Hide progress bars (also hidden when stderr is not a terminal).")
@judge_options
def score_cmd(texts, file, low, high, labels, min_valid_mass, no_progress, **judge_kw) -> None:
    """Print exact score distributions at the end of already-rendered prompts."""
    from localjudge.errors import ConfigError

    prompts = list(texts) + (_read_prompts(Path(file)) if file else [])
    if not prompts:
        raise ConfigError("give prompts as arguments or with --file")
    empty = [k for k, p in enumerate(prompts, 1) if not p.strip()]
    if empty:
        raise ConfigError(f"prompt {empty[0]} is empty; give every prompt some text to score")
    scale = read_scale(low, high, labels)  # every check that needs no model comes before the (slow) load
    threshold = min_valid_mass_or_default(min_valid_mass)
    judge = load_from_options(**judge_kw, progress=not no_progress)
    if scale.labels is not None:
        dists = judge.score_labels(prompts, scale.labels, min_valid_mass=threshold)
    else:
        dists = judge.score_texts(prompts, scale.low, scale.high, min_valid_mass=threshold)
    for p, d in zip(prompts, dists):
        # an unscored item's NaN statistics become null (NaN is not JSON); unscored_reason says why
        record = {"prompt": p[-60:], "min_valid_mass": threshold, **_finite(d.model_dump(mode="json"))}
        click.echo(json.dumps(record, allow_nan=False))


def _finite(value):
    """`value` with every NaN or infinite number in it, at any depth, replaced by None."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return None if isinstance(value, float) and not math.isfinite(value) else value


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


@click.command("steps")
@click.option("--metric", "metric_name", required=True, help="Built-in metric name or metric file.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    required=True,
    help="Write the metric with its steps pinned to this .yaml file.",
)
@click.option(
    "--style-guide", type=click.Path(exists=True, dir_okay=False), default=None, help="Style guide file (style metric)."
)
@click.option("--regenerate", is_flag=True, help="Ignore built-in or pinned steps and let the judge write them.")
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
@click.option("--no-progress", is_flag=True, help="Hide progress bars (also hidden when stderr is not a terminal).")
@judge_options
def steps_cmd(metric_name, out, style_guide, regenerate, overwrite, no_progress, **judge_kw) -> None:
    """Generate (once, cached) the evaluation steps of a metric and write them for review and pinning."""
    from localjudge.errors import ConfigError
    from localjudge.io.files import read_text, refuse_overwriting
    from localjudge.metrics import resolve_metric
    from localjudge.metrics.spec import dump_metric
    from localjudge.metrics.steps import resolve_steps

    refuse_overwriting(
        [out],
        [
            ("metric file", _file_or_none(metric_name)),
            ("style guide", style_guide),
            *judge_inputs(judge_kw["judge_name"], judge_kw["registry"]),
        ],
    )
    if not overwrite and Path(out).exists() and Path(out).stat().st_size > 0:
        raise ConfigError(f"{out} already exists; pass --overwrite to replace it")
    guide = read_text(style_guide, "style guide", ConfigError) if style_guide else None
    metric = resolve_metric(metric_name, style_guide=guide)
    if metric.kind != "geval":
        raise click.UsageError("only G-Eval metrics have evaluation steps")
    if regenerate:
        metric = metric.model_copy(update={"steps": None})
    judge = load_from_options(**judge_kw, progress=not no_progress)
    steps, source = resolve_steps(judge, metric)
    Path(out).write_text(dump_metric(metric.model_copy(update={"steps": steps})), encoding="utf-8")
    click.echo(f"{len(steps)} steps ({source}) written to {out}:")
    for i, s in enumerate(steps, 1):
        click.echo(f"  {i}. {s}")


@click.command("eval")
@click.argument("data", type=click.Path(dir_okay=False))
@click.option(
    "--metric", "metric_names", multiple=True, required=True, help="Built-in metric name or metric file; repeatable."
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Stream result records to this JSONL file (in input order once the run ends).",
)
@click.option("--resume", is_flag=True, help="Continue an interrupted run in --out without redoing finished items.")
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
@click.option(
    "--reasoning",
    type=click.Choice(["none", "before", "after"]),
    default=None,
    help="Override the metrics' reasoning mode.",
)
@click.option(
    "--style-guide", type=click.Path(exists=True, dir_okay=False), default=None, help="Style guide file (style metric)."
)
@click.option(
    "--truncate", is_flag=True, help="Cut content longer than the judge's context (recorded) instead of failing."
)
@min_valid_mass_option
@field_label_option
@click.option("--skip-invalid", is_flag=True, help="Skip malformed rows of DATA, listing each one.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Judge only the first N cases.")
@click.option("--json", "as_json", is_flag=True, help="Print a machine-readable summary.")
@click.option("--no-progress", is_flag=True, help="Hide progress bars (also hidden when stderr is not a terminal).")
@click.option(
    "--distributed",
    is_flag=True,
    help="Split the cases over the processes of `accelerate launch -m localjudge eval ...`; rank 0 reports.",
)
@judge_options
def eval_cmd(
    data,
    metric_names,
    out,
    resume,
    overwrite,
    reasoning,
    style_guide,
    truncate,
    min_valid_mass,
    field_labels,
    skip_invalid,
    limit,
    as_json,
    no_progress,
    distributed,
    **judge_kw,
) -> None:
    """Judge the test cases in DATA (.jsonl, .json or .csv) with one or more metrics."""
    from localjudge.cli.summary import print_run
    from localjudge.errors import ConfigError, repeated
    from localjudge.io.cases import load_cases
    from localjudge.io.files import read_text, refuse_overwriting
    from localjudge.metrics.builtin import with_reasoning
    from localjudge.runs.evaluate import evaluate

    if resume and overwrite:
        raise ConfigError("--resume and --overwrite exclude each other")
    if resume and not out:
        raise ConfigError("--resume needs --out")
    if out:
        refuse_overwriting(
            [out],
            [
                ("data file", data),
                ("style guide", style_guide),
                *[("metric file", _file_or_none(n)) for n in metric_names],
                *judge_inputs(judge_kw["judge_name"], judge_kw["registry"]),
            ],
        )
    if out and not (resume or overwrite) and Path(out).exists() and Path(out).stat().st_size > 0:
        raise ConfigError(f"{out} already exists; pass --resume to continue it or --overwrite to replace it")
    skipped: list[str] | None = [] if skip_invalid else None
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
    threshold = min_valid_mass_or_default(min_valid_mass)
    if distributed:
        from localjudge.runs.distributed import evaluate_distributed, local_device, write_records

        if resume:
            raise ConfigError("--resume is not supported with --distributed; rerun the whole set")
        engine = judge_kw["engine"]
        engine = engine if engine.device else engine.replace(device=local_device())
        judge = load_from_options(**{**judge_kw, "engine": engine}, progress=not no_progress)
        result = evaluate_distributed(
            cases, metrics, judge, truncate=truncate, progress=not no_progress, min_valid_mass=threshold
        )
        if result is None:  # not rank 0: rank 0 prints and writes everything
            return
        if out:
            write_records(result, out, overwrite)
    else:
        judge = load_from_options(**judge_kw, progress=not no_progress)
        result = evaluate(
            cases,
            metrics,
            judge,
            out=out,
            resume=resume,
            overwrite=overwrite,
            truncate=truncate,
            progress=not no_progress,
            min_valid_mass=threshold,
        )
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
        return
    print_run(result)
    if out:
        click.echo(f"\nresults: {out}")


def _file_or_none(path: str) -> str | None:
    from localjudge.io.files import is_file

    return path if is_file(path) else None
