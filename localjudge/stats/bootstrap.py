"""Bootstrap resampling: of items or of whole groups, as index draws or as multinomial weights.

Drawing items with replacement is the same as giving each item a multinomial count, so every
statistic that is a ratio of per-item sums (means, within-item OLS slopes) is computed for all
resamples at once as `weights @ per_item_sums`. Row 0 of `item_weights` is all ones: the point
estimate rides along with the resamples (`estimates.estimate` reads it back).

Each function seeds its own generator, so the same arguments always give the same resamples.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


def bootstrap_indices(n_items: int, groups: np.ndarray | None, n_bootstrap: int, seed: int) -> Iterator[np.ndarray]:
    """Yields index arrays of bootstrap resamples, of items or of whole groups.

    With groups, each resample draws as many groups as there are, with replacement, and takes
    every item of each drawn group, so items of one group never separate.

    Args:
        n_items: Number of items.
        groups: (n_items,) group id of each item, or None to resample items.
        n_bootstrap: Number of resamples.
        seed: Seed of the random generator; the same seed gives the same resamples.
    """
    rng = np.random.default_rng(seed)
    if groups is None:
        for _ in range(n_bootstrap):
            yield rng.integers(0, n_items, size=n_items)
        return
    _, inverse = np.unique(groups, return_inverse=True)
    members = [np.flatnonzero(inverse == g) for g in range(inverse.max() + 1)]
    for _ in range(n_bootstrap):
        drawn = rng.integers(0, len(members), size=len(members))
        yield np.concatenate([members[g] for g in drawn])


def resample_means(values: np.ndarray, n_bootstrap: int, seed: int) -> np.ndarray:
    """Means of bootstrap resamples of the rows of `values`.

    Args:
        values: (G, ...) one row per resampled unit (an item, or a group's statistics).
        n_bootstrap: Number of resamples.
        seed: Seed of the draw.

    Returns:
        (n_bootstrap, ...) mean of the G rows drawn, with replacement, for each resample.
    """
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, len(values), size=(n_bootstrap, len(values)))  # (B, G)
    return values[drawn].mean(axis=1)


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
