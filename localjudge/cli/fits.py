"""`localjudge calibrate --hybrid` and `--verdict`: fits of several metrics of a results file, reported and saved."""

from __future__ import annotations

from pathlib import Path

import click

from localjudge.errors import ConfigError


def fit_hybrid_cmd(
    path: Path,
    names: str,
    human: str | None,
    group: str | None,
    split: float,
    seed: int,
    save: Path | None,
    name: str,
    as_json: bool,
) -> None:
    """Fits, reports and saves a hybrid of several metrics of a results file."""
    from localjudge.calibration.hybrid_fit import fit_hybrid, format_hybrid_report
    from localjudge.io.files import refuse_overwriting
    from localjudge.runs.results_file import read_results

    components = [n.strip() for n in names.split(",") if n.strip()]
    refuse_overwriting([save] if save else [], [("calibration input", path)])
    if len(components) < 2:
        raise ConfigError("--hybrid needs at least two metrics, comma-separated")
    if human is None:
        raise ConfigError("--hybrid needs --human FIELD, the human label to fit")
    metric, report = fit_hybrid(read_results(path), components, human, group=group, share=split, seed=seed, name=name)
    if save is not None:
        save.parent.mkdir(parents=True, exist_ok=True)
        save.write_text(metric.model_dump_json(indent=1) + "\n", encoding="utf-8")
    click.echo(report.model_dump_json(indent=2) if as_json else format_hybrid_report(report))
    if save is not None and not as_json:
        click.echo(f"\nhybrid metric: {save} (apply with: localjudge eval DATA --metric {save})")


def fit_verdict_cmd(
    path: Path,
    names: str,
    human: str | None,
    pass_at: float | None,
    group: str | None,
    split: float,
    seed: int,
    objective: str,
    save: Path | None,
    name: str,
    as_json: bool,
) -> None:
    """Fits, reports and saves a pass/fail verdict from metrics of a results file."""
    from localjudge.calibration.verdict_fit import fit_verdict, format_verdict_report
    from localjudge.io.files import refuse_overwriting
    from localjudge.runs.results_file import read_results

    components = [n.strip() for n in names.split(",") if n.strip()]
    refuse_overwriting([save] if save else [], [("calibration input", path)])
    if human is None:
        raise ConfigError("--verdict needs --human FIELD, the label to fit")
    metric, fit, rule = fit_verdict(
        read_results(path),
        components,
        human,
        pass_at=pass_at,
        group=group,
        share=split,
        seed=seed,
        objective=objective,
        name=name,
    )
    if save is not None:
        save.parent.mkdir(parents=True, exist_ok=True)
        save.write_text(metric.model_dump_json(indent=1) + "\n", encoding="utf-8")
    click.echo(fit.model_dump_json(indent=2) if as_json else format_verdict_report(fit, human, rule, group))
    if save is not None and not as_json:
        click.echo(f"\nverdict metric: {save} (apply with: localjudge eval DATA --metric {save})")
