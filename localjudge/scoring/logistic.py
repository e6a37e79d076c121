"""The logistic function, without overflow: log-odds to probabilities (verdicts and their fits).

Examples:
    >>> import numpy as np
    >>> sigmoid(np.array([0.0, 1000.0, -1000.0])).tolist()
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
