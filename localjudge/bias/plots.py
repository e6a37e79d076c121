"""Figures of the bias lab as PNGs (matplotlib, Agg canvas): score and win-rate heatmaps, the position panel.

matplotlib is imported inside each function (not at module import) and draws on an Agg canvas,
so no display is needed and no global backend is switched.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from localjudge.bias.results import BiasReport, ScoreMatrix, WinRateMatrix
from localjudge.errors import DataError
from localjudge.stats import Estimate


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: str | Path) -> Path:
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=120)
    return path


def _grid(
    cells: dict[tuple[str, str], Estimate], rows: Sequence[str], cols: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """(R, C) values and CI half-widths of the estimates, NaN where undefined."""
    values = np.full((len(rows), len(cols)), np.nan)
    half = np.full_like(values, np.nan)
    for i, r in enumerate(rows):
        for k, c in enumerate(cols):
            e = cells[(r, c)]
            if e.value is not None:
                values[i, k] = e.value
            if e.ci_low is not None and e.ci_high is not None:
                half[i, k] = (e.ci_high - e.ci_low) / 2
    return values, half


def _heatmap(
    m: ScoreMatrix | WinRateMatrix,
    cells: dict[tuple[str, str], Estimate],
    *,
    label: str,
    title: str,
    path: str | Path,
    centre: float | None = None,
) -> Path:
    """A judge × generator heatmap, both labelled with their family: the value in each cell, its CI
    half-width below; `centre` gives a diverging scale."""
    values, half = _grid(cells, m.judges, m.generators)
    row_labels = [f"{j}\n({f})" for j, f in zip(m.judges, m.judge_families)]
    col_labels = [f"{g}\n({f})" for g, f in zip(m.generators, m.generator_families)]
    # wide enough that two-line "name\n(family)" tick labels of neighbouring columns do not overlap
    fig = _figure(2.4 + 1.9 * values.shape[1], 1.4 + 0.8 * values.shape[0])
    ax = fig.add_subplot()
    if centre is None:
        image = ax.imshow(np.ma.masked_invalid(values), cmap="viridis", aspect="auto")
    else:
        finite = np.abs(values[np.isfinite(values)] - centre)
        span = max(float(finite.max()) if finite.size else 0.0, 1e-6)
        image = ax.imshow(
            np.ma.masked_invalid(values), cmap="RdBu_r", vmin=centre - span, vmax=centre + span, aspect="auto"
        )
    fig.colorbar(image, ax=ax, label=label)
    ax.set_xticks(range(len(col_labels)), list(col_labels))
    ax.set_yticks(range(len(row_labels)), list(row_labels))
    ax.set_xlabel("generator (family)")
    ax.set_ylabel("judge (family)")
    finite = values[np.isfinite(values)]
    middle = (finite.min() + finite.max()) / 2 if finite.size else 0.0
    for i in range(values.shape[0]):
        for k in range(values.shape[1]):
            if np.isnan(values[i, k]):
                ax.text(k, i, "n/a", ha="center", va="center", color="grey")
                continue
            if centre is None:
                color = "black" if values[i, k] > middle else "white"  # viridis: light at the top
            else:
                color = "white" if abs(values[i, k] - centre) > 0.6 * span else "black"
            ax.text(k, i - 0.08, f"{values[i, k]:.2f}", ha="center", va="center", fontsize=11, color=color)
            if not np.isnan(half[i, k]):
                ax.text(k, i + 0.22, f"±{half[i, k]:.2f}", ha="center", va="center", fontsize=7, color=color)
    ax.set_title(title)
    return _save(fig, path)


def write_heatmap(report: BiasReport, path: str | Path) -> Path:
    """Writes the mean-score matrix as a heatmap PNG, means in the cells, CI half-width below.

    Rows are judges, columns generators, both labelled with their family.

    Args:
        report: A pointwise report (it has a `matrix`).
        path: Output file; parent folders are created.

    Returns:
        The path written.

    Raises:
        DataError: The report has no score matrix (a pairwise report).

    Examples:
        >>> write_heatmap(analyze_pointwise(records), "out/bias_heatmap.png")  # doctest: +SKIP
    """
    m = report.matrix
    if m is None:
        raise DataError(
            f"a {report.kind} report has no judge × generator score matrix; "
            "draw the heatmap from a pointwise report (analyze_pointwise)"
        )
    return _heatmap(
        m,
        {(c.judge, c.generator): c.mean for c in m.cells},
        label="mean score",
        title=f"Mean score, {100 * report.settings.ci_level:g}% CI half-width below",
        path=path,
    )


def write_win_rates(report: BiasReport, path: str | Path) -> Path:
    """Writes the judge × generator pairwise win rates as a heatmap PNG (0.5 white), CI half-width below.

    Raises:
        DataError: The report has no win rates (no pairwise records).

    Examples:
        >>> write_win_rates(analyze_models([], pairwise_records), "out/win_rates.png")  # doctest: +SKIP
    """
    m = report.win_rates
    if m is None:
        raise DataError("the model-level report has no win rates; give it pairwise records")
    return _heatmap(
        m,
        {(c.judge, c.generator): c.rate for c in m.cells},
        label="P(judge prefers the generator)",
        title=f"Pairwise win rate, both orders averaged; {100 * report.settings.ci_level:g}% CI half-width below",
        path=path,
        centre=0.5,
    )


def write_position_panel(pairwise: BiasReport, models: BiasReport | None, path: str | Path) -> Path:
    """Writes one panel per judge: first-position preference, order consistency and P(own | shown first/second).

    Each bar is a probability with its interval; the dashed line is 0.5. A judge whose own-response
    bars differ by order (high shown first, low shown second) picks by position, not by authorship.

    Args:
        pairwise: A pairwise report (it has `position`).
        models: The model-level report, for the self targets (None: position bars only).
        path: Output file; parent folders are created.

    Raises:
        DataError: The report has no position results.
    """
    if not pairwise.position:
        raise DataError(f"a {pairwise.kind} report has no position results; draw the panel from a pairwise report")
    own = {x.judge: x for x in (models.targets if models else []) if x.relation == "self"}
    n = len(pairwise.position)
    fig = _figure(3.2 * n, 3.4)
    for k, pos in enumerate(pairwise.position):
        ax = fig.add_subplot(1, n, k + 1)
        consistency = pos.flip_rate.model_copy(
            update={
                "value": None if pos.flip_rate.value is None else 1 - pos.flip_rate.value,
                "ci_low": None if pos.flip_rate.ci_high is None else 1 - pos.flip_rate.ci_high,
                "ci_high": None if pos.flip_rate.ci_low is None else 1 - pos.flip_rate.ci_low,
            }
        )
        bars = [("first\nposition", pos.first_position), ("order\nconsistent", consistency)]
        if pos.judge in own:
            bars += [("own |\nfirst", own[pos.judge].shown_first), ("own |\nsecond", own[pos.judge].shown_second)]
        for i, (_, e) in enumerate(bars):
            if e.value is None:
                continue
            err = None
            if e.ci_low is not None and e.ci_high is not None:
                err = [[e.value - e.ci_low], [e.ci_high - e.value]]
            ax.bar(i, e.value, color=("tab:orange" if i < 2 else "tab:blue"), yerr=err, capsize=3)
            ax.text(i, min(e.value, 0.9) + 0.04, f"{e.value:.2f}", ha="center", fontsize=7)
        ax.axhline(0.5, color="grey", linestyle="--", linewidth=0.8)
        ax.set_xticks(range(len(bars)), [b[0] for b in bars], fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_title(pos.judge, fontsize=9)
        if k == 0:
            ax.set_ylabel("probability")
    return _save(fig, path)
