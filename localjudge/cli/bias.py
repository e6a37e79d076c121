"""Commands of the bias lab: `generate` (responses from models) and `bias` (judge them, analyse)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import NamedTuple

import click

from localjudge.bias.options import BiasOptions
from localjudge.cli.flags import Flag, settings_flags
from localjudge.cli.options import SectionedCommand, engine_options, registry_option, run_options
from localjudge.cli.reading import scoring_options

_family = click.option(
    "--family",
    "family_specs",
    multiple=True,
    metavar="MODEL=FAMILY",
    help="Model family of a model loaded by path or hub id (registry entries have "
    "theirs), e.g. --family ./my-model=llama; repeatable.",
)
# today's help where the field's description speaks of the Python API
_BIAS_HELP = {
    "n_bootstrap": "Bootstrap resamples behind every interval and test.",
    "seed": "Seed of bootstrap and tests.",
    "ci_level": "Coverage of the percentile bootstrap intervals.",
}
_REGISTRY_HELP = "A models.yaml other than the bundled one (names, sources and families)."
_models = registry_option(_REGISTRY_HELP)


@click.command("generate", cls=SectionedCommand)
@click.argument("prompts", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--model", "models", multiple=True, required=True, help="Registry name, model dir, .gguf or hub id; repeatable."
)
@run_options(
    "out",
    "resume",
    "overwrite",
    "progress",
    out_required=True,
    out="Append responses to this JSONL file.",
    resume="Skip (prompt, model) pairs already in --out.",
)
@click.option("--max-new-tokens", type=click.IntRange(min=1), default=128, show_default=True, help="Generation limit.")
@click.option(
    "--batch-size", type=click.IntRange(min=1), default=8, show_default=True, help="Prompts per generation chunk."
)
@_family
@_models
@engine_options
def generate_cmd(prompts, models, run, max_new_tokens, batch_size, family_specs, registry, engine) -> None:
    """Answer the prompts in PROMPTS (JSONL with id, input, optional context/reference) with each --model.

    Greedy and deterministic: instruct models get their chat template, base models a plain
    "Question: ...\\nAnswer:" prompt. Each record names the generator and its family: a
    registry entry's, or the one --family gives a model loaded by path or hub id (required).

    \b
    Examples:
      localjudge generate prompts.jsonl --model smollm2-135m --model gemma3-270m --out responses.jsonl
      localjudge generate prompts.jsonl --model ./my-llama --family ./my-llama=llama --out responses.jsonl
    """
    from localjudge.bias import lab
    from localjudge.bias.families import parse_families

    lab.generate(
        prompts,
        models,
        run,
        max_new_tokens=max_new_tokens,
        batch_size=batch_size,
        families=parse_families(family_specs),
        registry=registry,
        engine=engine,
        say=lambda line: click.echo(line, err=True),
    )
    click.echo(f"responses: {run.out}")


class _Analysis(NamedTuple):
    """What `bias run` and `bias analyse` share: what is analysed, how, and where it goes."""

    metric_name: str | None
    """--metric: the pointwise (or pairwise) metric."""
    out_dir: str
    """--out-dir: the study's folder."""
    human_field: str | None
    """--human-field: the prompts' field holding a human score of each response."""
    families: dict[str, str]
    """--family MODEL=FAMILY, parsed."""
    panels: list
    """--panel NAME=J1,J2, parsed (`BiasPanel`)."""
    settings: BiasOptions
    """--bootstrap, --seed and the other `BiasOptions` flags."""
    as_json: bool
    """--json: the report as JSON instead of the summary."""

    def files(self, responses: str, registry: str | None, pairwise_metric: str | None):
        """The files the study reads (named, to refuse writing over them) and those it writes."""
        from localjudge.bias.study import STUDY_FILES
        from localjudge.io.files import is_file

        inputs = [
            ("responses file", responses),
            ("judge registry", registry),
            *[("metric file", n) for n in (self.metric_name, pairwise_metric) if n and is_file(n)],
        ]
        return inputs, [Path(self.out_dir) / name for name in STUDY_FILES]


def _analysis_options(fn):
    """The options `bias run` and `bias analyse` share, given to the command as one `_Analysis`."""

    @functools.wraps(fn)
    def command(metric_name, out_dir, human_field, panel_specs, settings, as_json, family_specs, **rest):
        from localjudge.bias.families import parse_families
        from localjudge.bias.panels import parse_panel

        analysis = _Analysis(
            metric_name,
            out_dir,
            human_field,
            parse_families(family_specs),
            [parse_panel(spec) for spec in panel_specs],
            settings,
            as_json,
        )
        return fn(analysis=analysis, **rest)

    options = [
        click.option(
            "--metric",
            "metric_name",
            default=None,
            help="Built-in metric name or metric file: a G-Eval metric (pointwise) or a pairwise one "
            "[default: correctness].",
        ),
        click.option(
            "--out-dir",
            type=click.Path(file_okay=False),
            required=True,
            help="Folder for report.json, report.md, heatmap.png.",
        ),
        click.option("--human-field", default=None, help="Prompt field with a human score of each response."),
        click.option(
            "--panel",
            "panel_specs",
            multiple=True,
            metavar="NAME=J1,J2[,...]",
            help="Also measure a panel of the judges (their judgments averaged) as a judge: each family's preference "
            "under it, beside the neutral judges'; repeatable. Members by the names the judgments carry.",
        ),
        settings_flags(BiasOptions, "settings", help_text=_BIAS_HELP, flags={"n_bootstrap": Flag(name="--bootstrap")}),
        click.option("--json", "as_json", is_flag=True, help="Print the report as JSON instead of the summary."),
        _family,
    ]
    for option in reversed(options):
        command = option(command)
    return command


_RESPONSES = click.argument("responses", type=click.Path(exists=True, dir_okay=False))


@click.group("bias")
def bias_cmd() -> None:
    """Self-preference, length and position bias of judges: run them on responses, or analyse their judgments.

    RESPONSES is JSON lines, one response per line, as `localjudge generate` writes them: id,
    input, context, reference, generator, generator_family, response, prompt_style,
    max_new_tokens, batch_size, generator_info, localjudge_version, extra (the prompt's other
    fields, e.g. human scores for --human-field).

    \b
    Examples:
      localjudge bias run responses.jsonl --judge smollm2-135m --judge gemma3-270m --out-dir bias_out
      localjudge bias analyse responses.jsonl --judgments bias_out --out-dir bias_out_again
    """


@bias_cmd.command("run", cls=SectionedCommand)
@_RESPONSES
@click.option("--judge", "judges", multiple=True, required=True, help="Judge model; repeatable (loaded one at a time).")
@click.option(
    "--pairwise", is_flag=True, help="Also compare own-vs-other responses with the pairwise metric, both orders."
)
@click.option(
    "--pairwise-metric", default=None, help="Pairwise metric name or file for --pairwise [default: pairwise]."
)
@_analysis_options
@run_options("resume", "progress", resume="Continue the result records in --out-dir/records.")
@scoring_options(
    "truncate", "min_valid_mass", truncate="Cut content longer than a judge's context (recorded) instead of failing."
)
@_models
@engine_options
def bias_run(
    responses,
    judges,
    pairwise,
    pairwise_metric,
    analysis: _Analysis,
    run,
    scoring,
    registry,
    engine,
) -> None:
    """Score every response in RESPONSES with every --judge and report self-preference, length and position bias.

    Every judge and generator needs a model family: registry entries have one; give models
    loaded by path or hub id theirs with --family MODEL=FAMILY (or list them in --registry).

    \b
    Examples:
      localjudge bias run responses.jsonl --judge smollm2-135m --judge gemma3-270m --out-dir bias_out
      localjudge bias run responses.jsonl --judge smollm2-135m --judge gemma3-270m --pairwise --out-dir bias_out
      localjudge bias run responses.jsonl --judge ./my-llama --family ./my-llama=llama --judge gemma3-270m \\
          --out-dir out
    """
    from localjudge.bias import lab

    inputs, outputs = analysis.files(responses, registry, pairwise_metric)
    study, judgments, pair_metric = lab.judge_and_analyse(
        responses,
        judges,
        analysis.out_dir,
        metric_name=analysis.metric_name,
        pairwise=pairwise,
        pairwise_metric=pairwise_metric,
        families=analysis.families,
        registry=registry,
        human_field=analysis.human_field,
        settings=analysis.settings,
        inputs=inputs,
        outputs=outputs,
        run=run,
        scoring=scoring,
        engine=engine,
        panels=analysis.panels,
    )
    no_pairs = pair_metric is not None and study.pairwise is None
    _report(study, judgments, analysis, [_NO_PAIRS] if no_pairs else [])


@bias_cmd.command("analyse", cls=SectionedCommand)
@_RESPONSES
@click.option(
    "--judgments",
    "judgment_paths",
    multiple=True,
    required=True,
    type=click.Path(exists=True),
    help="Judgments on disk: a folder a bias run wrote, or its pointwise_records.jsonl / pairwise_records.jsonl; "
    "repeatable.",
)
@click.option("--pairwise-metric", default=None, help="The pairwise metric the judgments were scored with (recorded).")
@_analysis_options
def bias_analyse(responses, judgment_paths, pairwise_metric, analysis: _Analysis) -> None:
    """Analyse the judgments of an earlier run of judges on RESPONSES again: no model loads (seconds).

    Judgments are JSON lines in the schema of the pointwise_records.jsonl and
    pairwise_records.jsonl a run writes next to its report: pointwise {item_id, judge,
    judge_family, generator, generator_family, score, response_length, judge_logppl?,
    human_score?}; pairwise {item_id, judge, judge_family, generator_a, family_a, generator_b,
    family_b, p_a_first, p_a_second, human_preferred?, length_a?, length_b?}. Without
    judge_logppl the perplexity covariate is skipped (the report says so). --metric is the
    metric the judgments were scored with, recorded in the report (optional).

    \b
    Examples:
      localjudge bias analyse responses.jsonl --judgments bias_out --out-dir bias_out_again
      localjudge bias analyse responses.jsonl --judgments bias_out --out-dir panels \\
          --panel three=smollm2-135m,gemma3-270m,qwen2.5-coder-1.5b --panel two=smollm2-135m,gemma3-270m
    """
    from localjudge.bias import lab

    inputs, outputs = analysis.files(responses, None, pairwise_metric)
    study, judgments, _ = lab.analyse_only(
        responses,
        judgment_paths,
        metric_name=analysis.metric_name,
        pairwise_metric=pairwise_metric,
        families=analysis.families,
        human_field=analysis.human_field,
        settings=analysis.settings,
        inputs=inputs,
        outputs=outputs,
        panels=analysis.panels,
    )
    _report(study, judgments, analysis)


_NO_PAIRS = (
    "[pairwise] no pairs to compare: every response comes from one family; add responses of a model of another family"
)


def _report(study, judgments, analysis: _Analysis, notes: list[str] | None = None) -> None:
    """Writes the study's files, then prints it as JSON or as its summary lines, `notes` and files."""
    from localjudge.bias.study import summary_lines, write_study

    files = write_study(study, judgments, analysis.out_dir)
    if analysis.as_json:
        click.echo(json.dumps(study.model_dump(mode="json"), indent=1))
        return
    for line in [*summary_lines(study), *(notes or [])]:
        click.echo(f"- {line}")
    click.echo("")
    for role, path in files.items():
        click.echo(f"{role}: {path}")
