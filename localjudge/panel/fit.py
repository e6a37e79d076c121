"""`fit_panel_weights`: a panel's member weights fitted on human labels, and how well they read held-out cases.

For each metric of a panel results file, the members' weights are fitted on the `split` share of
the labelled cases (whole groups with `group`) and the held-out rest reports Spearman ρ of every
member, of the mean panel, of the agreement-weighted panel and of the fitted panel; the weights
saved (`PanelFit.weights`) are then fitted on every labelled case.

Examples:
    >>> fit = fit_panel_weights(Path("panel.jsonl"), "human_consistency", group="doc_id")  # doctest: +SKIP
    >>> fit.weights.weights["consistency"]  # doctest: +SKIP
    [0.61, 0.39]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from localjudge.errors import ConfigError, DataError
from localjudge.io.cases import TestCase
from localjudge.labels import group_names, grouped_split, spearman_agreement
from localjudge.panel.pool import member_scores_of
from localjudge.panel.records import PANEL_RECORDS, PanelRecord, PanelWeights
from localjudge.panel.weights import agreement_weights, fitted_weights, mean_weights
from localjudge.version import __version__


class MetricFit(NamedTuple):
    """What the fit of one metric's panel weights reports."""

    metric: str
    """The metric's name."""
    held_out: int
    """Held-out cases scored by every member, which the Spearman ρ are read on."""
    spearman: dict[str, float | None]
    """Spearman ρ with the labels on the held-out cases: "member NAME" for each member, then "mean panel",
    "agreement panel" and "fitted panel"; None with fewer than 3 cases or when undefined."""
    saved_weights: list[float]
    """The weights fitted on every labelled case, one per member: those saved."""
    equal_because: str | None
    """Why the saved weights fell back to equal ones; None when they did not."""
    n_items: int
    """Cases every member scored, which the saved weights were fitted on."""

    def report(self) -> dict[str, Any]:
        """The fit as the --json report prints it (the fallback's reason is a note of its own)."""
        return {
            "metric": self.metric,
            "held_out": self.held_out,
            "spearman": self.spearman,
            "saved_weights": self.saved_weights,
        }


class PanelFit(NamedTuple):
    """The weights to save and, metric by metric, what their fit reports."""

    weights: PanelWeights
    """The weights fitted on every labelled case, for `evaluate_panel` (method fitted)."""
    metrics: list[MetricFit]
    """One per metric fitted, in the file's order."""


def fit_panel_weights(
    path: Path, human: str, group: str | None = None, metric: str | None = None, split: float = 0.5, seed: int = 0
) -> PanelFit:
    """Fits the member weights of the panel results file `path` on a human label (see the module docstring).

    Args:
        path: A panel results file (`evaluate_panel`'s `out`, `localjudge eval` with several --judge).
        human: The field of each record's `extra` holding the human label.
        group: The field grouping cases (whole groups go to one side of the split); None: each case its own.
        metric: The metric to fit; None: every metric of the file.
        split: The share of the labelled cases the reported fit uses; the rest reports it.
        seed: The seed of the split.

    Raises:
        DataError: the file holds no panel records, or a record lacks the label.
        ConfigError: the file has no metric `metric`.
    """
    records = PANEL_RECORDS.read(path)
    if not records:
        raise DataError(f"{path} holds no panel records; write it with `localjudge eval --judge A --judge B --out`")
    metrics = [metric] if metric else list(dict.fromkeys(r.metric for r in records))
    members = [m.judge for m in records[0].members]
    fits = []
    for name in metrics:
        rs = [r for r in records if r.metric == name]
        if not rs:
            raise ConfigError(f"{path} has no metric {name!r}")
        if any(human not in r.extra for r in rs):
            raise DataError(f"{path}: a record of {name} has no human score field {human!r}")
        fits.append(_fit_metric(name, rs, members, human, group, split, seed))
    weights = PanelWeights(
        members=members,
        weights={f.metric: f.saved_weights for f in fits},
        human=human,
        n_items={f.metric: f.n_items for f in fits},
        source=str(path),
        localjudge_version=__version__,
    )
    return PanelFit(weights, fits)


def _fit_metric(
    name: str, rs: list[PanelRecord], members: list[str], human: str, group: str | None, split: float, seed: int
) -> MetricFit:
    """The fit of one metric's records `rs`: held-out ρ of a fit on the `split` share, weights fitted on all."""
    scores = member_scores_of(rs)  # (n, M)
    y = np.array([float(r.extra[human]) for r in rs])  # (n,)
    # whole groups (each case its own without a group: records carry no input) on one side
    keys = group_names([TestCase(id=r.case_id, extra=r.extra) for r in rs], group)
    fit = np.zeros(len(rs), dtype=bool)
    fit[grouped_split(keys, split, seed, both_sides=True).first] = True
    w_fit = fitted_weights(scores[fit], y[fit]).weights
    rest = ~fit & np.all(np.isfinite(scores), axis=1)
    row = {f"member {m}": _rho(scores[:, j], y, rest) for j, m in enumerate(members)}
    row |= {
        "mean panel": _rho(scores @ mean_weights(scores).weights, y, rest),
        "agreement panel": _rho(scores @ agreement_weights(scores).weights, y, rest),
        "fitted panel": _rho(scores @ w_fit, y, rest),
    }
    everything = fitted_weights(scores, y)
    saved = [float(w) for w in everything.weights]
    scored = int(np.all(np.isfinite(scores), axis=1).sum())
    return MetricFit(name, int(rest.sum()), row, saved, everything.equal_because, scored)


def _rho(x: np.ndarray, y: np.ndarray, rest: np.ndarray) -> float | None:
    """Spearman ρ of x and y over the held-out cases `rest`; None with fewer than 3 or when undefined."""
    return spearman_agreement(x[rest], y[rest], None)
