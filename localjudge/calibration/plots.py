"""PNG plots of judge vs human scores: a scatter with trends, and the two histograms.

matplotlib is imported lazily and used through `Figure` directly (Agg rendering), so no
global pyplot state or display backend is touched.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

N_BINS = 10
"""Quantile bins of judge scores for the binned-means trend."""


def _binned_means(judge: np.ndarray, human: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # quantile bins keep roughly equal counts per bin; duplicate edges collapse on ties
    edges = np.unique(np.quantile(judge, np.linspace(0, 1, N_BINS + 1)))
    if len(edges) < 2:
        return np.array([judge.mean()]), np.array([human.mean()])
    which = np.clip(np.searchsorted(edges, judge, side="right") - 1, 0, len(edges) - 2)
    used = np.unique(which)
    xs = np.array([judge[which == b].mean() for b in used])
    ys = np.array([human[which == b].mean() for b in used])
    return xs, ys


def plot_paths(out_dir: str | Path, prefix: str = "calibration") -> list[Path]:
    """The files `write_plots` writes: the scatter, then the histograms."""
    return [Path(out_dir) / f"{prefix}_{kind}.png" for kind in ("scatter", "histograms")]


def write_plots(
    judge: np.ndarray, human: np.ndarray, out_dir: str | Path, *, prefix: str = "calibration"
) -> list[Path]:
    """Writes `{prefix}_scatter.png` and `{prefix}_histograms.png` into `out_dir`.

    Unscored items (NaN judge score) are left out of both plots.

    Args:
        judge: (n,) judge scores, NaN for unscored items.
        human: (n,) human scores.
        out_dir: Folder to write into; created if missing.
        prefix: File name prefix.

    Returns:
        The paths written.

    Examples:
        >>> write_plots(np.array([1.0, 2, 3]), np.array([1.0, 3, 2]), "plots")  # doctest: +SKIP
        [PosixPath('plots/calibration_scatter.png'), PosixPath('plots/calibration_histograms.png')]
    """
    from matplotlib.figure import Figure  # lazy: matplotlib is slow to import

    judge, human = np.asarray(judge, float), np.asarray(human, float)
    scored = np.isfinite(judge)
    j, h = judge[scored], human[scored]
    scatter, histograms = plot_paths(out_dir, prefix)
    scatter.parent.mkdir(parents=True, exist_ok=True)

    fig = Figure(figsize=(5.5, 5))
    ax = fig.add_subplot()
    ax.scatter(j, h, s=14, alpha=0.5, label=f"items (n = {len(j)})")
    if len(j) >= 2 and np.ptp(j) > 0:
        slope, intercept = np.polyfit(j, h, 1)
        grid = np.linspace(j.min(), j.max(), 50)
        ax.plot(grid, slope * grid + intercept, color="C1", label="least-squares line")
        bx, by = _binned_means(j, h)
        ax.plot(bx, by, "o-", color="C2", label="binned means")
    ax.set_xlabel("judge score")
    ax.set_ylabel("human score")
    ax.set_title("Judge vs human")
    ax.legend(loc="best", fontsize="small")
    fig.savefig(scatter, dpi=110, bbox_inches="tight")

    fig = Figure(figsize=(9, 3.8))
    for k, (values, name) in enumerate(((j, "judge"), (h, "human"))):
        ax = fig.add_subplot(1, 2, k + 1)
        ax.hist(values, bins=min(20, max(5, len(np.unique(values)))), color=f"C{k}")
        ax.set_title(f"{name} scores")
        ax.set_xlabel("score")
        ax.set_ylabel("items")
    fig.savefig(histograms, dpi=110, bbox_inches="tight")
    return [scatter, histograms]
