"""Binary verdicts against binary labels: ranking (AUC), decisions (accuracy), reliability (ECE).

Pure maths, arrays in, numbers out. Labels are 1 (acceptable, consistent) and 0; scores are
higher for "more acceptable".

Examples:
    >>> import numpy as np
    >>> y = np.array([0, 0, 1, 1])
    >>> roc_auc(np.array([0.1, 0.4, 0.35, 0.8]), y)
    0.75
    >>> balanced_accuracy(np.array([0.1, 0.4, 0.35, 0.8]) >= 0.3, y)
    0.75
    >>> round(ece(np.array([0.2, 0.2, 0.9, 0.9]), y, bins=10), 3)
    0.15
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


def roc_auc(scores: np.ndarray, labels: np.ndarray) -> float | None:
    """P(a random positive outscores a random negative), ties counting half; None without both classes."""
    s, y = np.asarray(scores, float), np.asarray(labels).astype(bool)
    n1, n0 = int(y.sum()), int((~y).sum())
    if n1 == 0 or n0 == 0:
        return None
    ranks = rankdata(s)  # (n,) average ranks: a tie counts half
    return float((ranks[y].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def within_group_auc(scores: np.ndarray, labels: np.ndarray, groups: np.ndarray) -> float | None:
    """ROC AUC inside each group (a document's summaries), averaged over groups with both classes.

    It asks what a ranking within one source asks: of two summaries of the same document, is the
    consistent one scored higher? Document-level offsets (a hard document) do not count.
    """
    aucs = []
    for g in np.unique(groups):
        sel = groups == g
        a = roc_auc(np.asarray(scores)[sel], np.asarray(labels)[sel])
        if a is not None:
            aucs.append(a)
    return float(np.mean(aucs)) if aucs else None


def balanced_accuracy(predicted: np.ndarray, labels: np.ndarray) -> float | None:
    """Mean of the true-positive and true-negative rates; None without both classes."""
    p, y = np.asarray(predicted).astype(bool), np.asarray(labels).astype(bool)
    if y.all() or not y.any():
        return None
    return float((p[y].mean() + (~p[~y]).mean()) / 2)


def accuracy(predicted: np.ndarray, labels: np.ndarray) -> float:
    """Share of verdicts that match the labels."""
    return float(np.mean(np.asarray(predicted).astype(bool) == np.asarray(labels).astype(bool)))


def best_threshold(scores: np.ndarray, labels: np.ndarray, objective: str = "balanced_accuracy") -> float:
    """The cut t (pass: score >= t) that maximises the objective on these items.

    Candidates are midpoints between consecutive distinct scores (and the ends); among equally good
    cuts the middle one of the best run is taken, so the cut does not hug one item.
    """
    s = np.asarray(scores, float)
    y = np.asarray(labels).astype(bool)
    if not len(s):
        raise ValueError("no scores to choose a threshold from")
    u = np.unique(s)  # (m,) sorted
    cuts = np.concatenate([[u[0] - 1.0], (u[:-1] + u[1:]) / 2, [u[-1] + 1.0]])  # (m + 1,)
    measure = balanced_accuracy if objective == "balanced_accuracy" else accuracy
    values = np.array([measure(s >= t, y) or 0.0 for t in cuts])
    best = np.flatnonzero(values >= values.max() - 1e-12)
    return float(cuts[best[len(best) // 2]])


def ece(probs: np.ndarray, labels: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error: |mean predicted − observed rate| per equal-width bin, weighted by size."""
    p, y = np.asarray(probs, float), np.asarray(labels, float)
    edges = np.linspace(0.0, 1.0, bins + 1)
    idx = np.clip(np.digitize(p, edges[1:-1]), 0, bins - 1)  # (n,) bin of each item
    total = 0.0
    for b in range(bins):
        sel = idx == b
        if sel.any():
            total += sel.sum() * abs(p[sel].mean() - y[sel].mean())
    return float(total / len(p))


def log_loss(probs: np.ndarray, labels: np.ndarray) -> float:
    """Mean negative log-likelihood of the labels (probabilities clipped to [1e-12, 1 - 1e-12])."""
    p = np.clip(np.asarray(probs, float), 1e-12, 1 - 1e-12)
    y = np.asarray(labels, float)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
