"""The head's arithmetic, pure: feature vectors in, readings out (the fit uses the same functions)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from localjudge.kinds.head.spec import Anchor, HeadReading


class HeadWeights(NamedTuple):
    """One metric's head: standardisation and weights over its feature vector."""

    weight: np.ndarray
    """(d,) weights on the standardised features."""
    centre: np.ndarray
    """(d,) feature means over the training cases (unused by a preference: differences cancel it)."""
    scale: np.ndarray
    """(d,) feature standard deviations over the training cases (1 where a feature was constant)."""


def rowwise(z: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """(n,) each row of (n, d) `z` dotted with (d,) `weight` on its own: the same bits whatever n
    (a matrix-vector product's blocking depends on the row count)."""
    return np.array([float(row @ weight) for row in z], dtype=np.float64)


def linear(w: HeadWeights, bias: float, x: np.ndarray) -> np.ndarray:
    """(n,) bias + weight · standardised features of (n, d) vectors."""
    return bias + rowwise((x - w.centre) / w.scale, w.weight)


def anchored(anchor: Anchor, head: np.ndarray, likelihood: np.ndarray) -> np.ndarray:
    """(n,) the anchored output: `intercept + slope * (z(head) + z(likelihood))`, z by the training cases."""
    z = (head - anchor.head_mean) / anchor.head_sd + (likelihood - anchor.anchor_mean) / anchor.anchor_sd
    return anchor.intercept + anchor.slope * z


def read(reading: HeadReading, w: HeadWeights, x: np.ndarray, second: np.ndarray | None = None) -> np.ndarray:
    """(n,) each case's reading on the label's terms: a rating on the scale, P(label 1), or P(output 1 better).

    Args:
        reading: the metric's reading.
        w: its weights.
        x: (n, d) feature vectors (of output 1, for a preference); the likelihood anchor reads
            column -3 (the mean token log-probability, `features.EXTRAS`).
        second: (n, d) output 2's vectors, for a preference: the head reads the difference, so
            swapping the outputs gives 1 - P exactly and no position can be preferred.
    """
    if reading.label == "preference":
        assert second is not None, "a preference reads two outputs"
        out = rowwise((x - second) / w.scale, w.weight)
    else:
        out = linear(w, reading.bias, x)
        if reading.anchor is not None:
            out = anchored(reading.anchor, out, x[:, -3])
    if reading.link == "logistic":
        return 1.0 / (1.0 + np.exp(-out))
    assert reading.scale is not None, "a rating has a scale"
    return np.clip(out, *reading.scale)


def normalised(reading: HeadReading, raw: np.ndarray) -> np.ndarray:
    """(n,) readings on 0-1: a rating mapped from its scale, probabilities as they are."""
    if reading.scale is None:
        return raw
    low, high = reading.scale
    return (raw - low) / (high - low)
