"""Heatmap of the judge × generator score matrix, written as a PNG (matplotlib, Agg canvas)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from localjudge.bias.results import BiasReport
from localjudge.errors import DataError


def write_heatmap(report: BiasReport, path: str | Path) -> Path:
    """Writes the mean-score matrix as a heatmap PNG, means in the cells, CI half-width below.

    Rows are judges, columns generators, both labelled with their family. matplotlib is
    imported here (not at module import) and draws on an Agg canvas, so no display is needed
    and no global backend is switched.

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
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    cells = {(c.judge, c.generator): c.mean for c in m.cells}
    means = np.full((len(m.judges), len(m.generators)), np.nan)  # (J, G)
    half = np.full_like(means, np.nan)
    for j, judge in enumerate(m.judges):
        for g, gen in enumerate(m.generators):
            e = cells[(judge, gen)]
            if e.value is not None:
                means[j, g] = e.value
            if e.ci_low is not None and e.ci_high is not None:
                half[j, g] = (e.ci_high - e.ci_low) / 2

    # wide enough that two-line "name\n(family)" tick labels of neighbouring columns do not overlap
    fig = Figure(figsize=(2.4 + 1.9 * len(m.generators), 1.4 + 0.8 * len(m.judges)))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(means), cmap="viridis", aspect="auto")
    fig.colorbar(image, ax=ax, label="mean score")
    ax.set_xticks(range(len(m.generators)), [f"{g}\n({f})" for g, f in zip(m.generators, m.generator_families)])
    ax.set_yticks(range(len(m.judges)), [f"{j}\n({f})" for j, f in zip(m.judges, m.judge_families)])
    ax.set_xlabel("generator (family)")
    ax.set_ylabel("judge (family)")
    finite = means[np.isfinite(means)]
    middle = (finite.min() + finite.max()) / 2 if finite.size else 0.0
    for j in range(means.shape[0]):
        for g in range(means.shape[1]):
            if np.isnan(means[j, g]):
                ax.text(g, j, "n/a", ha="center", va="center", color="grey")
                continue
            color = "black" if means[j, g] > middle else "white"  # viridis: light at the top
            ax.text(g, j - 0.08, f"{means[j, g]:.2f}", ha="center", va="center", fontsize=11, color=color)
            if not np.isnan(half[j, g]):
                ax.text(g, j + 0.22, f"±{half[j, g]:.2f}", ha="center", va="center", fontsize=7, color=color)
    ax.set_title(f"Mean score, {100 * report.settings.ci_level:g}% CI half-width below")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=120)
    return path
