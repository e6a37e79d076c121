"""`localjudge calibrate`: how far can this judge's scores be trusted against human labels?"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, cast

import click

from localjudge.cli.fits import HybridRequest, VerdictRequest, fit_hybrid_cmd, fit_verdict_cmd
from localjudge.errors import ConfigError


def _pick(a: str | None, b: str | None, names: str) -> str | None:
    if a is not None and b is not None and a != b:
        raise ConfigError(f"{names} name the same field; pass only one")
    return a if a is not None else b


@click.command("calibrate")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
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
@click.option("--target", type=float, default=0.8, show_default=True, help="ρ needed for READY.")
@click.option(
    "--bootstrap",
    "n_bootstrap",
    type=click.IntRange(min=0),
    default=1000,
    show_default=True,
    help="Bootstrap resamples per interval (0: none).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of bootstrap, split.")
@click.option(
    "--judge-scale",
    type=(float, float),
    metavar="LOW HIGH",
    help="Judge score scale (0 1 is implied by --judge-field score).",
)
@click.option("--human-scale", type=(float, float), metavar="LOW HIGH", help="Human scale.")
@click.option(
    "--fit",
    type=click.Choice(["isotonic"]),
    help="Fit a monotone judge→human mapping; report held-out before/after.",
)
@click.option("--split", type=float, default=0.5, show_default=True, help="Share used to fit --fit.")
@click.option(
    "--hybrid",
    "hybrid",
    metavar="M1,M2,...",
    help="Results file: fit one score combining these metrics (cross-validated on the --split share, "
    "reported on the rest).",
)
@click.option(
    "--save-hybrid",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the fitted hybrid metric here (.json), for `localjudge eval --metric FILE`.",
)
@click.option("--hybrid-name", default="hybrid", show_default=True, help="Name of the hybrid metric in results.")
@click.option(
    "--verdict",
    metavar="M1[,M2,...]",
    help="Results file: fit a pass/fail verdict with a calibrated P(acceptable) from these metrics (fitted on "
    "the --split share, its accuracy and ECE measured on the rest).",
)
@click.option(
    "--pass-at",
    type=float,
    metavar="X",
    help="--verdict on graded labels: labels at or above X are acceptable (binary 0/1 labels need none).",
)
@click.option(
    "--objective",
    type=click.Choice(["balanced_accuracy", "accuracy"]),
    default="balanced_accuracy",
    show_default=True,
    help="What the verdict's threshold maximises.",
)
@click.option(
    "--save-verdict",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the fitted verdict here (.json), for `localjudge eval --metric FILE`.",
)
@click.option("--verdict-name", default="verdict", show_default=True, help="Name of the verdict metric in results.")
@click.option(
    "--save-panel-weights",
    type=click.Path(dir_okay=False, path_type=Path),
    help="PATH is a panel results file (eval with several --judge): fit each member's weight on --human (reported "
    "on the rest of the --split share) and write them here, for `eval --panel FILE`.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON instead of text.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON here.")
@click.option(
    "--plots",
    "plots_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for PNG plots [default: <out stem>_plots beside --out, else ./calibration_plots].",
)
@click.option("--no-plots", is_flag=True, help="Write no plots.")
def calibrate(
    path: Path,
    human: str | None,
    metric: str | None,
    group: str | None,
    judge_field: str | None,
    judge_col: str | None,
    human_col: str | None,
    group_col: str | None,
    target: float,
    n_bootstrap: int,
    seed: int,
    judge_scale: tuple[float, float] | None,
    human_scale: tuple[float, float] | None,
    fit: str | None,
    split: float,
    hybrid: str | None,
    save_hybrid: Path | None,
    hybrid_name: str,
    verdict: str | None,
    pass_at: float | None,
    objective: str,
    save_verdict: Path | None,
    verdict_name: str,
    save_panel_weights: Path | None,
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
      localjudge calibrate runs/eval.jsonl --human human_coherence --group doc_id
      localjudge calibrate labels.csv --judge-scale 1 5 --human-scale 1 5 --out cal.json
      localjudge calibrate r.jsonl --verdict consistency_tokens,consistency_likelihood --human label \\
          --group doc_id --save-verdict verdict.json
    """
    from localjudge.calibration import PairSource, format_report, load_pairs, write_plots
    from localjudge.calibration import calibrate as run_calibration
    from localjudge.calibration.plots import plot_paths
    from localjudge.calibration.results import CalibrationSettings
    from localjudge.io.files import refuse_overwriting

    if save_hybrid is not None and not hybrid:
        raise ConfigError("--save-hybrid needs --hybrid M1,M2,...")
    if (save_verdict is not None or pass_at is not None) and not verdict:
        raise ConfigError("--save-verdict and --pass-at need --verdict M1,M2,...")
    if hybrid and verdict:
        raise ConfigError("--hybrid and --verdict fit different things; give one of them")
    source = PairSource(
        human=_pick(human, human_col, "--human and --human-col"),
        judge=_pick(judge_field, judge_col, "--judge-field and --judge-col"),
        group=_pick(group, group_col, "--group and --group-col"),
        metric=metric,
    )
    settings = CalibrationSettings(
        target=target, n_bootstrap=n_bootstrap, seed=seed, judge_scale=judge_scale,
        human_scale=human_scale, fit=cast(Literal["isotonic"] | None, fit), split=split,
    )  # fmt: skip
    if save_panel_weights is not None:
        from localjudge.cli.panel_fit import fit_panel_cmd

        fit_panel_cmd(path, source.human, source.group, metric, save_panel_weights, settings, as_json)
        return
    if verdict:
        request = VerdictRequest(verdict, pass_at, objective, save_verdict, verdict_name)
        fit_verdict_cmd(path, source, request, settings, as_json)
        return
    if hybrid:
        fit_hybrid_cmd(path, source, HybridRequest(hybrid, save_hybrid, hybrid_name), settings, as_json)
        return
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
