"""Within-item regressions of pointwise scores: length bias and the perplexity covariate.

Both demean every variable inside each item (item fixed effects), so an item's difficulty
cannot masquerade as a length or family effect. The per-item cross-products are sums over
items, so the item bootstrap of a slope is again `weights @ per_item_sums` (see `stats`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats as sps

import localjudge.stats as stats
from localjudge.bias.options import DEFAULT_OPTIONS, BiasOptions
from localjudge.bias.records import PointwiseRecord
from localjudge.bias.results import LengthBias, PerplexityAdjusted
from localjudge.bias.tables import pointwise_table
from localjudge.stats import Estimate

# A cluster-robust variance from a handful of items is far too small; below this many
# informative items the perplexity coefficients get no p-value.
_MIN_CLUSTERS = 8


def _demean(item: np.ndarray, x: np.ndarray, n_items: int) -> np.ndarray:
    """x minus its item mean; (N,), (N,) -> (N,)."""
    count = np.bincount(item, minlength=n_items)
    mean = np.bincount(item, weights=x, minlength=n_items) / np.maximum(count, 1)
    return x - mean[item]


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan
    return float(np.corrcoef(sps.rankdata(x), sps.rankdata(y))[0, 1])


def length_bias(records: Sequence[PointwiseRecord], settings: BiasOptions = DEFAULT_OPTIONS) -> list[LengthBias]:
    """Within-item slope and Spearman rho of each judge's score against response length.

    The p-values come from permuting lengths among the responses of the same item, which is
    exact under H0 "within an item, the score does not depend on length". Rho is computed on
    the pooled item-demeaned values, so it is a within-item rank association.

    Args:
        records: Pointwise records; unscored ones are skipped.
        settings: Resampling settings; slopes are per `settings.length_unit`.

    Examples:
        >>> [(b.judge, b.slope.value, b.slope.p_value) for b in length_bias(records)]  # doctest: +SKIP
    """
    t = pointwise_table(records)
    n_items = len(t.items)
    w = stats.item_weights(n_items, settings.n_bootstrap, settings.seed)
    results = []
    for j, judge in enumerate(t.judges):
        ok = ~np.isnan(t.score[j]) & ~np.isnan(t.length[j])  # (I, G)
        item, gen = np.nonzero(ok)  # row-major: sorted by item
        x = _demean(item, t.length[j][item, gen] / settings.length_unit, n_items)
        y = _demean(item, t.score[j][item, gen], n_items)
        informative = np.bincount(item, minlength=n_items) >= 2
        n_inf = int(informative.sum())
        sxy = np.bincount(item, weights=x * y, minlength=n_items)
        sxx = np.bincount(item, weights=x * x, minlength=n_items)
        slope_boot = stats.ratio(w, sxy, sxx)

        rx, ry = sps.rankdata(x), sps.rankdata(y)
        rho_boot = np.full(w.shape[0], np.nan)
        rho_boot[0] = _spearman(x, y)
        for r in range(1, w.shape[0]):
            rows = np.repeat(np.arange(item.size), w[r, item].astype(int))
            rho_boot[r] = _spearman(x[rows], y[rows])

        p_slope = p_rho = None
        if n_inf >= 2 and sxx.sum() > 0:
            perms = stats.within_group_permutations(item, settings.n_permutations, settings.seed * 7919 + j)  # (P, N)
            t_obs = abs(np.sum(x * y)) * (1 - 1e-12)
            p_slope = float((1 + np.sum(np.abs((x[perms] * y).sum(1)) >= t_obs)) / (1 + settings.n_permutations))
            rxc, ryc = rx - rx.mean(), ry - ry.mean()
            r_obs = abs(np.sum(rxc * ryc)) * (1 - 1e-12)
            p_rho = float((1 + np.sum(np.abs((rxc[perms] * ryc).sum(1)) >= r_obs)) / (1 + settings.n_permutations))
        n = int(np.bincount(item, minlength=n_items)[informative].sum())
        results.append(
            LengthBias(
                judge=judge,
                slope=stats.estimate(slope_boot, p_value=p_slope, n=n, n_items=n_inf, confidence=settings.ci_level),
                spearman=stats.estimate(rho_boot, p_value=p_rho, n=n, n_items=n_inf, confidence=settings.ci_level),
            )
        )
    return results


def _cluster_p(coef: float, scores: np.ndarray, bread: np.ndarray, k: int, groups: int) -> float:
    """Two-sided t-test p of coef with a cluster-robust (CR1, by item) variance.

    Args:
        coef: The coefficient tested.
        scores: (I, P) per-item sums of regressor × residual.
        bread: (P, P) inverse of X'X.
        k: Index of the coefficient.
        groups: Items that carry information (degrees of freedom groups - 1).
    """
    meat = scores.T @ scores  # (P, P)
    var = groups / (groups - 1) * (bread @ meat @ bread)[k, k]
    if not var > 0:
        return np.nan
    return float(2 * sps.t.sf(abs(coef) / np.sqrt(var), groups - 1))


def perplexity_adjusted(
    records: Sequence[PointwiseRecord], settings: BiasOptions = DEFAULT_OPTIONS
) -> list[PerplexityAdjusted]:
    """Own-family coefficient of each judge before and after adding its perplexity of the text.

    Per judge J of family F and each judge K of another family H, the outcome is J's score
    minus K's score of the same response (which removes the response's true quality), regressed
    on [own-family indicator, judge_logppl] with (item, K) fixed effects; responses of family H
    are left out as in the DiD (see `pointwise`), unless no third family exists. All K are
    stacked into one regression. Without other-family judges the outcome is J's raw score with
    item fixed effects. Without the covariate the own coefficient is the DiD's counterpart; if
    it vanishes with the covariate, J's self-preference is explained by how familiar (low
    perplexity) its own family's text is to it. p-values use a cluster-robust (by item, CR1)
    t-test with items - 1 degrees of freedom, and need at least 8 informative items.

    Args:
        records: Pointwise records; only judges with `judge_logppl` get a result.
        settings: Resampling settings.
    """
    t = pointwise_table(records)
    n_items = len(t.items)
    w = stats.item_weights(n_items, settings.n_bootstrap, settings.seed)
    gen_fam = np.array(t.generator_families)
    results = []
    for j, judge in enumerate(t.judges):
        if np.all(np.isnan(t.logppl[j])):
            continue
        family = t.judge_families[j]
        own = gen_fam == family  # (G,)
        refs = [k for k, f in enumerate(t.judge_families) if f != family]
        blocks = []  # (outcome (I, G), responses used (G,)) per reference judge
        for k in refs:
            keep = gen_fam != t.judge_families[k]
            if not (keep & ~own).any():  # two families: nothing left to compare own with
                keep = np.ones_like(own)
            blocks.append((t.score[j] - t.score[k], keep))
        if not refs:
            blocks.append((t.score[j], np.ones_like(own)))
        item_l, y_l, o_l, z_l = [], [], [], []
        for block, (y_all, keep) in enumerate(blocks):
            it, gen = np.nonzero(~np.isnan(y_all) & ~np.isnan(t.logppl[j]) & keep[None, :])
            group = block * n_items + it  # fixed effect per (reference, item)
            n_groups = len(blocks) * n_items
            item_l.append(it)
            y_l.append(_demean(group, y_all[it, gen], n_groups))
            o_l.append(_demean(group, own[gen].astype(float), n_groups))
            z_l.append(_demean(group, t.logppl[j][it, gen], n_groups))
        item, y, o, z = (np.concatenate(x) for x in (item_l, y_l, o_l, z_l))

        def per_item(v: np.ndarray, item: np.ndarray = item) -> np.ndarray:
            return np.bincount(item, weights=v, minlength=n_items)  # (I,)

        a, b, c, u, v = (per_item(p) for p in (o * o, o * z, z * z, o * y, z * y))
        A, B, C, U, V = (w @ s for s in (a, b, c, u, v))  # (R,) each
        det = A * C - B * B
        with np.errstate(divide="ignore", invalid="ignore"):
            # Collinear own/perplexity (det ~ 0) leaves the coefficients undefined.
            good = det > 1e-9 * np.maximum(A * C, 1e-300)
            own_with = np.where(good, (C * U - B * V) / det, np.nan)
            ppl = np.where(good, (A * V - B * U) / det, np.nan)
            own_without = np.where(A > 0, U / A, np.nan)
        groups = int(np.sum(per_item(o * o + z * z) > 0))  # items that carry information
        n_responses = int(np.sum(~np.isnan(t.score[j]) & ~np.isnan(t.logppl[j])))
        p0 = p_own = p_ppl = None
        if groups >= _MIN_CLUSTERS and A[0] > 0:
            e0 = y - own_without[0] * o
            p0 = _cluster_p(own_without[0], per_item(o * e0)[:, None], np.array([[1 / A[0]]]), 0, groups)
            if good[0]:
                e = y - own_with[0] * o - ppl[0] * z
                sc = np.stack([per_item(o * e), per_item(z * e)], axis=1)  # (I, 2)
                bread = np.linalg.inv(np.array([[A[0], B[0]], [B[0], C[0]]]))
                p_own = _cluster_p(own_with[0], sc, bread, 0, groups)
                p_ppl = _cluster_p(ppl[0], sc, bread, 1, groups)

        def est(boot: np.ndarray, p: float | None, n_responses: int = n_responses, groups: int = groups) -> Estimate:
            return stats.estimate(boot, n=n_responses, n_items=groups, confidence=settings.ci_level, p_value=p)

        results.append(
            PerplexityAdjusted(
                judge=judge,
                outcome="score_minus_reference" if refs else "score",
                own_without=est(own_without, p0),
                own_with=est(own_with, p_own),
                logppl=est(ppl, p_ppl),
            )
        )
    return results
