"""`localjudge calibrate`: how far a judge's scores can be trusted against human labels, and fits on them.

One subcommand per job, each building one `CalibrationOptions`: `agreement` (ρ with the labels,
intervals, READY or not), `fit-hybrid` (one score from several metrics), `fit-verdict` (a
pass/fail verdict with a calibrated P(acceptable)) and `panel-weights` (a panel's member weights).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import click

from localjudge.calibration.options import CalibrationOptions
from localjudge.cli.fits import HybridRequest, VerdictRequest, fit_hybrid_cmd, fit_verdict_cmd
from localjudge.cli.flags import Flag, settings_flags
from localjudge.cli.output import print_table
from localjudge.errors import ConfigError

if TYPE_CHECKING:
    from localjudge.calibration.inputs import PairSource


def _pick(a: str | None, b: str | None, names: str) -> str | None:
    if a is not None and b is not None and a != b:
        raise ConfigError(f"{names} name the same field; pass only one")
    return a if a is not None else b


_PATH = click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
_SAVE = click.Path(dir_okay=False, path_type=Path)


def _split(what: str):
    """--split and --seed, the share `what` is fitted on and the seed of that split, as one `CalibrationOptions`
    named `settings`."""
    return settings_flags(
        CalibrationOptions, "settings", ["split", "seed"], {"split": f"Share {what}.", "seed": "Seed of the split."}
    )


# today's help where the field's description speaks of the Python API
_AGREEMENT_HELP = {
    "target": "ρ needed for READY.",
    "n_bootstrap": "Bootstrap resamples per interval (0: none).",
    "seed": "Seed of bootstrap, split.",
    "judge_scale": "Judge score scale (0 1 is implied by --judge-field score).",
    "human_scale": "Human scale.",
    "fit": "Fit a monotone judge→human mapping; report held-out before/after.",
    "split": "Share used to fit --fit.",
}
_AGREEMENT_FLAGS = {
    "n_bootstrap": Flag(name="--bootstrap"),
    "judge_scale": Flag(metavar="LOW HIGH"),
    "human_scale": Flag(metavar="LOW HIGH"),
}


@click.group("calibrate")
def calibrate() -> None:
    """Trust a judge against human labels: agreement, and fits on the labels.

    \b
    Examples:
      localjudge calibrate agreement runs/eval.jsonl --human human_coherence --group doc_id
      localjudge calibrate agreement labels.csv --judge-scale 1 5 --human-scale 1 5 --out cal.json
      localjudge calibrate fit-verdict r.jsonl --metrics consistency_tokens,consistency_likelihood \\
          --human label --group doc_id --save verdict.json
    """


@calibrate.command("agreement")
@_PATH
@click.option("--human", metavar="FIELD", help="Results file: human score field (extra first).")
@click.option("--metric", metavar="NAME", help="Results file: metric to read (if several).")
@click.option("--group", metavar="FIELD", help="Results file: group id field, e.g. doc_id.")
@click.option(
    "--judge-field",
    type=click.Choice(["raw_score", "score"]),
    help="Results file: score on the metric scale (raw_score, default) or normalised 0–1.",
)
@click.option("--judge-col", metavar="COL", help="Table: judge score column [default: judge].")
@click.option("--human-col", metavar="COL", help="Table: human score column [default: human].")
@click.option("--group-col", metavar="COL", help="Table: group id column (optional).")
@settings_flags(CalibrationOptions, "settings", help_text=_AGREEMENT_HELP, flags=_AGREEMENT_FLAGS)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON instead of text.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON here.")
@click.option(
    "--plots",
    "plots_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for PNG plots [default: <out stem>_plots beside --out, else ./calibration_plots].",
)
@click.option("--no-plots", is_flag=True, help="Write no plots.")
def agreement(
    path: Path,
    human: str | None,
    metric: str | None,
    group: str | None,
    judge_field: str | None,
    judge_col: str | None,
    human_col: str | None,
    group_col: str | None,
    settings: CalibrationOptions,
    as_json: bool,
    out: Path | None,
    plots_dir: Path | None,
    no_plots: bool,
) -> None:
    """Compare judge scores with human scores in PATH and say whether the judge can gate releases.

    PATH is a `localjudge eval` results file (detected by its case_id/metric/extra records;
    use --human, --metric, --group, --judge-field) or a CSV/TSV/JSONL/JSON table (use
    --judge-col, --human-col, --group-col). Unscored items are counted, never scored as 0.

    \b
    Examples:
      localjudge calibrate agreement runs/eval.jsonl --human human_coherence --group doc_id
      localjudge calibrate agreement labels.csv --judge-scale 1 5 --human-scale 1 5 --out cal.json
    """
    from localjudge.calibration import PairSource, format_report, load_pairs, write_plots
    from localjudge.calibration import calibrate as run_calibration
    from localjudge.calibration.plots import plot_paths
    from localjudge.io.files import refuse_overwriting

    source = PairSource(
        human=_pick(human, human_col, "--human and --human-col"),
        judge=_pick(judge_field, judge_col, "--judge-field and --judge-col"),
        group=_pick(group, group_col, "--group and --group-col"),
        metric=metric,
    )
    if no_plots:
        plots_dir = None  # from here on, None means no plots
    elif plots_dir is None:
        plots_dir = out.parent / f"{out.stem}_plots" if out else Path("calibration_plots")
    outputs = ([out] if out else []) + ([] if plots_dir is None else plot_paths(plots_dir))
    refuse_overwriting(outputs, [("calibration input", path)])
    pairs = load_pairs(path, **source._asdict())
    if metric is not None and pairs.info.kind != "results":
        raise ConfigError(f"--metric applies to results files; {path} is a plain table")
    if settings.judge_scale is None and pairs.judge_scale is not None:  # --judge-field score: 0..1
        settings = settings.model_copy(update={"judge_scale": pairs.judge_scale})
    report = run_calibration(pairs.judge, pairs.human, pairs.groups, settings=settings, input_info=pairs.info)

    if plots_dir is not None:
        written = write_plots(pairs.judge, pairs.human, plots_dir)
        report = report.model_copy(update={"plots": [str(p) for p in written]})
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    if as_json:
        click.echo(report.model_dump_json(indent=2))
    else:
        click.echo(format_report(report))
        if out is not None:
            click.echo(f"\nJSON report: {out}")


class _Fit(NamedTuple):
    """What `fit-hybrid` and `fit-verdict` share: the metrics, the label, the split, where it is saved."""

    metrics: str
    """The metrics, comma-separated, as --metrics gives them."""
    source: PairSource
    """The label (--human) and the groups (--group)."""
    settings: CalibrationOptions
    """The split share and seed (--split, --seed)."""
    save: Path | None
    """Where the fitted metric is written (--save); None: not saved."""
    name: str
    """The fitted metric's name in results (--name)."""
    as_json: bool
    """Print the report as JSON (--json)."""


def _fit_options(fitted: str, name: str, human_help: str, split_help: str):
    """The options of a fit of metrics of a results file, given to the command as one `_Fit` named `fit`."""

    def decorate(fn):
        @functools.wraps(fn)
        def command(metrics, human, group, settings, save, name, as_json, **rest):
            from localjudge.calibration.inputs import PairSource

            source = PairSource(human=human, judge=None, group=group, metric=None)
            return fn(fit=_Fit(metrics, source, settings, save, name, as_json), **rest)

        options = [
            click.option(
                "--metrics", required=True, metavar="M1,M2,...", help=f"Metrics of the results file {fitted}."
            ),
            click.option("--human", required=True, metavar="FIELD", help=human_help),
            click.option("--group", metavar="FIELD", help="Group id field, e.g. doc_id: whole groups go to one split."),
            _split(split_help),
            click.option("--save", type=_SAVE, help="Write the fitted metric here (.json), for `eval --metric FILE`."),
            click.option("--name", default=name, show_default=True, help="Name of the fitted metric in results."),
            click.option("--json", "as_json", is_flag=True, help="Print the report as JSON instead of text."),
        ]
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


@calibrate.command("fit-hybrid")
@_PATH
@_fit_options(
    "file to combine",
    "hybrid",
    "Human label field to fit.",
    "of the cases the hybrid is chosen and fitted on (cross-validated); the rest reports it",
)
def fit_hybrid(path: Path, fit: _Fit) -> None:
    """Fit one score combining several metrics of the results file PATH to a human label.

    \b
    Examples:
      localjudge calibrate fit-hybrid r.jsonl --metrics consistency,consistency_likelihood \\
          --human human_consistency --group doc_id --save hybrid.json
    """
    fit_hybrid_cmd(path, fit.source, HybridRequest(fit.metrics, fit.save, fit.name), fit.settings, fit.as_json)


@calibrate.command("fit-verdict")
@_PATH
@_fit_options(
    "file it reads",
    "verdict",
    "Label field to fit: 0/1, or graded with --pass-at.",
    "of the cases the verdict is fitted on; its accuracy and ECE are measured on the rest",
)
@click.option(
    "--pass-at",
    type=float,
    metavar="X",
    help="Graded labels: those at or above X are acceptable (binary 0/1 labels need none).",
)
@click.option(
    "--objective",
    type=click.Choice(["balanced_accuracy", "accuracy"]),
    default="balanced_accuracy",
    show_default=True,
    help="What the verdict's threshold maximises.",
)
def fit_verdict(path: Path, fit: _Fit, pass_at: float | None, objective: str) -> None:
    """Fit a pass/fail verdict with a calibrated P(acceptable) from metrics of the results file PATH.

    \b
    Examples:
      localjudge calibrate fit-verdict r.jsonl --metrics consistency_tokens,consistency_likelihood \\
          --human label --group doc_id --save verdict.json
    """
    request = VerdictRequest(fit.metrics, pass_at, objective, fit.save, fit.name)
    fit_verdict_cmd(path, fit.source, request, fit.settings, fit.as_json)


@calibrate.command("panel-weights")
@_PATH
@click.option("--human", required=True, metavar="FIELD", help="Human label field the weights are fitted on.")
@click.option("--group", metavar="FIELD", help="Group id field, e.g. doc_id: whole groups go to one split.")
@click.option("--metric", metavar="NAME", help="Metric of the panel file to fit (default: every one).")
@_split("of the labelled cases the reported fit uses; the rest reports it")
@click.option("--save", type=_SAVE, required=True, help="Write the weights here, for `eval --panel FILE`.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON instead of text.")
def panel_weights(
    path: Path,
    human: str,
    group: str | None,
    metric: str | None,
    settings: CalibrationOptions,
    save: Path,
    as_json: bool,
) -> None:
    """Fit the member weights of the panel results file PATH (eval with several --judge) on a human label.

    \b
    Examples:
      localjudge calibrate panel-weights panel.jsonl --human human_consistency --group doc_id --save weights.json
    """
    import json

    from localjudge.io.files import refuse_overwriting
    from localjudge.panel.fit import fit_panel_weights

    refuse_overwriting([save], [("calibration input", path)])
    fit = fit_panel_weights(path, human, group, metric, split=settings.split, seed=settings.seed)
    for e in fit.metrics:
        if e.equal_because:
            click.echo(f"Note on {e.metric}: {e.equal_because}; the saved weights are equal", err=True)
    save.write_text(fit.weights.model_dump_json(indent=1) + "\n", encoding="utf-8")
    if as_json:
        click.echo(json.dumps({"panel_weights": str(save), "metrics": [e.report() for e in fit.metrics]}, indent=1))
        return
    members = fit.weights.members
    for e in fit.metrics:
        click.echo(f"{e.metric}: Spearman ρ on the {e.held_out} held-out cases")
        print_table(["scorer", "rho"], [(k, "-" if v is None else f"{v:.3f}") for k, v in e.spearman.items()])
        click.echo("saved weights: " + ", ".join(f"{m} {w:.3f}" for m, w in zip(members, e.saved_weights, strict=True)))
    click.echo(f"\npanel weights: {save} (use: localjudge eval ... --judge ... --panel {save})")
