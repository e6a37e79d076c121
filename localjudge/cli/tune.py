"""`localjudge tune`: train a judge's reading of a metric on labelled cases; writes a tuned judge folder."""

from __future__ import annotations

from pathlib import Path

import click

from localjudge.errors import ConfigError


@click.command("tune")
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
    "--loss",
    type=click.Choice(["ce", "mse", "ce+mse", "rank", "ce+rank"]),
    default="ce+rank",
    show_default=True,
    help="Training loss.",
)
@click.option("--rank", type=int, default=16, show_default=True, help="LoRA rank.")
@click.option("--alpha", type=float, default=32.0, show_default=True, help="LoRA alpha.")
@click.option("--layers", type=int, default=4, show_default=True, help="Top decoder layers tuned.")
@click.option("--learning-rate", type=float, default=2e-4, show_default=True, help="AdamW learning rate.")
@click.option("--epochs", type=int, default=6, show_default=True, help="Most epochs.")
@click.option("--patience", type=int, default=2, show_default=True, help="Epochs without improvement before stopping.")
@click.option("--validation-share", type=float, default=0.2, show_default=True, help="Share of groups held out.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of init, split and order.")
@click.option("--pack-tokens", type=int, default=4096, show_default=True, help="Most tokens per packed sequence.")
@click.option("--mass-weight", type=float, default=0.1, show_default=True, help="Weight of -log(valid mass).")
@click.option("--min-valid-mass", type=float, default=0.5, show_default=True, help="Guard: fail below this mass.")
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
    **tuning,
) -> None:
    """Tune JUDGE to the human labels in CASES for one metric or several (LoRA through the exact score distribution).

    \b
    Example:
      localjudge tune summeval.jsonl --metric consistency --judge qwen2.5-coder-0.5b \\
          --human human_consistency --group doc_id --out tuned-consistency
      localjudge eval new.jsonl --metric consistency --judge tuned-consistency
      localjudge tune summeval.jsonl --metric coherence --metric consistency --metric fluency \\
          --metric relevance --judge qwen2.5-coder-0.5b --human 'human_{metric}' --group doc_id --out tuned
    """
    from localjudge.io.cases import load_cases
    from localjudge.judges.adapters import file_sha256
    from localjudge.metrics import resolve_metric
    from localjudge.tune import TuneJob, TuneSettings, tune

    if resume and overwrite:
        raise ConfigError("--resume and --overwrite contradict each other; pass one")
    settings = TuneSettings(**tuning)
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
        data_sha256=file_sha256(cases),
        data_name=cases.name,
        never_shown=never_shown,
    )
    chosen = [resolve_metric(m) for m in metrics]
    manifest = tune(load_cases(cases), chosen[0] if len(chosen) == 1 else chosen, job, settings)
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


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.3f}"
