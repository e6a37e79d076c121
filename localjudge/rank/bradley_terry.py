"""A Bradley–Terry fit on comparison probabilities (soft wins), by Newton's method with a tiny prior.

Item i has a strength θ_i; the model says P(i beats j) = σ(θ_i − θ_j). Each observation is a
judge's P(first better) y ∈ [0, 1] for a pair, with a weight (the presentation orders it averages):
the log-likelihood Σ w·[y·log σ(d) + (1 − y)·log σ(−d)], d = θ_first − θ_second, is the
cross-entropy of soft wins, so a 0.6 counts as 0.6 of a win, not as a win. A Gaussian prior
θ ~ N(0, 1/λ) with a tiny λ keeps the maximum finite when an item wins every comparison and
makes the objective strictly concave, so Newton with step halving always converges; it also
centres the strengths (Σθ = 0 at the optimum). The negative Hessian at the optimum is the Fisher
information (plus the prior), whose inverse, scaled by the readings' dispersion, `intervals`
samples from.

The information counts each reading as one Bernoulli trial; a judge's soft reading is no coin
flip: a judge that reads every pair as the model says has nothing left to doubt, one that errs
has more. The Pearson dispersion φ̂ = Σ w·(y − p)² / p(1 − p) over the residual degrees of freedom
(readings − (n − 1)) measures how far the readings stray from the fitted model, and the
covariance is φ̂·I⁻¹ (quasi-likelihood). Too few readings to estimate it (fewer residual degrees of
freedom than items: a budget of 2 is one cycle) leave φ = 1, the Bernoulli count.

Pure maths: arrays in, arrays out.

Examples:
    >>> import numpy as np
    >>> fit = fit_strengths(3, np.array([[0, 1], [1, 2], [0, 2]]), np.array([0.8, 0.7, 0.9]))
    >>> [int(r) for r in ranks(fit.theta)]
    [1, 2, 3]
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from localjudge.scoring.logistic import tanh_sigmoid

PRIOR = 0.01
"""Precision λ of the Gaussian prior on each strength: N(0, 100), a standard deviation of 10 logits."""

MIN_DISPERSION = 1e-6
"""The least dispersion used: readings that fit the model exactly still leave a finite covariance."""


class Strengths(NamedTuple):
    """A fitted Bradley–Terry model of one group."""

    theta: np.ndarray  # (n,) log-strengths, centred (they sum to 0)
    information: np.ndarray  # (n, n) negative Hessian of the log-posterior at theta (Fisher information + λI)
    dispersion: float = 1.0  # φ̂: the covariance of theta is φ̂·information⁻¹ (1: too few readings to tell)


def _objective(theta: np.ndarray, pairs: np.ndarray, y: np.ndarray, w: np.ndarray, prior: float) -> float:
    """Log-posterior up to a constant: weighted soft-win log-likelihood minus the prior's penalty."""
    d = theta[pairs[:, 0]] - theta[pairs[:, 1]]  # (m,)
    # log σ(d) = −log(1 + e^−d), computed stably by logaddexp
    loglik = -(w * (y * np.logaddexp(0.0, -d) + (1.0 - y) * np.logaddexp(0.0, d))).sum()
    return float(loglik - 0.5 * prior * theta @ theta)


def fit_strengths(
    n: int,
    pairs: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray | None = None,
    *,
    prior: float = PRIOR,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> Strengths:
    """The maximum a posteriori strengths of n items from soft comparisons.

    Args:
        n: number of items.
        pairs: (m, 2) int, the items compared: column 0 is the "first" item of each observation.
        y: (m,) P(first better) of each observation, in [0, 1].
        weights: (m,) weight of each observation (e.g. 2 for the mean of both presentation
            orders); default 1.
        prior: precision of the N(0, 1/prior) prior on each strength; must be > 0.
        max_iter: Newton steps at most (a handful suffice: the objective is strictly concave).
        tol: stop when the largest change of a strength is below this.

    Returns:
        `Strengths`: the centred log-strengths and the information matrix at them.
    """
    assert prior > 0, "the prior keeps the fit finite and strictly concave"
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    y = np.clip(np.asarray(y, dtype=np.float64), 0.0, 1.0)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
    assert pairs.shape[0] == y.shape[0] == w.shape[0], "one y and one weight per pair"
    a = np.zeros((len(y), n))  # (m, n) design: +1 for the first item, −1 for the second
    rows = np.arange(len(y))
    a[rows, pairs[:, 0]] += 1.0
    a[rows, pairs[:, 1]] -= 1.0
    theta = np.zeros(n)
    current = _objective(theta, pairs, y, w, prior)
    for _ in range(max_iter):
        p = tanh_sigmoid(a @ theta)  # (m,) the model's P(first better)
        grad = a.T @ (w * (y - p)) - prior * theta  # (n,)
        info = (a.T * (w * p * (1.0 - p))) @ a + prior * np.eye(n)  # (n, n), positive definite
        step = np.linalg.solve(info, grad)
        scale = 1.0
        while True:  # step halving: the objective never decreases
            candidate = theta + scale * step
            value = _objective(candidate, pairs, y, w, prior)
            if value >= current - 1e-12 or scale < 1e-8:
                break
            scale /= 2
        moved = float(np.max(np.abs(candidate - theta))) if n else 0.0
        theta, current = candidate, value
        if moved < tol:
            break
    p = tanh_sigmoid(a @ theta)
    info = (a.T * (w * p * (1.0 - p))) @ a + prior * np.eye(n)
    return Strengths(theta, info, dispersion(y, p, w, n))


def dispersion(y: np.ndarray, p: np.ndarray, w: np.ndarray, n: int) -> float:
    """The Pearson dispersion of soft readings `y` against the fitted `p` (see the module's docstring).

    Args:
        y: (m,) readings; p: (m,) the fit's probabilities for them; w: (m,) their weights.
        n: items in the group (n − 1 free strengths).

    Returns:
        φ̂ ≥ `MIN_DISPERSION`, or 1 when the residual degrees of freedom m − (n − 1) are fewer than n.

    Examples:
        >>> import numpy as np
        >>> dispersion(np.array([0.7, 0.3]), np.array([0.5, 0.5]), np.ones(2), 2)  # 1 residual df < 2 items
        1.0
    """
    df = len(y) - (n - 1)
    if df < n:
        return 1.0
    var = np.maximum(p * (1.0 - p), 1e-12)  # (m,)
    return max(float(np.sum(w * (y - p) ** 2 / var) / df), MIN_DISPERSION)


def win_scores(theta: np.ndarray) -> np.ndarray:
    """Each item's mean P(beats another item of its group) under the model: a score on 0–1.

    Args:
        theta: (..., n) log-strengths (a leading axis: several draws at once).

    Returns:
        (..., n) mean over the n − 1 others of σ(θ_i − θ_j); 0.5 for a group of one.
    """
    n = theta.shape[-1]
    if n < 2:
        return np.full(theta.shape, 0.5)
    p = tanh_sigmoid(theta[..., :, None] - theta[..., None, :])  # (..., n, n), P(row beats column)
    return (p.sum(axis=-1) - 0.5) / (n - 1)  # the diagonal's σ(0) = 0.5 taken out


def ranks(theta: np.ndarray) -> np.ndarray:
    """Rank of each item, 1 for the strongest; equal strengths rank in input order.

    Args:
        theta: (..., n) log-strengths.

    Returns:
        (..., n) int ranks 1..n.
    """
    order = np.argsort(-theta, axis=-1, kind="stable")  # (..., n) items, strongest first
    out = np.empty_like(order)
    np.put_along_axis(out, order, np.arange(1, theta.shape[-1] + 1) * np.ones_like(order), axis=-1)
    return out
