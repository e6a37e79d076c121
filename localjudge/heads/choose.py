"""Which layers and which L2 strength a head uses, by grouped cross-validation, and the head fit with them.

Every configuration (each layer set × each strength) is read on every fold by a head fit on the
other folds (standardised on them), and scored by the metric kind's agreement over all out-of-fold
readings. The best is fit again on every labelled case. The likelihood anchor (`kinds.head.spec.Anchor`)
is then set from the chosen configuration's out-of-fold readings, so its weights and its line onto
the labels come from readings of cases the head had not seen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

import numpy as np

from localjudge.heads.fit import RidgePath, grouped_folds, line, logistic, standard
from localjudge.judges.heads import Candidate
from localjudge.kinds.head.linear import HeadWeights
from localjudge.kinds.head.spec import Anchor, HeadReading, LabelKind

Agree = Callable[[np.ndarray], float | None]
"""Agreement of (n,) readings of every labelled case with their labels (NaN where unread)."""


class Features(NamedTuple):
    """One layer set's feature vectors of the labelled cases."""

    layers: tuple[int, ...]
    first: np.ndarray  # (n, d) the output's (output 1's for a preference)
    second: np.ndarray | None  # (n, d) output 2's, for a preference


class Chosen(NamedTuple):
    """The fitted head of one metric and how it was chosen."""

    reading: HeadReading
    weights: HeadWeights
    candidates: list[Candidate]
    chosen: Candidate
    folds: int
    oof_agreement: float | None
    """Agreement of the final reading's out-of-fold version (the anchor included where there is one)."""
    oof: np.ndarray
    """(n,) that out-of-fold reading of every case, on the label's terms."""


def choose(
    label: LabelKind,
    scale: tuple[float, float] | None,
    sets: Sequence[Features],
    y: np.ndarray,
    groups: np.ndarray,
    agree: Agree,
    alphas: Sequence[float],
    folds: int,
    seed: int,
    anchor: bool,
) -> Chosen:
    """Cross-validates every layer set and strength, refits the best on all cases, anchors it (see module)."""
    parts = grouped_folds(groups, folds, seed)
    candidates, oof = [], {}
    for fs in sets:
        per_alpha = _out_of_fold(label, fs, y, parts, alphas)  # alpha -> (n,) readings
        for a in alphas:
            value = agree(_link(label, per_alpha[a], scale))
            candidates.append(Candidate(layers=list(fs.layers), alpha=a, agreement=value))
            oof[(fs.layers, a)] = per_alpha[a]
    best = max(candidates, key=lambda c: -np.inf if c.agreement is None else c.agreement)
    fs = next(s for s in sets if list(s.layers) == best.layers)
    weights, bias = _fit(label, fs, y, best.alpha)
    held = oof[(fs.layers, best.alpha)]  # (n,) out-of-fold linear outputs
    link: Literal["identity", "logistic"] = "identity" if label == "rating" else "logistic"
    pin = None
    if anchor and label != "preference":
        pin = _anchor(label, held, fs.first[:, -3], y)
    elif label == "binary":  # the logistic link of the ridge output, fit on its out-of-fold readings
        c1, c0 = logistic(held[:, None], y, 1e-6)
        weights, bias, held = weights._replace(weight=weights.weight * c1[0]), c0 + c1[0] * bias, c0 + c1[0] * held
    reading = HeadReading(label=label, scale=scale, layers=list(fs.layers), bias=bias, anchor=pin, link=link)
    final_oof = _link(label, held if pin is None else _anchored(pin, held, fs.first[:, -3]), scale)
    return Chosen(reading, weights, candidates, best, len(parts), agree(final_oof), final_oof)


def _out_of_fold(
    label: LabelKind, fs: Features, y: np.ndarray, parts: list[np.ndarray], alphas: Sequence[float]
) -> dict[float, np.ndarray]:
    """Each strength's (n,) out-of-fold linear outputs (before the link)."""
    n = len(y)
    out = {a: np.full(n, np.nan) for a in alphas}
    for held in parts:
        train = np.setdiff1d(np.arange(n), held)
        sub = Features(fs.layers, fs.first[train], None if fs.second is None else fs.second[train])
        if label != "preference":  # ratings and yes/no labels: ridge (labels 0/1 for the latter)
            std = standard(sub.first)
            path = RidgePath((sub.first - std.centre) / std.scale, y[train])
            z = (fs.first[held] - std.centre) / std.scale
            for a in alphas:
                out[a][held] = path.predict(z, a)
            continue
        for a in alphas:
            w, b = _fit(label, sub, y[train], a)
            out[a][held] = _linear(label, w, b, fs, held)
    return out


def _fit(label: LabelKind, fs: Features, y: np.ndarray, alpha: float) -> tuple[HeadWeights, float]:
    """The head fit on every case given: weights over standardised features, and its intercept."""
    if label == "preference":
        assert fs.second is not None
        std = standard(np.vstack([fs.first, fs.second]), centre=False)
        d = (fs.first - fs.second) / std.scale  # (n, d)
        # both orders: (x1 - x2, y) and (x2 - x1, 1 - y); with no intercept the head is antisymmetric
        w, _ = logistic(np.vstack([d, -d]), np.concatenate([y, 1 - y]), alpha, intercept=False)
        return HeadWeights(w, np.zeros_like(std.scale), std.scale), 0.0
    std = standard(fs.first)
    z = (fs.first - std.centre) / std.scale
    path = RidgePath(z, y)  # a yes/no label's ridge output gets its logistic link in `choose`
    return HeadWeights(path.weights(alpha), std.centre, std.scale), path.mean


def _linear(label: LabelKind, w: HeadWeights, bias: float, fs: Features, rows: np.ndarray) -> np.ndarray:
    """(m,) linear outputs of `rows` (a preference's logit of output 1 being better)."""
    if label == "preference":
        assert fs.second is not None
        return ((fs.first[rows] - fs.second[rows]) / w.scale) @ w.weight
    return bias + ((fs.first[rows] - w.centre) / w.scale) @ w.weight


def _link(label: LabelKind, out: np.ndarray, scale: tuple[float, float] | None) -> np.ndarray:
    if label == "rating":
        assert scale is not None
        return np.clip(out, *scale)
    return 1.0 / (1.0 + np.exp(-out))


def _anchor(label: LabelKind, head: np.ndarray, likelihood: np.ndarray, y: np.ndarray) -> Anchor:
    """The anchor from out-of-fold head outputs and the likelihood: z-scores, then a line (or a logistic) onto y."""
    hm, hs = float(head.mean()), float(head.std()) or 1.0
    am, as_ = float(likelihood.mean()), float(likelihood.std()) or 1.0
    z = (head - hm) / hs + (likelihood - am) / as_  # (n,)
    if label == "rating":
        c0, c1 = line(z, y)
    else:
        w, c0 = logistic(z[:, None], y, 1e-6)
        c1 = float(w[0])
    return Anchor(head_mean=hm, head_sd=hs, anchor_mean=am, anchor_sd=as_, intercept=c0, slope=c1)


def _anchored(pin: Anchor, head: np.ndarray, likelihood: np.ndarray) -> np.ndarray:
    from localjudge.kinds.head.linear import anchored

    return anchored(pin, head, likelihood)
