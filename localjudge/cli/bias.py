"""Commands of the bias lab: `generate` (responses from models) and `bias` (judge them, analyse)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from localjudge.cli.options import engine_options
from localjudge.cli.reading import min_valid_mass_option, min_valid_mass_or_default

_family = click.option(
    "--family",
    "family_specs",
    multiple=True,
    metavar="MODEL=FAMILY",
    help="Model family of a model loaded by path or hub id (registry entries have "
    "theirs), e.g. --family ./my-model=llama; repeatable.",
)
_models = click.option(
    "--models",
    "registry",
    type=click.Path(dir_okay=False),
    default=None,
    help="A models.yaml other than the bundled one (names, sources and families).",
)


def _registry(path: str | None):
    from localjudge.judges.registry import load_registry

    return load_registry(Path(path)) if path else load_registry()


@click.command("generate")
@click.argument("prompts", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--model", "models", multiple=True, required=True, help="Registry name, model dir, .gguf or hub id; repeatable."
)
@click.option("--out", type=click.Path(dir_okay=False), required=True, help="Append responses to this JSONL file.")
@click.option("--max-new-tokens", type=click.IntRange(min=1), default=128, show_default=True, help="Generation limit.")
@click.option(
    "--batch-size", type=click.IntRange(min=1), default=8, show_default=True, help="Prompts per generation chunk."
)
@click.option("--resume", is_flag=True, help="Skip (prompt, model) pairs already in --out.")
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
@click.option("--no-progress", is_flag=True, help="Hide progress bars (also hidden when stderr is not a terminal).")
@_family
@_models
@engine_options
def generate_cmd(
    prompts,
    models,
    out,
    max_new_tokens,
    batch_size,
    resume,
    overwrite,
    no_progress,
    family_specs,
    registry,
    engine,
) -> None:
    """Answer the prompts in PROMPTS (JSONL with id, input, optional context/reference) with each --model.

    Greedy and deterministic: instruct models get their chat template, base models a plain
    "Question: ...\\nAnswer:" prompt. Each record names the generator and its family: a
    registry entry's, or the one --family gives a model loaded by path or hub id (required).

    \b
    Examples:
      localjudge generate prompts.jsonl --model smollm2-135m --model gemma3-270m --out responses.jsonl
      localjudge generate prompts.jsonl --model ./my-llama --family ./my-llama=llama --out responses.jsonl
    """
    import gc

    from localjudge.bias.families import check_names, model_families, parse_families
    from localjudge.cli.options import judge_inputs
    from localjudge.errors import ConfigError, repeated
    from localjudge.io.cases import load_cases
    from localjudge.io.files import refuse_overwriting
    from localjudge.judges import loading
    from localjudge.runs.generation import check_prompts, generate_responses

    if resume and overwrite:
        raise ConfigError("--resume and --overwrite exclude each other")
    if len(set(models)) != len(models):
        raise ConfigError(f"models repeated: {repeated(models)}; give each --model once")
    refuse_overwriting(
        [out],
        [("prompts file", prompts), ("judge registry", registry), *[i for m in models for i in judge_inputs(m, None)]],
    )
    cases = load_cases(prompts)
    check_prompts(cases)  # these checks come before the first (slow) load
    given = parse_families(family_specs)
    check_names(given, models, "--model")
    families = model_families(models, given, _registry(registry), "model")
    for k, name in enumerate(models):
        click.echo(f"Loading model {name}...", err=True)
        model = loading.load_judge(
            name, options=engine, progress=not no_progress, family=families[name], registry_path=registry
        )
        # later models append to the file the first one started
        records = generate_responses(
            cases,
            model,
            out,
            max_new_tokens=max_new_tokens,
            batch_size=batch_size,
            resume=resume or k > 0,
            overwrite=overwrite and k == 0,
            progress=not no_progress,
        )
        click.echo(f"{model.info.name} ({model.info.family}, {model.info.dtype}): {len(records)} responses", err=True)
        del model
        gc.collect()
    click.echo(f"responses: {out}")


@click.command("bias")
@click.argument("responses", type=click.Path(exists=True, dir_okay=False))
@click.option("--judge", "judges", multiple=True, help="Judge model; repeatable (loaded one at a time).")
@click.option(
    "--verdicts",
    "verdict_paths",
    multiple=True,
    type=click.Path(exists=True),
    help="Analyse verdicts already on disk instead of running judges (no model loads): a folder a "
    "bias run wrote, or its pointwise_records.jsonl / pairwise_records.jsonl; repeatable.",
)
@click.option(
    "--metric",
    "metric_name",
    default=None,
    help="Built-in metric name or metric file: a G-Eval metric (pointwise) or a pairwise one "
    "[default: correctness]. With --verdicts: the metric the verdicts were scored with, "
    "recorded in the report (optional).",
)
@click.option(
    "--pairwise", is_flag=True, help="Also compare own-vs-other responses with the pairwise metric, both orders."
)
@click.option(
    "--pairwise-metric", default=None, help="Pairwise metric name or file for --pairwise [default: pairwise]."
)
@click.option(
    "--out-dir", type=click.Path(file_okay=False), required=True, help="Folder for report.json, report.md, heatmap.png."
)
@click.option("--human-field", default=None, help="Prompt field with a human score of each response.")
@click.option(
    "--truncate", is_flag=True, help="Cut content longer than a judge's context (recorded) instead of failing."
)
@click.option("--resume", is_flag=True, help="Continue the result records in --out-dir/records.")
@min_valid_mass_option
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of bootstrap and tests.")
@click.option("--resamples", type=click.IntRange(min=1), default=1000, show_default=True, help="Bootstrap resamples.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON instead of the summary.")
@click.option("--no-progress", is_flag=True, help="Hide progress bars (also hidden when stderr is not a terminal).")
@_family
@_models
@engine_options
def bias_cmd(
    responses,
    judges,
    verdict_paths,
    metric_name,
    pairwise,
    pairwise_metric,
    out_dir,
    human_field,
    truncate,
    resume,
    min_valid_mass,
    seed,
    resamples,
    as_json,
    no_progress,
    family_specs,
    registry,
    engine,
) -> None:
    """Score every response in RESPONSES with every --judge and report self-preference, length and position bias.

    RESPONSES is JSON lines, one response per line, as `localjudge generate` writes them: id,
    input, context, reference, generator, generator_family, response, prompt_style,
    max_new_tokens, batch_size, generator_info, localjudge_version, extra (the prompt's other
    fields, e.g. human scores for --human-field).

    With --verdicts instead of --judge, no model loads: the verdicts of an earlier run are
    analysed again (seconds). Verdicts are JSON lines in the schema of the
    pointwise_records.jsonl and pairwise_records.jsonl a run writes next to its report:
    pointwise {item_id, judge, judge_family, generator, generator_family, score,
    response_length, judge_logppl?, human_score?}; pairwise {item_id, judge, judge_family,
    generator_a, family_a, generator_b, family_b, p_a_first, p_a_second, human_preferred?,
    length_a?, length_b?}. Without judge_logppl the perplexity covariate is skipped (the
    report says so).

    Every judge and generator needs a model family: registry entries have one; give models
    loaded by path or hub id theirs with --family MODEL=FAMILY (or list them in --models).

    \b
    Examples:
      localjudge bias responses.jsonl --judge smollm2-135m --judge gemma3-270m --out-dir bias_out
      localjudge bias responses.jsonl --judge smollm2-135m --judge gemma3-270m --pairwise --out-dir bias_out
      localjudge bias responses.jsonl --judge ./my-llama --family ./my-llama=llama --judge gemma3-270m --out-dir out
      localjudge bias responses.jsonl --verdicts bias_out --out-dir bias_out_again
    """
    from localjudge.bias.families import parse_families
    from localjudge.bias.io import STUDY_FILES, summary_lines, write_study
    from localjudge.bias.results import BiasSettings
    from localjudge.cli.options import given_engine_flags
    from localjudge.errors import ConfigError
    from localjudge.io.files import is_file

    if bool(judges) == bool(verdict_paths):
        raise ConfigError("give judges to run (--judge) or verdicts to analyse (--verdicts), one of the two")
    given = parse_families(family_specs)
    settings = BiasSettings(seed=seed, n_resamples=resamples)
    inputs = [
        ("responses file", responses),
        ("judge registry", registry),
        *[("metric file", n) for n in (metric_name, pairwise_metric) if n and is_file(n)],
    ]
    outputs = [Path(out_dir) / name for name in STUDY_FILES]
    if verdict_paths:
        judging_only = {
            "--pairwise": pairwise,
            "--truncate": truncate,
            "--resume": resume,
            "--min-valid-mass": min_valid_mass is not None,
            "--models": registry,
            **{flag: True for flag in given_engine_flags(engine)},
        }
        for option, value in judging_only.items():
            if value:
                raise ConfigError(f"{option} applies when judges run; drop it with --verdicts")
        study, verdicts, pair_metric = _analyse_only(
            responses, verdict_paths, metric_name, pairwise_metric, given, human_field, settings, inputs, outputs
        )
    else:
        study, verdicts, pair_metric = _judge_and_analyse(
            responses,
            judges,
            metric_name,
            pairwise,
            pairwise_metric,
            given,
            registry,
            human_field,
            settings,
            inputs,
            outputs,
            out_dir,
            resume=resume,
            truncate=truncate,
            progress=not no_progress,
            min_valid_mass=min_valid_mass_or_default(min_valid_mass),
            engine=engine,
        )
    files = write_study(study, verdicts, out_dir)
    if as_json:
        click.echo(json.dumps(study.model_dump(mode="json"), indent=1))
        return
    for line in summary_lines(study):
        click.echo(f"- {line}")
    if pair_metric is not None and study.pairwise is None and not verdict_paths:
        click.echo(
            "- [pairwise] no pairs to compare: every response comes from one family; "
            "add responses of a model of another family"
        )
    click.echo("")
    for role, path in files.items():
        click.echo(f"{role}: {path}")


def _metrics(metric_name: str | None, pairwise: bool, pairwise_metric: str | None, default: bool):
    """The pointwise and pairwise metrics the options name (defaults only when `default`)."""
    from localjudge.errors import clip
    from localjudge.metrics import resolve_metric

    name = metric_name or ("correctness" if default else None)
    metric = resolve_metric(name) if name else None
    pair_name = pairwise_metric or ("pairwise" if pairwise else None)
    pair_metric = resolve_metric(pair_name) if pair_name else None
    if metric is not None and metric.kind == "pairwise":
        if pair_metric is not None and not default:
            raise click.UsageError("--metric names a pairwise metric and --pairwise-metric another; give one")
        metric, pair_metric = None, metric
    if pair_metric is not None and pair_metric.kind != "pairwise":
        raise click.UsageError(f"--pairwise-metric {clip(pair_name)} is not a pairwise metric")
    return metric, pair_metric


def _judge_and_analyse(
    responses,
    judges,
    metric_name,
    pairwise,
    pairwise_metric,
    given,
    registry,
    human_field,
    settings,
    inputs,
    outputs,
    out_dir,
    *,
    resume: bool,
    truncate: bool,
    progress: bool,
    min_valid_mass: float,
    engine,
):
    """Checks everything that needs no model, then runs the judges one at a time and analyses."""
    from localjudge.bias.families import check_names, fill_families, model_families
    from localjudge.bias.io import analyze_verdicts
    from localjudge.bias.pipeline import check_responses, records_path, run_bias
    from localjudge.cli.options import judge_inputs
    from localjudge.io.files import refuse_overwriting
    from localjudge.runs.generation import read_responses

    metric, pair_metric = _metrics(metric_name, pairwise, pairwise_metric, default=True)
    outputs = outputs + [
        records_path(Path(out_dir) / "records", j, m.name) for j in judges for m in (metric, pair_metric) if m
    ]
    refuse_overwriting(outputs, inputs + [i for j in judges for i in judge_inputs(j, None)])
    records = read_responses(responses)
    check_responses(records, metric, human_field)
    check_names(given, [*judges, *{r.generator for r in records}], "--judge or generator")
    judge_families = model_families(judges, given, _registry(registry), "judge")
    gen_families = fill_families({r.generator: r.generator_family for r in records}, given, "generator")
    records = [r.model_copy(update={"generator_family": gen_families[r.generator]}) for r in records]
    verdicts = run_bias(
        records,
        list(judges),
        metric,
        pair_metric,
        families=judge_families,
        registry_path=registry,
        human_field=human_field,
        records_dir=Path(out_dir) / "records",
        resume=resume,
        truncate=truncate,
        progress=progress,
        min_valid_mass=min_valid_mass,
        options=engine,
    )
    study = analyze_verdicts(
        verdicts, records, responses, metric, pair_metric, human_field=human_field, settings=settings
    )
    return study, verdicts, pair_metric


def _analyse_only(
    responses, verdict_paths, metric_name, pairwise_metric, given, human_field, settings, inputs, outputs
):
    """Reads verdicts from disk and analyses them; imports no torch and loads no model."""
    from localjudge.bias.families import check_names
    from localjudge.bias.io import Verdicts, analyze_records
    from localjudge.bias.verdicts import align_verdicts, read_verdicts, verdict_files
    from localjudge.io.files import refuse_overwriting
    from localjudge.runs.generation import read_responses

    metric, pair_metric = _metrics(metric_name, False, pairwise_metric, default=False)
    files = verdict_files(verdict_paths)
    refuse_overwriting(outputs, inputs + [("verdicts file", f) for f in files])
    records = read_responses(responses)
    point, pair, files = read_verdicts(verdict_paths)
    check_names(given, {r.generator for r in records} | {v.judge for v in [*point, *pair]}, "judge or generator")
    point, pair, records, judges = align_verdicts(point, pair, records, given, human_field)
    study = analyze_records(
        point,
        pair,
        records,
        responses,
        metric,
        pair_metric,
        judges=judges,
        human_field=human_field,
        settings=settings,
        verdicts_files=files,
    )
    return study, [Verdicts(tuple(point), tuple(pair))], pair_metric
