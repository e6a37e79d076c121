"""Resampling statistics of the bias analyses: item bootstrap, sign flips, permutations, Holm.

The bootstrap resamples items with replacement. Drawing items is the same as giving each item a
multinomial count, so every statistic that is a ratio of per-item sums (means, within-item OLS
slopes) is computed for all resamples at once as `weights @ per_item_sums`. Row 0 of the weight
matrix is all ones: the point estimate rides along with the resamples.
"""

from __future__ import annotations

import math
from itertools import product

import numpy as np

from localjudge.bias.results import Estimate

# Exact sign-flip enumeration up to 2**12 patterns; Monte Carlo beyond.
_EXACT_SIGN_FLIP_MAX_N = 12
# Values this small relative to the largest one are floating-point residue, counted as 0.
_ZERO_TOLERANCE = 1e-12


def item_weights(n_items: int, n_resamples: int, seed: int) -> np.ndarray:
    """Bootstrap weights of items, with the identity (point estimate) as row 0.

    Args:
        n_items: Number of distinct items.
        n_resamples: Bootstrap resamples.
        seed: Seed of the draw; same arguments give the same weights.

    Returns:
        (1 + n_resamples, n_items) float array; each row sums to n_items.
    """
    rng = np.random.default_rng([seed, 0xB007])
    draws = rng.multinomial(n_items, np.full(n_items, 1.0 / n_items), size=n_resamples)
    return np.vstack([np.ones((1, n_items)), draws]).astype(float)


def ratio(weights: np.ndarray, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Ratio of weighted per-item sums, NaN where the denominator is 0.

    Args:
        weights: (R, I) item weights from `item_weights`.
        num: (I,) per-item numerator sums.
        den: (I,) per-item denominator sums (counts, or sums of squares for slopes).

    Returns:
        (R,) ratio per row of weights.
    """
    top, bottom = weights @ num, weights @ den  # (R,)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.nan)


def group_mean(weights: np.ndarray, item: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Mean of per-observation values under item weights.

    Args:
        weights: (R, I) item weights.
        item: (N,) item index of each observation.
        values: (N,) values; NaN entries are left out.

    Returns:
        (R,) weighted means, NaN where no observation has weight.
    """
    ok = ~np.isnan(values)
    n_items = weights.shape[1]
    num = np.bincount(item[ok], weights=values[ok], minlength=n_items)
    den = np.bincount(item[ok], minlength=n_items).astype(float)
    return ratio(weights, num, den)


def finite(x: float) -> float | None:
    """`x` as a float, or None when it is NaN or infinite."""
    return float(x) if x is not None and math.isfinite(x) else None


def estimate(
    boot: np.ndarray, *, n: int, n_items: int, confidence: float, p_value: float | None = None
) -> Estimate:
    """Builds an `Estimate` from a row-0-is-point vector of bootstrap values.

    Args:
        boot: (1 + B,) statistic; row 0 is the point estimate, NaN rows are dropped.
        n: Observations behind the estimate.
        n_items: Items behind the estimate.
        confidence: Interval coverage.
        p_value: Two-sided p-value of the analysis' test, if any.
    """
    rest = boot[1:][np.isfinite(boot[1:])]
    lo = hi = None
    # With fewer than two items every resample repeats the data: no interval. When most
    # resamples leave the statistic undefined (a rare group), percentiles would mislead.
    if n_items >= 2 and rest.size >= 2 and rest.size >= 0.5 * (boot.size - 1):
        tail = 50.0 * (1.0 - confidence)
        lo, hi = (float(v) for v in np.percentile(rest, [tail, 100.0 - tail]))
    value = finite(boot[0])
    return Estimate(
        value=value,
        ci_low=lo if value is not None else None,
        ci_high=hi if value is not None else None,
        p_value=finite(p_value) if value is not None and p_value is not None else None,
        n=n,
        n_items=n_items,
    )


def sign_flip_p(x: np.ndarray, n_permutations: int, seed: int) -> float | None:
    """Two-sided sign-flip test of E[x] = 0 for independent, symmetric-under-H0 values.

    Args:
        x: (n,) one value per independent unit (item), NaN-free.
        n_permutations: Random sign patterns when n is too large to enumerate.
        seed: Seed of the random patterns.

    Returns:
        P(|sum of flipped x| >= |sum x|) under H0, or None when x is empty.
    """
    if x.size == 0:
        return None
    # Rounding residue is no effect: 0.5 * (p + 1 - p) - 0.5 can be 1e-16, and n such residues
    # of one sign would otherwise reach p = 2 / 2**n.
    x = np.where(np.abs(x) <= _ZERO_TOLERANCE * max(1.0, float(np.abs(x).max())), 0.0, x)
    observed = abs(x.sum()) * (1 - 1e-12)
    if x.size <= _EXACT_SIGN_FLIP_MAX_N:
        signs = np.array(list(product((-1.0, 1.0), repeat=x.size)))  # (2**n, n)
        return float(np.mean(np.abs(signs @ x) >= observed))
    rng = np.random.default_rng([seed, 0x51F7])
    signs = rng.choice((-1.0, 1.0), size=(n_permutations, x.size))  # (P, n)
    hits = np.sum(np.abs(signs @ x) >= observed)
    return float((1 + hits) / (1 + n_permutations))


def within_group_permutations(group: np.ndarray, n_permutations: int, seed: int) -> np.ndarray:
    """Random permutations that only move observations inside their group.

    Args:
        group: (n,) non-decreasing integer group id of each observation (sorted by group).
        n_permutations: Number of permutations.
        seed: Seed of the draw.

    Returns:
        (n_permutations, n) index arrays.
    """
    assert np.all(np.diff(group) >= 0), "observations must be sorted by group"
    rng = np.random.default_rng([seed, 0xBE47])
    # A uniform jitter below 1 reorders rows within a group but never across groups.
    keys = group[None, :] + 0.5 * rng.random((n_permutations, group.size))
    return np.argsort(keys, axis=1)


def label_permutation_p(
    values: np.ndarray, label: np.ndarray, n_permutations: int, seed: int
) -> float | None:
    """Two-sided permutation test of mean(values[label]) - mean(values[~label]) = 0.

    Args:
        values: (n,) observations, assumed exchangeable under H0.
        label: (n,) boolean group of each observation.
        n_permutations: Random relabellings.
        seed: Seed of the draw.
    """
    n1, n = int(label.sum()), values.size
    if n1 == 0 or n1 == n:
        return None
    total = values.sum()
    observed = abs(values[label].mean() - values[~label].mean()) * (1 - 1e-12)
    rng = np.random.default_rng([seed, 0x1ABE])
    picks = np.argsort(rng.random((n_permutations, n)), axis=1)[:, :n1]  # (P, n1)
    s1 = values[picks].sum(axis=1)
    diffs = s1 / n1 - (total - s1) / (n - n1)
    return float((1 + np.sum(np.abs(diffs) >= observed)) / (1 + n_permutations))


def holm(p_values: list[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, idx in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[idx]))
        adjusted[idx] = running
    return [float(a) for a in adjusted]
