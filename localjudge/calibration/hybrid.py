"""A hybrid judge: several scorers of the same cases combined into one score, fitted on human labels.

Pure math, arrays in and out. Each candidate combination is a direction over the standardised
component scores (z = (x − mean) / std); a least-squares scale and intercept then put it on the
human scale. Candidates, from simplest to richest:

- each component alone (its sign taken from the fit data);
- `zmean`: every component with its fitted sign, equally weighted (a rank-average in spirit that
  also applies to one new case at a time, unlike ranks);
- `ridge`: a ridge regression on the standardised components, for a few penalties.

With groups (e.g. articles), agreement is per group and then averaged (the SummEval convention),
the fit uses within-group variation only (each group's means removed: an article's difficulty
is not what a summary's score should learn), and cross-validation folds are whole groups.

The choice follows the one-standard-error rule (Breiman et al., 1984): the simplest candidate
whose cross-validated agreement is within one standard error of the best one's, the error taken
over the paired per-group (or, without groups, per-fold) differences. A richer combination must
beat a single scorer by more than the noise of the fit data to be kept, since on held-back data
it otherwise does worse as often as better. The kept candidate is refitted on the whole fit
split; the held-back split is only used to report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from localjudge.errors import DataError
from localjudge.stats import correlations

RIDGE_ALPHAS = (0.01, 0.1, 1.0, 10.0)
"""Ridge penalties tried, relative to the number of items (standardised components)."""

MIN_FIT_ITEMS = 10


@dataclass(frozen=True)
class LinearScore:
    """score = intercept + Σ weight_k · (x_k − mean_k) / std_k, on the human scale."""

    method: str
    mean: np.ndarray  # (K,)
    std: np.ndarray  # (K,)
    weights: np.ndarray  # (K,)
    intercept: float
    alpha: float | None = None

    def predict(self, x: np.ndarray) -> np.ndarray:
        """(n,) scores of (n, K) component scores."""
        return self.intercept + ((np.asarray(x, float) - self.mean) / self.std) @ self.weights


def _center(a: np.ndarray, groups: np.ndarray | None) -> np.ndarray:
    """a minus its mean, per group when there are groups."""
    if groups is None:
        return a - a.mean(axis=0)
    out = np.array(a, dtype=float, copy=True)
    for g in np.unique(groups):
        sel = groups == g
        out[sel] -= out[sel].mean(axis=0)
    return out


def _direction(method: str, z: np.ndarray, y: np.ndarray, groups, alpha: float | None, k: int | None) -> np.ndarray:
    zc, yc = _center(z, groups), _center(y, groups)
    if method == "single":
        w = np.zeros(z.shape[1])
        w[k] = 1.0 if zc[:, k] @ yc >= 0 else -1.0
        return w
    if method == "zmean":
        return np.where(zc.T @ yc >= 0, 1.0, -1.0) / z.shape[1]
    assert method == "ridge" and alpha is not None
    gram = zc.T @ zc + alpha * len(y) * np.eye(z.shape[1])
    return np.linalg.solve(gram, zc.T @ yc)


def fit_candidate(
    x: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray | None,
    method: str,
    alpha: float | None = None,
    k: int | None = None,
) -> LinearScore:
    """One candidate fitted on (n, K) component scores and (n,) human scores."""
    mean, std = x.mean(axis=0), x.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    z = (x - mean) / std
    w = _direction(method, z, y, groups, alpha, k)
    c = z @ w
    cc, yc = _center(c, groups), _center(y, groups)
    scale = float(cc @ yc / (cc @ cc)) if cc @ cc > 0 else 0.0
    scale = max(scale, 0.0)  # the direction already carries the sign
    intercept = float(y.mean() - scale * c.mean())
    return LinearScore(method, mean, std, w * scale if scale > 0 else w * 0.0, intercept, alpha)


@dataclass(frozen=True)
class Candidate:
    """A way of combining the components, and its cross-validated agreement.

    `units` holds Spearman ρ per group (or per fold, without groups) of the held-out
    predictions; `cv_spearman` is their mean.
    """

    label: str
    method: str
    alpha: float | None
    component: int | None
    cv_spearman: float | None
    units: dict = field(default_factory=dict, compare=False)


def candidates(names: Sequence[str]) -> list[tuple[str, str, float | None, int | None]]:
    """(label, method, alpha, component) from simplest to richest."""
    out: list[tuple[str, str, float | None, int | None]] = [
        (f"{n} alone", "single", None, k) for k, n in enumerate(names)
    ]
    if len(names) > 1:
        out.append(("zmean", "zmean", None, None))
        out += [(f"ridge α={a:g}", "ridge", a, None) for a in RIDGE_ALPHAS]
    return out


def folds(n: int, groups: np.ndarray | None, k: int, seed: int) -> list[np.ndarray]:
    """Index sets of k folds; whole groups stay together."""
    rng = np.random.default_rng(seed)
    if groups is None:
        order = rng.permutation(n)
        return [np.sort(order[i::k]) for i in range(k)]
    uniq = rng.permutation(np.unique(groups))
    return [np.flatnonzero(np.isin(groups, uniq[i::k])) for i in range(k) if len(uniq[i::k])]


def cross_validate(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray | None, names: Sequence[str], k: int = 5, seed: int = 0
) -> list[Candidate]:
    """Every candidate's agreement on held-out folds, predictions pooled over the folds."""
    parts = folds(len(y), groups, k, seed)
    out = []
    for label, method, alpha, comp in candidates(names):
        pred = np.empty(len(y))
        for test in parts:
            train = np.setdiff1d(np.arange(len(y)), test)
            g = groups[train] if groups is not None else None
            pred[test] = fit_candidate(x[train], y[train], g, method, alpha, comp).predict(x[test])
        units = unit_agreements(pred, y, groups, parts)
        mean = float(np.mean(list(units.values()))) if units else None
        out.append(Candidate(label, method, alpha, comp, mean, units))
    return out


def unit_agreements(pred: np.ndarray, y: np.ndarray, groups: np.ndarray | None, parts: Sequence[np.ndarray]) -> dict:
    """Spearman ρ per group, or per fold without groups; units where it is undefined are left out."""
    units = [(g, groups == g) for g in np.unique(groups)] if groups is not None else list(enumerate(parts))
    out = {}
    for key, sel in units:
        rho = correlations(pred[sel], y[sel]).spearman
        if rho is not None:
            out[key] = rho
    return out


def choose(cands: Sequence[Candidate]) -> Candidate:
    """The simplest candidate within one standard error of the best (paired over groups or folds).

    Simplest: a single component before the equal-weight mean before ridge, and a strong ridge
    penalty before a weak one; among the single components within reach, the best.
    """
    scored = [c for c in cands if c.cv_spearman is not None]
    if not scored:
        raise DataError("no combination has a defined agreement on the fit split; label more items or groups")

    def cv(c: Candidate) -> float:
        assert c.cv_spearman is not None  # only scored candidates get here
        return c.cv_spearman

    best = max(scored, key=cv)

    def close(c: Candidate) -> bool:
        shared = [u for u in c.units if u in best.units]
        diffs = np.array([best.units[u] - c.units[u] for u in shared])
        se = float(diffs.std(ddof=1) / np.sqrt(len(diffs))) if len(diffs) > 1 else 0.0
        return cv(c) >= cv(best) - se - 1e-12

    # the simplest kind within reach of the best, and the best of that kind
    return min((c for c in scored if close(c)), key=lambda c: (complexity(c), -cv(c)))


def complexity(c: Candidate) -> int:
    """0 for a single component, 1 for zmean, then ridge from the strongest penalty to the weakest."""
    if c.method == "single":
        return 0
    if c.method == "zmean":
        return 1
    assert c.alpha is not None  # ridge candidates carry their penalty
    return 2 + sorted(RIDGE_ALPHAS, reverse=True).index(c.alpha)
