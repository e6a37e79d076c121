"""The logistic function, without overflow: log-odds to probabilities (verdicts, fits, rankings).

`sigmoid` keeps its relative precision in both tails (σ(−40) ≈ 4.2e-18); `tanh_sigmoid`, the
form the Bradley–Terry fit of `rank` is built on, computes 0.5·(1 + tanh(x/2)): as exact near the
middle but no closer to 0 than 1e-17 (σ(−40) = 0), and about half its values differ from
`sigmoid`'s in the last bit. Both stay because the outputs made with each (verdict
probabilities, rank scores) are pinned bit for bit; a caller that has no such record takes
`sigmoid`.

Examples:
    >>> import numpy as np
    >>> sigmoid(np.array([0.0, 1000.0, -1000.0])).tolist()
    [0.5, 1.0, 0.0]
    >>> tanh_sigmoid(np.array([0.0, 1000.0, -1000.0])).tolist()
    [0.5, 1.0, 0.0]
"""

from __future__ import annotations

import numpy as np


def sigmoid(z: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(−z)), without overflow for large |z|."""
    z = np.asarray(z, float)
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1 / (1 + np.exp(-z[pos]))
    e = np.exp(z[~pos])
    out[~pos] = e / (1 + e)
    return out


def tanh_sigmoid(x: np.ndarray) -> np.ndarray:
    """σ(x) = 0.5·(1 + tanh(x/2)): no overflow, absolute (not relative) precision in the tails."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))
