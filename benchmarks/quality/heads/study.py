"""What every head study shares: a head fit on some cases' cached features and read on others, through the
library's own fit (`localjudge.heads.choose`) and reading (`localjudge.kinds.head.linear`), and intervals.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from localjudge.heads.choose import Features, choose
from localjudge.heads.options import HeadOptions
from localjudge.kinds.head.features import matrix
from localjudge.kinds.head.linear import read
from localjudge.labels import agreement, read_labels


def with_extra(x: np.ndarray, extra: np.ndarray | None) -> np.ndarray:
    """(n, d + e) `x` with the columns of (n, e) `extra` before its last three (`features.EXTRAS`, which the
    anchor reads from the end): other readings of the same outputs tried as features."""
    return x if extra is None else np.hstack([x[:, :-3], extra, x[:, -3:]])


def sets(spec, feats: dict[str, list], rows: Sequence[int], extra: np.ndarray | None = None) -> list[Features]:
    """Each layer set `fit_heads` tries (each layer alone, then all) over the cases `rows`; `extra` (cases, e)
    columns join every set (a rating's features only)."""
    fields = list(feats)
    add = None if extra is None else extra[np.asarray(rows)]
    out = []
    for layers in [(layer,) for layer in spec.layers] + [tuple(spec.layers)]:
        per = [with_extra(matrix([feats[f][i] for i in rows], spec, layers), add) for f in fields]
        out.append(Features(layers, per[0], per[1] if len(per) == 2 else None))
    return out


def fit_read(metric, cases, field, spec, feats, fit_rows, read_rows, options: HeadOptions, scale=None, extra=None):
    """A head fit on `fit_rows` (grouped CV inside them, as `fit_heads` does) and read on `read_rows`; `extra`:
    (cases, e) more columns of each case (`with_extra`).

    Returns:
        (readings of read_rows on the label's terms, the `Chosen` fit, fit seconds).
    """
    fit_cases = [cases[i] for i in fit_rows]
    labels = read_labels(metric, fit_cases, field, scale, "doc_id" if "doc_id" in fit_cases[0].extra else None)
    t0 = time.perf_counter()
    chosen = choose(
        labels.kind,
        labels.scale,
        sets(spec, feats, fit_rows, extra),
        labels.values,
        np.array(labels.groups),
        lambda s: agreement(metric, s, labels).value,
        options.alphas,
        options.folds,
        options.seed,
        options.anchor == "likelihood",
    )
    seconds = time.perf_counter() - t0
    layers = tuple(chosen.reading.layers)
    fields = list(feats)
    add = None if extra is None else extra[np.asarray(read_rows)]
    first = with_extra(matrix([feats[fields[0]][i] for i in read_rows], spec, layers), add)
    second = matrix([feats[fields[1]][i] for i in read_rows], spec, layers) if len(fields) == 2 else None
    return read(chosen.reading, chosen.weights, first, second), chosen, seconds


def bootstrap_mean(values: Sequence[float], n: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Mean and 95% percentile interval of per-unit values (articles, questions), units resampled."""
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], dtype=float)
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, len(v), size=(n, len(v)))].mean(1)
    return float(v.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def per_group_rho(scores: np.ndarray, human: np.ndarray, groups: np.ndarray) -> list[float]:
    """Spearman ρ within each group of 3 or more with both lists varying (G-Eval's summary level)."""
    from scipy.stats import spearmanr

    out = []
    for g in dict.fromkeys(groups.tolist()):
        m = groups == g
        if m.sum() >= 3 and np.ptp(scores[m]) > 0 and np.ptp(human[m]) > 0:
            out.append(float(spearmanr(scores[m], human[m])[0]))
    return out


def ci(x: tuple[float, float, float]) -> str:
    return f"{x[0]:.3f} [{x[1]:.3f}, {x[2]:.3f}]"
