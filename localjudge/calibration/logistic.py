"""Logistic regression on standardised scores: from scorers' values to a probability of "acceptable".

Pure maths. Each component is standardised on the fit data (z = (x − mean) / std), then the
weights and intercept maximise the L2-penalised log-likelihood by Newton's method (the penalty is
on the weights, not the intercept, so a constant model reproduces the base rate). Deterministic:
the same data give the same model, to the bit.

Examples:
    >>> import numpy as np
    >>> x = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> m = fit_logistic(x, np.array([0, 0, 1, 1]))
    >>> bool(m.prob(np.array([[3.0]]))[0] > 0.5 > m.prob(np.array([[0.0]]))[0])
    True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

L2 = 1.0
"""Penalty on the standardised weights: a weak prior that keeps separable data finite."""


@dataclass(frozen=True)
class Logistic:
    """P(acceptable) = sigmoid(intercept + Σ weight_k · (x_k − mean_k) / std_k)."""

    mean: np.ndarray  # (K,)
    std: np.ndarray  # (K,)
    weights: np.ndarray  # (K,)
    intercept: float

    def logit(self, x: np.ndarray) -> np.ndarray:
        """(n,) log-odds of (n, K) component scores."""
        return self.intercept + ((np.asarray(x, float) - self.mean) / self.std) @ self.weights

    def prob(self, x: np.ndarray) -> np.ndarray:
        """(n,) probabilities of (n, K) component scores."""
        return sigmoid(self.logit(x))


def sigmoid(z: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(−z)), without overflow for large |z|."""
    z = np.asarray(z, float)
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1 / (1 + np.exp(-z[pos]))
    e = np.exp(z[~pos])
    out[~pos] = e / (1 + e)
    return out


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2, iterations: int = 100) -> Logistic:
    """Fits (n, K) scores to (n,) labels in {0, 1}."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    mean, std = x.mean(axis=0), x.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    z = np.column_stack([np.ones(len(y)), (x - mean) / std])  # (n, K + 1), the intercept first
    penalty = np.full(z.shape[1], l2)
    penalty[0] = 0.0
    beta = np.zeros(z.shape[1])
    rate = np.clip(y.mean(), 1e-6, 1 - 1e-6)
    beta[0] = np.log(rate / (1 - rate))
    for _ in range(iterations):
        p = sigmoid(z @ beta)  # (n,)
        grad = z.T @ (p - y) + penalty * beta  # (K + 1,)
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty) + 1e-9 * np.eye(len(beta))
        step = np.linalg.solve(hess, grad)
        beta = beta - step
        if np.abs(step).max() < 1e-10:
            break
    return Logistic(mean, std, beta[1:], float(beta[0]))
