"""Tests by resampling labels or signs, and Holm's correction across tests.

Sign flips are enumerated exactly for small samples and drawn at random beyond; random draws use
their own seeded generator, so the same arguments always give the same p-value.
"""

from __future__ import annotations

from itertools import product

import numpy as np

# Exact sign-flip enumeration up to 2**12 patterns; Monte Carlo beyond.
_EXACT_SIGN_FLIP_MAX_N = 12
# Values this small relative to the largest one are floating-point residue, counted as 0.
_ZERO_TOLERANCE = 1e-12


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


def label_permutation_p(values: np.ndarray, label: np.ndarray, n_permutations: int, seed: int) -> float | None:
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
