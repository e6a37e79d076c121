"""Commands of the bias lab: `generate` (responses from models) and `bias` (judge them, analyse)."""

from __future__ import annotations

import json
from pathlib import Path

import click

_device = click.option("--device", default=None, help="cpu, cuda, cuda:1... (default: CUDA if available).")
_dtype = click.option("--dtype", default=None, type=click.Choice(["float32", "bfloat16", "float16"]),
                      help="Default: bf16 on CUDA, fp32 on CPU.")


@click.command("generate")
@click.argument("prompts", type=click.Path(exists=True, dir_okay=False))
@click.option("--model", "models", multiple=True, required=True, help="Registry name, model dir, .gguf or hub id; repeatable.")
@click.option("--out", type=click.Path(dir_okay=False), required=True, help="Append responses to this JSONL file.")
@click.option("--max-new-tokens", type=click.IntRange(min=1), default=128, show_default=True, help="Generation limit.")
@click.option("--batch-size", type=click.IntRange(min=1), default=8, show_default=True, help="Prompts per generation chunk.")
@click.option("--resume", is_flag=True, help="Skip (prompt, model) pairs already in --out.")
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
@click.option("--no-progress", is_flag=True, help="Hide progress bars (also hidden when stderr is not a terminal).")
@_device
@_dtype
def generate_cmd(prompts, models, out, max_new_tokens, batch_size, resume, overwrite, no_progress, device, dtype) -> None:
    """Answer the prompts in PROMPTS (JSONL with id, input, optional context/reference) with each --model.

    Greedy and deterministic: instruct models get their chat template, base models a plain
    "Question: ...\\nAnswer:" prompt. Each record names the generator and its family.

    \b
    Example:
      localjudge generate prompts.jsonl --model smollm2-135m --model gemma3-270m --out responses.jsonl
    """
    import gc

    from localjudge import loading
    from localjudge.data import load_cases
    from localjudge.cli.options import judge_inputs
    from localjudge.errors import ConfigError, repeated
    from localjudge.files import refuse_overwriting
    from localjudge.generation import check_prompts, generate_responses

    if resume and overwrite:
        raise ConfigError("--resume and --overwrite exclude each other")
    if len(set(models)) != len(models):
        raise ConfigError(f"models repeated: {repeated(models)}; give each --model once")
    refuse_overwriting([out], [("prompts file", prompts), *[i for m in models for i in judge_inputs(m, None)]])
    cases = load_cases(prompts)
    check_prompts(cases)  # before the first (slow) load
    for k, name in enumerate(models):
        click.echo(f"Loading model {name}...", err=True)
        model = loading.load_judge(name, device=device, dtype=dtype, progress=not no_progress)
        # later models append to the file the first one started
        records = generate_responses(cases, model, out, max_new_tokens=max_new_tokens, batch_size=batch_size,
                                     resume=resume or k > 0, overwrite=overwrite and k == 0,
                                     progress=not no_progress)
        click.echo(f"{model.info.name} ({model.info.family}, {model.info.dtype}): {len(records)} responses", err=True)
        del model
        gc.collect()
    click.echo(f"responses: {out}")


@click.command("bias")
@click.argument("responses", type=click.Path(exists=True, dir_okay=False))
@click.option("--judge", "judges", multiple=True, required=True, help="Judge model; repeatable (loaded one at a time).")
@click.option("--metric", "metric_name", default="correctness", show_default=True,
              help="Built-in metric name or metric file: a G-Eval metric (pointwise) or a pairwise one.")
@click.option("--pairwise", is_flag=True, help="Also compare own-vs-other responses with the pairwise metric, both orders.")
@click.option("--pairwise-metric", default="pairwise", show_default=True, help="Pairwise metric name or file for --pairwise.")
@click.option("--out-dir", type=click.Path(file_okay=False), required=True, help="Folder for report.json, report.md, heatmap.png.")
@click.option("--human-field", default=None, help="Prompt field with a human score of each response.")
@click.option("--truncate", is_flag=True, help="Cut content longer than a judge's context (recorded) instead of failing.")
@click.option("--resume", is_flag=True, help="Continue the result records in --out-dir/records.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of bootstrap and tests.")
@click.option("--resamples", type=click.IntRange(min=1), default=1000, show_default=True, help="Bootstrap resamples.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON instead of the summary.")
@click.option("--no-progress", is_flag=True, help="Hide progress bars (also hidden when stderr is not a terminal).")
@_device
@_dtype
def bias_cmd(responses, judges, metric_name, pairwise, pairwise_metric, out_dir, human_field, truncate, resume, seed,
             resamples, as_json, no_progress, device, dtype) -> None:
    """Score every response in RESPONSES with every --judge and report self-preference, length and position bias.

    \b
    Examples:
      localjudge bias responses.jsonl --judge smollm2-135m --judge gemma3-270m --out-dir bias_out
      localjudge bias responses.jsonl --judge smollm2-135m --judge gemma3-270m --pairwise --out-dir bias_out
    """
    from localjudge.bias.io import STUDY_FILES, analyze_verdicts, summary_lines, write_study
    from localjudge.bias.pipeline import records_path, run_bias
    from localjudge.bias.results import BiasSettings
    from localjudge.cli.options import judge_inputs
    from localjudge.errors import clip
    from localjudge.files import is_file, refuse_overwriting
    from localjudge.generation import read_responses
    from localjudge.metrics import resolve_metric

    metric = resolve_metric(metric_name)
    pair_metric = resolve_metric(pairwise_metric) if pairwise else None
    if metric.kind == "pairwise":
        metric, pair_metric = None, metric
    if pair_metric is not None and pair_metric.kind != "pairwise":
        raise click.UsageError(f"--pairwise-metric {clip(pairwise_metric)} is not a pairwise metric")
    outputs = [Path(out_dir) / name for name in STUDY_FILES]
    outputs += [records_path(Path(out_dir) / "records", j, m.name) for j in judges for m in (metric, pair_metric) if m]
    refuse_overwriting(outputs, [("responses file", responses),
                                 *[("metric file", n) for n in (metric_name, pairwise_metric) if is_file(n)],
                                 *[i for j in judges for i in judge_inputs(j, None)]])
    records = read_responses(responses)
    verdicts = run_bias(records, list(judges), metric, pair_metric, device=device, dtype=dtype,
                        human_field=human_field, records_dir=Path(out_dir) / "records", resume=resume,
                        truncate=truncate, progress=not no_progress)
    study = analyze_verdicts(verdicts, records, responses, metric, pair_metric, human_field=human_field,
                             settings=BiasSettings(seed=seed, n_resamples=resamples))
    files = write_study(study, verdicts, out_dir)
    if as_json:
        click.echo(json.dumps(study.model_dump(mode="json"), indent=1))
        return
    for line in summary_lines(study):
        click.echo(f"- {line}")
    if pair_metric is not None and study.pairwise is None:
        click.echo("- [pairwise] no pairs to compare: every response comes from one family; "
                   "add responses of a model of another family")
    click.echo("")
    for role, path in files.items():
        click.echo(f"{role}: {path}")
