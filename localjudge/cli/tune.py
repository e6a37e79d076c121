"""`localjudge tune`: train a judge's reading of a metric on labelled cases; writes a tuned judge folder."""

from __future__ import annotations

from pathlib import Path

import click

from localjudge.cli.flags import flag_of, settings_flags
from localjudge.cli.options import SectionedCommand
from localjudge.errors import ConfigError
from localjudge.heads.options import HeadOptions
from localjudge.tune.options import TuneOptions

_SEED_HELP = {"seed": "Seed of the split and order, and of the adapter's initialisation (lora) or the folds (head)."}


@click.command("tune", cls=SectionedCommand)
@click.argument("cases", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--metric",
    "metrics",
    required=True,
    multiple=True,
    metavar="NAME",
    help="Metric to tune for: built-in name or .yaml file; repeat it to tune one adapter for several.",
)
@click.option("--judge", required=True, metavar="NAME", help="Base judge: registry name, model folder or GGUF.")
@click.option(
    "--human",
    required=True,
    metavar="FIELD",
    help="Case field with the human label; with several metrics a name with {metric} in it, e.g. 'human_{metric}'.",
)
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Folder to write the tuned judge to.")
@click.option("--group", metavar="FIELD", help="Field grouping cases (e.g. doc_id); default: the input text.")
@click.option("--human-scale", type=(float, float), metavar="LOW HIGH", help="Scale of the labels [default: metric's].")
@click.option("--name", help="Name of the tuned judge [default: the folder's name].")
@click.option("--resume", is_flag=True, help="Continue an unfinished tune in --out.")
@click.option("--overwrite", is_flag=True, help="Replace a tune in --out.")
@click.option("--device", help="cpu, cuda... [default: CUDA when available].")
@click.option("--features", type=click.Path(file_okay=False, path_type=Path), help="Shared feature cache folder.")
@click.option("--never-shown", default="", help="What the judge was never shown, for its manifest.")
@click.option(
    "--method",
    type=click.Choice(["head", "lora"]),
    default="head",
    show_default=True,
    help="head: linear heads on the judge's hidden states, fit in seconds (read SummEval's held-out articles at "
    "0.40 with the 135M judge where LoRA read 0.14 with the 0.5B: benchmarks/quality/heads/); lora: LoRA through "
    "the exact score distribution.",
)
@click.option(
    "--source-field",
    "head_source_fields",
    multiple=True,
    metavar="FIELD",
    help="head: case field shown before the output; repeat for several [default: input].",
)
@click.option(
    "--field-label",
    "head_field_labels",
    multiple=True,
    metavar="FIELD=LABEL",
    help="head: the label a source field is shown under, e.g. input=Article [default: the field's name].",
)
@settings_flags(HeadOptions, "head", ["output_label", "anchor", "folds", "sentences"])
@settings_flags(TuneOptions, "lora", help_text=_SEED_HELP)
def tune_cmd(
    cases: Path,
    metrics: tuple[str, ...],
    judge: str,
    human: str,
    out: Path,
    group,
    human_scale,
    name,
    resume,
    overwrite,
    device,
    features,
    never_shown,
    method,
    head_source_fields,
    head_field_labels,
    head: HeadOptions,
    lora: TuneOptions,
) -> None:
    """Tune JUDGE to the human labels in CASES for one metric or several: heads on its hidden states, or LoRA.

    \b
    Example:
      localjudge tune summeval.jsonl --metric consistency --judge smollm2-135m \\
          --human human_consistency --group doc_id --field-label input=Article --out head-consistency
      localjudge eval new.jsonl --metric consistency --judge head-consistency
      localjudge tune summeval.jsonl --metric consistency --judge qwen2.5-coder-0.5b --method lora \\
          --human human_consistency --group doc_id --out tuned-consistency
      localjudge tune summeval.jsonl --metric coherence --metric consistency --metric fluency \\
          --metric relevance --judge qwen2.5-coder-0.5b --human 'human_{metric}' --group doc_id --out tuned
    """
    from localjudge.heads import fit_heads
    from localjudge.io.cases import load_cases
    from localjudge.metrics import resolve_metric
    from localjudge.tune import TuneJob, tune
    from localjudge.weights.hashes import sha256_file

    if resume and overwrite:
        raise ConfigError("--resume and --overwrite contradict each other; pass one")
    job = TuneJob(
        judge=judge,
        human=human,
        out=out,
        group=group,
        human_scale=human_scale,
        name=name,
        resume=resume,
        overwrite=overwrite,
        device=device,
        features=features,
        data_sha256=sha256_file(cases),
        data_name=cases.name,
        never_shown=never_shown,
    )
    chosen = [resolve_metric(m) for m in metrics]
    if method == "head":
        refused = [n for n in TuneOptions.model_fields if n in lora.model_fields_set - {"seed"}]
        if refused:
            raise ConfigError(f"{flag_of(refused[0])} is a LoRA setting; pass --method lora, or drop it")
        given = {n: getattr(head, n) for n in head.model_fields_set}
        options = HeadOptions(
            **given,
            source_fields=list(head_source_fields) or ["input"],
            field_labels=_labels(head_field_labels),
            seed=lora.seed,  # --seed seeds the heads' folds too
        )
        _report_heads(fit_heads(load_cases(cases), chosen, job, options), out, metrics[0])
        return
    manifest = tune(load_cases(cases), chosen[0] if len(chosen) == 1 else chosen, job, lora)
    click.echo(f"tuned judge {manifest.name}: {out}")
    click.echo(f"  base {manifest.base} ({manifest.base_provenance}); adapter sha256:{manifest.adapter_sha256[:16]}…")
    click.echo(f"  validation ({manifest.agreement_name}):")
    for h in manifest.history:
        mark = "  <- kept" if h.epoch == manifest.best_epoch else ""
        agree = "n/a" if h.agreement is None else f"{h.agreement:+.3f}"
        loss = "" if h.train_loss is None else f"  loss {h.train_loss:.3f}"
        each = "".join(f"  {k} {_fmt(v)}" for k, v in h.per_metric.items())
        click.echo(f"    epoch {h.epoch}: agreement {agree}{each}  valid mass {h.valid_mass:.3f}{loss}{mark}")
    cost = f"{manifest.wall_seconds:.0f} s, {manifest.tokens_per_second:.0f} tokens/s tuned"
    click.echo(f"  {cost}, peak {manifest.peak_memory_gib:.1f} GiB")
    click.echo(f"use it: localjudge eval CASES --metric {metrics[0]} --judge {out}")


def _labels(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        field, sep, label = pair.partition("=")
        if not sep or not field or not label:
            raise ConfigError(f"--field-label {pair!r}: write FIELD=LABEL, e.g. input=Article")
        out[field] = label
    return out


def _report_heads(manifest, out: Path, metric: str) -> None:
    click.echo(f"head judge {manifest.name}: {out}")
    click.echo(f"  base {manifest.base} ({manifest.base_provenance}); heads sha256:{manifest.head_sha256[:16]}…")
    read = f"{manifest.outputs_read} outputs read in {manifest.feature_seconds:.0f} s"
    click.echo(f"  features: {read} (the rest cached)")
    for h in manifest.heads:
        c = h.chosen
        anchor = "anchored on the likelihood" if h.reading["reading"].get("anchor") else "no anchor"
        click.echo(
            f"  {h.metric}: {h.labelled_cases} labels in {h.groups} groups; layers {c.layers}, alpha {c.alpha:g}, "
            f"{anchor}; {h.folds}-fold grouped CV {h.agreement_name}: {_fmt(c.agreement)} ({h.fit_seconds:.1f} s)"
        )
    click.echo(f"  {manifest.wall_seconds:.0f} s, peak {manifest.peak_memory_gib:.1f} GiB")
    click.echo(f"use it: localjudge eval CASES --metric {metric} --judge {out}")


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.3f}"
