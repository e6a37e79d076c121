"""`localjudge calibrate fit-hybrid` and `fit-verdict`: fits of metrics of a results file, reported and saved."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import click

from localjudge.errors import ConfigError

if TYPE_CHECKING:
    from localjudge.calibration.inputs import PairSource
    from localjudge.calibration.options import CalibrationOptions


class HybridRequest(NamedTuple):
    """What `calibrate fit-hybrid` fits, and where and under which name it saves it."""

    metrics: str
    """The metrics to combine, comma-separated, as --metrics gives them."""
    save: Path | None
    """Where the fitted hybrid metric is written (--save); None: not saved."""
    name: str
    """The hybrid metric's name in results (--name)."""


class VerdictRequest(NamedTuple):
    """What `calibrate fit-verdict` fits, how, and where and under which name it saves it."""

    metrics: str
    """The metrics the verdict reads, comma-separated, as --metrics gives them."""
    pass_at: float | None
    """Graded labels at or above it are acceptable (--pass-at); None: binary 0/1 labels."""
    objective: str
    """What the verdict's threshold maximises (--objective)."""
    save: Path | None
    """Where the fitted verdict is written (--save); None: not saved."""
    name: str
    """The verdict metric's name in results (--name)."""


def _names(metrics: str) -> list[str]:
    return [n.strip() for n in metrics.split(",") if n.strip()]


def fit_hybrid_cmd(
    path: Path, source: PairSource, request: HybridRequest, settings: CalibrationOptions, as_json: bool
) -> None:
    """Fits, reports and saves a hybrid of several metrics of a results file.

    The human label and the groups are `source.human` and `source.group`; the split share and
    the seed are `settings.split` and `settings.seed`.
    """
    from localjudge.calibration.hybrid_fit import fit_hybrid, format_hybrid_report
    from localjudge.io.files import refuse_overwriting
    from localjudge.runs.results_file import read_results

    components, save = _names(request.metrics), request.save
    refuse_overwriting([save] if save else [], [("calibration input", path)])
    if len(components) < 2:
        raise ConfigError("--metrics needs at least two metrics, comma-separated")
    if source.human is None:
        raise ConfigError("fit-hybrid needs --human FIELD, the human label to fit")
    metric, report = fit_hybrid(
        read_results(path), components, source.human, group=source.group, settings=settings, name=request.name
    )
    if save is not None:
        save.parent.mkdir(parents=True, exist_ok=True)
        save.write_text(metric.model_dump_json(indent=1) + "\n", encoding="utf-8")
    click.echo(report.model_dump_json(indent=2) if as_json else format_hybrid_report(report))
    if save is not None and not as_json:
        click.echo(f"\nhybrid metric: {save} (apply with: localjudge eval DATA --metric {save})")


def fit_verdict_cmd(
    path: Path, source: PairSource, request: VerdictRequest, settings: CalibrationOptions, as_json: bool
) -> None:
    """Fits, reports and saves a pass/fail verdict from metrics of a results file.

    The label and the groups are `source.human` and `source.group`; the split share and the
    seed are `settings.split` and `settings.seed`.
    """
    from localjudge.calibration.verdict_fit import fit_verdict, format_verdict_report
    from localjudge.io.files import refuse_overwriting
    from localjudge.runs.results_file import read_results

    components, save, human = _names(request.metrics), request.save, source.human
    refuse_overwriting([save] if save else [], [("calibration input", path)])
    if human is None:
        raise ConfigError("fit-verdict needs --human FIELD, the label to fit")
    metric, fit, rule = fit_verdict(
        read_results(path),
        components,
        human,
        pass_at=request.pass_at,
        group=source.group,
        settings=settings,
        objective=request.objective,
        name=request.name,
    )
    if save is not None:
        save.parent.mkdir(parents=True, exist_ok=True)
        save.write_text(metric.model_dump_json(indent=1) + "\n", encoding="utf-8")
    click.echo(fit.model_dump_json(indent=2) if as_json else format_verdict_report(fit, human, rule, source.group))
    if save is not None and not as_json:
        click.echo(f"\nverdict metric: {save} (apply with: localjudge eval DATA --metric {save})")
