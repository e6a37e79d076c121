"""`localjudge calibrate panel-weights PANEL.jsonl --human FIELD --save FILE`: panel weights fitted on labels.

For each metric of a panel results file, the members' weights are fitted on the --split share
of the labelled cases (whole groups with --group) and the held-out rest reports Spearman ρ of
every member, of the mean panel, of the agreement-weighted panel and of the fitted panel; the
saved weights are then fitted on every labelled case.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import click

from localjudge.cli.output import print_table

if TYPE_CHECKING:
    import numpy as np


class _Fit(NamedTuple):
    """What the fit of one metric's panel weights reports."""

    metric: str
    held_out: int
    spearman: dict[str, float | None]
    saved_weights: list[float]


def _rho(x: np.ndarray, y: np.ndarray, rest: np.ndarray) -> float | None:
    """Spearman ρ of x and y over the held-out cases `rest`; None with fewer than 3 or when undefined."""
    from localjudge.labels import spearman_agreement

    return spearman_agreement(x[rest], y[rest], None)


def fit_panel_cmd(
    path: Path, human: str | None, group: str | None, metric: str | None, save: Path, settings, as_json: bool
) -> None:
    """Fits, reports and saves the weights of a panel results file's members (see the module docstring)."""
    import numpy as np

    from localjudge.errors import ConfigError, DataError
    from localjudge.io.cases import TestCase
    from localjudge.io.files import refuse_overwriting
    from localjudge.labels import group_names, grouped_split
    from localjudge.panel.pool import score_matrix_of
    from localjudge.panel.records import PANEL_RECORDS, PanelWeights
    from localjudge.panel.weights import agreement_weights, fitted_weights, mean_weights
    from localjudge.version import __version__

    if human is None:
        raise ConfigError("panel-weights fits on labels: pass --human FIELD")
    refuse_overwriting([save], [("calibration input", path)])
    records = PANEL_RECORDS.read(path)
    if not records:
        raise DataError(f"{path} holds no panel records; write it with `localjudge eval --judge A --judge B --out`")
    metrics = [metric] if metric else list(dict.fromkeys(r.metric for r in records))
    members = [m.judge for m in records[0].members]
    weights: dict[str, list[float]] = {}
    counts: dict[str, int] = {}
    report: list[_Fit] = []
    for name in metrics:
        rs = [r for r in records if r.metric == name]
        if not rs:
            raise ConfigError(f"{path} has no metric {name!r}")
        if any(human not in r.extra for r in rs):
            raise DataError(f"{path}: a record of {name} has no human score field {human!r}")
        scores = score_matrix_of(rs)  # (n, M)
        y = np.array([float(r.extra[human]) for r in rs])  # (n,)
        # whole groups (each case its own without --group: records carry no input) on one side
        keys = group_names([TestCase(id=r.case_id, extra=r.extra) for r in rs], group)
        fit = np.zeros(len(rs), dtype=bool)
        fit[grouped_split(keys, settings.split, settings.seed, both_sides=True).first] = True
        w_fit = fitted_weights(scores[fit], y[fit]).weights
        rest = ~fit & np.all(np.isfinite(scores), axis=1)
        row = {f"member {m}": _rho(scores[:, j], y, rest) for j, m in enumerate(members)}
        row |= {
            "mean panel": _rho(scores @ mean_weights(scores).weights, y, rest),
            "agreement panel": _rho(scores @ agreement_weights(scores).weights, y, rest),
            "fitted panel": _rho(scores @ w_fit, y, rest),
        }
        everything = fitted_weights(scores, y)
        if everything.equal_because:
            click.echo(f"Note on {name}: {everything.equal_because}; the saved weights are equal", err=True)
        weights[name] = [float(w) for w in everything.weights]
        counts[name] = int(np.all(np.isfinite(scores), axis=1).sum())
        report.append(_Fit(name, int(rest.sum()), row, weights[name]))
    saved = PanelWeights(
        members=members, weights=weights, human=human, n_items=counts, source=str(path), localjudge_version=__version__
    )
    save.write_text(saved.model_dump_json(indent=1) + "\n", encoding="utf-8")
    if as_json:
        click.echo(json.dumps({"panel_weights": str(save), "metrics": [e._asdict() for e in report]}, indent=1))
        return
    for e in report:
        click.echo(f"{e.metric}: Spearman ρ on the {e.held_out} held-out cases")
        print_table(["scorer", "rho"], [(k, "-" if v is None else f"{v:.3f}") for k, v in e.spearman.items()])
        click.echo("saved weights: " + ", ".join(f"{m} {w:.3f}" for m, w in zip(members, e.saved_weights, strict=True)))
    click.echo(f"\npanel weights: {save} (use: localjudge eval ... --judge ... --panel {save})")
