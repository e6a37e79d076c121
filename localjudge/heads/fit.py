"""Fitting a head, pure: standardised features in, weights out; ridge for ratings, logistic for labels and pairs.

Ridge runs in its dual form over the training cases' Gram matrix (n x n: a few hundred labels
against thousands of features), one Cholesky solve per regularisation strength; it serves ratings,
and yes/no labels as 0/1 (its output then gets a logistic link, `heads.choose`: thousands of labels
cross-validate in seconds where an iterative logistic fit per fold took minutes). Logistic
regression (L2-penalised, L-BFGS) serves preferences, on the difference of the two outputs'
features with no intercept: P(output 1 better) = sigmoid(w · (x1 - x2)), so swapping the outputs
negates the logit and no position can be preferred.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Standard(NamedTuple):
    """Feature means and standard deviations over the training cases."""

    centre: np.ndarray  # (d,)
    scale: np.ndarray  # (d,) 1 where a feature is constant


def standard(x: np.ndarray, centre: bool = True) -> Standard:
    """The standardisation of (n, d) training features (`centre=False`: scale only, about 0)."""
    c = x.mean(0) if centre else np.zeros(x.shape[1])
    s = np.sqrt(((x - c) ** 2).mean(0))
    return Standard(c, np.where(s > 1e-12, s, 1.0))


class RidgePath:
    """Ridge regressions of y on standardised X for many strengths, from one Gram matrix.

    Dual form: w(alpha) = X' (X X' + alpha I)^-1 (y - mean y), one Cholesky factorisation per
    strength (an n x n Cholesky costs a twentieth of the eigendecomposition that would serve them all).
    """

    def __init__(self, x: np.ndarray, y: np.ndarray):
        self.x, self.mean = x, float(y.mean())  # (n, d) standardised
        self.gram = x @ x.T  # (n, n)
        self.yc = y - self.mean  # (n,)
        self._dual: dict[float, np.ndarray] = {}

    def weights(self, alpha: float) -> np.ndarray:
        """(d,) the weights at strength `alpha`."""
        if alpha not in self._dual:
            from scipy.linalg import cho_factor, cho_solve

            factor = cho_factor(self.gram + alpha * np.eye(len(self.gram)))
            self._dual[alpha] = cho_solve(factor, self.yc)  # (n,)
        return self.x.T @ self._dual[alpha]

    def predict(self, held: np.ndarray, alpha: float) -> np.ndarray:
        """(m,) predictions for (m, d) standardised held-out features."""
        return self.mean + held @ self.weights(alpha)


def logistic(x: np.ndarray, y: np.ndarray, alpha: float, intercept: bool = True) -> tuple[np.ndarray, float]:
    """L2-penalised logistic regression of 0/1 (or soft) labels on (n, d) features: (weights, intercept).

    Minimises sum of log-losses + alpha / 2 * |w|^2 (the intercept unpenalised) with L-BFGS.
    """
    from scipy.optimize import minimize

    d = x.shape[1]

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:d], (theta[d] if intercept else 0.0)
        z = x @ w + b  # (n,)
        # log(1 + e^z) - y z, stable on both sides
        value = float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * alpha * w @ w)
        r = 1.0 / (1.0 + np.exp(-z)) - y  # (n,)
        grad = np.concatenate([x.T @ r + alpha * w, [r.sum()] if intercept else []])
        return value, grad

    theta0 = np.zeros(d + (1 if intercept else 0))
    res = minimize(loss, theta0, jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return res.x[:d], float(res.x[d]) if intercept else 0.0


def line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares intercept and slope of y on one variable x (slope 0 when x is constant)."""
    sx = x.std()
    if sx < 1e-12:
        return float(y.mean()), 0.0
    slope = float(np.cov(x, y, bias=True)[0, 1] / sx**2)
    return float(y.mean() - slope * x.mean()), slope


def grouped_folds(groups: np.ndarray, k: int, seed: int) -> list[np.ndarray]:
    """k folds of case indices, whole groups in one fold, groups dealt in a seeded order.

    Fewer folds when there are fewer groups (2 at least).
    """
    names = np.random.default_rng(seed).permutation(np.unique(groups))
    k = max(2, min(k, len(names)))
    fold_of = {g: i % k for i, g in enumerate(names)}
    which = np.array([fold_of[g] for g in groups])
    return [np.flatnonzero(which == i) for i in range(k)]
