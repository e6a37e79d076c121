"""How a panel weighs its judges, and the pooled reading: pure maths, arrays in, arrays out.

Three weightings, each a vector of non-negative weights summing to 1 over the M members:

- `mean_weights`: every member alike (the mean of the members' expected scores, or of their
  P(output 1 better) for a comparison).
- `agreement_weights`, learned without labels: member m's weight is its Pearson correlation
  with the mean of the *other* members over the run's cases (leave-one-out, so a member does
  not vote for itself), negative correlations set to 0, then normalised. A member that tracks
  the rest of the panel counts more; one that reads noise counts little. With two members both
  correlations are the same number, so the weights stay equal.
- `fitted_weights`, learned from labels by `calibrate`: non-negative least squares of the centred
  human scores on the centred member scores, normalised to sum 1 (the pooled score stays a
  weighted mean on 0–1; only the members' relative weights are learned, not a scale).

A case some members left unscored is pooled from the members that scored it when they are at
least the panel's quorum (`case_weights`: the panel's weights over them, renormalised), else it
gets no pooled score.

A weighting that cannot be learned (every correlation or fitted weight ≤ 0, or fewer than 3
cases) gives equal weights and says so (`Weights.equal_because`), never silently.

Examples:
    >>> import numpy as np
    >>> pool(np.array([[0.2, 0.4], [0.9, np.nan]]), np.array([0.5, 0.5])).tolist()
    [0.30000000000000004, nan]
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

MIN_CASES = 3
"""Cases with every member scored needed to learn a weighting."""


class Weights(NamedTuple):
    """A panel's weights and, for a learned weighting, what it was learned from."""

    weights: np.ndarray  # (M,) non-negative, summing to 1
    agreement: np.ndarray  # (M,) each member's Pearson r with the leave-one-out mean of the others (NaN: undefined)
    equal_because: str | None  # why a learned weighting fell back to equal weights; None when it did not


def case_weights(scored: np.ndarray, weights: np.ndarray, quorum: int | None = None) -> np.ndarray | None:
    """(M,) weights one case is pooled with, or None when fewer than `quorum` members scored it.

    Args:
        scored: (M,) bool, which members scored the case.
        weights: (M,) the panel's weights, summing to 1.
        quorum: members that must have scored it; None: every member.

    Returns:
        `weights` itself when every member scored it; else the weights of the members that did,
        renormalised to sum 1 (0 for the others; equal among them if all of theirs are 0).
    """
    k = int(scored.sum())
    if k == 0 or k < (len(weights) if quorum is None else quorum):
        return None
    if k == len(weights):
        return weights
    w = np.where(scored, weights, 0.0)  # (M,)
    return w / w.sum() if w.sum() > 0 else scored / k


def pool(scores: np.ndarray, weights: np.ndarray | None = None, quorum: int | None = None) -> np.ndarray:
    """(n,) each case's pooled reading: the mean of its members' scores; NaN where fewer than `quorum` have one.

    The one pooling of judges: `panel.pool` pools a metric's records with it, the bias lab its
    panels' judgments. A case is pooled from the members that scored it when they are at least
    the quorum, with the weights of `case_weights`.

    Args:
        scores: (n, M) member scores (or probabilities), NaN where a member left a case unscored.
        weights: (M,) summing to 1: the weighted mean, the pooled scores times their weights summed.
            None: every member alike, their plain mean (the sum divided by their number). The two
            can differ in the last bit from three members on; each caller keeps the one its
            results were made with (the bias lab's panels the plain mean, `panel` the weighted).
        quorum: members that must have scored a case (see `case_weights`); None: every member.

    Examples:
        >>> pool(np.array([[0.2, np.nan, 0.6]]), np.full(3, 1 / 3), quorum=2).round(6).tolist()
        [0.4]
        >>> pool(np.array([[0.2, np.nan, 0.6], [0.1, 0.2, 0.4]])).round(6).tolist()
        [nan, 0.233333]
    """
    n, m = scores.shape
    out = np.full(n, np.nan)
    for i, row in enumerate(scores):
        scored = ~np.isnan(row)  # (M,)
        w = case_weights(scored, np.full(m, 1.0 / m) if weights is None else weights, quorum)
        if w is not None:
            s = row[scored]  # (k,) the pooled members' scores
            out[i] = np.mean(s) if weights is None else s @ w[scored]
    return out


def leave_one_out_agreement(scores: np.ndarray) -> np.ndarray:
    """(M,) Pearson r of each member with the mean of the others, over the cases all members scored."""
    full = scores[np.all(np.isfinite(scores), axis=1)]  # (k, M)
    n, m = full.shape
    out = np.full(m, np.nan)
    if n < MIN_CASES or m < 2:
        return out
    total = full.sum(axis=1)  # (k,)
    for j in range(m):
        rest = (total - full[:, j]) / (m - 1)  # (k,) mean of the other members
        if np.std(full[:, j]) > 0 and np.std(rest) > 0:
            out[j] = float(np.corrcoef(full[:, j], rest)[0, 1])
    return out


def mean_weights(scores: np.ndarray) -> Weights:
    """Equal weights; the agreement is still measured, for the summary."""
    m = scores.shape[1]
    return Weights(np.full(m, 1.0 / m), leave_one_out_agreement(scores), None)


def agreement_weights(scores: np.ndarray) -> Weights:
    """Weights from each member's leave-one-out agreement with the rest (see the module docstring)."""
    m = scores.shape[1]
    r = leave_one_out_agreement(scores)
    w = np.where(np.isfinite(r), np.maximum(r, 0.0), 0.0)
    if w.sum() <= 0:
        why = (
            f"fewer than {MIN_CASES} cases scored by every member"
            if np.all(np.isnan(r))
            else "no member's scores correlate positively with the rest of the panel"
        )
        return Weights(np.full(m, 1.0 / m), r, why)
    return Weights(w / w.sum(), r, None)


def fitted_weights(scores: np.ndarray, human: np.ndarray) -> Weights:
    """Non-negative weights fitted to human scores by least squares on centred scores.

    Args:
        scores: (n, M) member scores, NaN where unscored (those cases are left out).
        human: (n,) human scores.
    """
    from scipy.optimize import nnls

    m = scores.shape[1]
    ok = np.all(np.isfinite(scores), axis=1) & np.isfinite(human)
    x, y = scores[ok], human[ok]  # (k, M), (k,)
    r = leave_one_out_agreement(scores)
    if len(y) < MIN_CASES:
        return Weights(np.full(m, 1.0 / m), r, f"fewer than {MIN_CASES} labelled cases scored by every member")
    w, _ = nnls(x - x.mean(axis=0), y - y.mean())  # (M,) ≥ 0
    if w.sum() <= 0:
        return Weights(np.full(m, 1.0 / m), r, "no member's scores rise with the human scores")
    return Weights(w / w.sum(), r, None)
