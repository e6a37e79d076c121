"""Pointwise bias analyses: the judge × generator matrix, self-preference and equal opportunity.

Self-preference is a difference in differences (DiD). For judge J of family F and item i:

    c_{J,K,i} = [mean_J(F, i) - mean_J(O, i)] - [mean_K(F, i) - mean_K(O, i)]

where K is a judge of another family H and O are the generator families other than F and H.
Leaving H out keeps K's own self-preference from leaking into J's estimate. With only two
families O would be empty, so O falls back to "every family but F"; the DiD then measures J's
bias *relative to* the other family's judges, and a biased control shifts it (this is a limit of
identification, not of the estimator: without ground truth only relative bias is identified).
d_i is the mean of c_{J,K,i} over controls, the DiD is the mean of d_i over items.

The test is a sign flip on the d_i: under H0 (J treats its own family like the controls do),
d_i is symmetric around 0, and items are independent; J's and K's judge-specific offsets and the
items' true quality differences cancel inside each d_i.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import localjudge.stats as stats
from localjudge.bias.options import DEFAULT_OPTIONS, BiasOptions
from localjudge.bias.records import PointwiseRecord
from localjudge.bias.results import EqualOpportunity, MatrixCell, ScoreMatrix, SelfPreference
from localjudge.bias.tables import PointwiseTable, pointwise_table
from localjudge.stats import Estimate


def _masked_mean(x: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """Mean over the selected columns ignoring NaN; (I, G), (G,) bool -> (I,), NaN when empty."""
    sub = x[:, columns]
    count = np.sum(~np.isnan(sub), axis=1)
    total = np.nansum(sub, axis=1)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _nan_estimate() -> Estimate:
    return Estimate(value=None, ci_low=None, ci_high=None, n=0, n_items=0)


def _item_mean_estimate(
    d: np.ndarray, weights: np.ndarray, settings: BiasOptions, *, test_seed: int | None = None
) -> Estimate:
    """Mean over items of a per-item value (NaN = item left out), with an optional sign flip."""
    ok = ~np.isnan(d)
    boot = stats.ratio(weights, np.where(ok, d, 0.0), ok.astype(float))
    p = None
    if test_seed is not None:
        p = stats.sign_flip_p(d[ok], settings.n_permutations, test_seed)
    n = int(ok.sum())
    return stats.estimate(boot, n=n, n_items=n, confidence=settings.ci_level, p_value=p)


def score_matrix(records: Sequence[PointwiseRecord], settings: BiasOptions = DEFAULT_OPTIONS) -> ScoreMatrix:
    """Mean score of every (judge, generator) with bootstrap intervals over items.

    Args:
        records: Pointwise records; unscored ones are skipped and counted per cell.
        settings: Resampling settings.

    Examples:
        >>> m = score_matrix(records)  # doctest: +SKIP
        >>> [(c.judge, c.generator, c.mean.value) for c in m.cells]  # doctest: +SKIP
    """
    t = pointwise_table(records)
    w = stats.item_weights(len(t.items), settings.n_bootstrap, settings.seed)
    ok = ~np.isnan(t.score)  # (J, I, G)
    num = np.einsum("ri,jig->rjg", w, np.where(ok, t.score, 0.0))
    den = np.einsum("ri,jig->rjg", w, ok.astype(float))
    with np.errstate(divide="ignore", invalid="ignore"):
        means = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)  # (R, J, G)
    cells = []
    for j, judge in enumerate(t.judges):
        for g, gen in enumerate(t.generators):
            n = int(ok[j, :, g].sum())
            mean = stats.estimate(means[:, j, g], n=n, n_items=n, confidence=settings.ci_level)
            cells.append(MatrixCell(judge=judge, generator=gen, mean=mean, n_unscored=int(t.n_unscored[j, g])))
    return ScoreMatrix(
        judges=list(t.judges),
        judge_families=list(t.judge_families),
        generators=list(t.generators),
        generator_families=list(t.generator_families),
        cells=cells,
    )


def _self_preference(t: PointwiseTable, j: int, settings: BiasOptions) -> SelfPreference:
    family = t.judge_families[j]
    gen_fam = np.array(t.generator_families)
    own = gen_fam == family  # (G,)
    w = stats.item_weights(len(t.items), settings.n_bootstrap, settings.seed)
    refs = [k for k, f in enumerate(t.judge_families) if f != family]
    raw_gap = _nan_estimate()
    did = _nan_estimate()
    excludes_own = bool(refs)
    if own.any() and (~own).any():
        raw = _masked_mean(t.score[j], own) - _masked_mean(t.score[j], ~own)  # (I,)
        raw_gap = _item_mean_estimate(raw, w, settings)
        contrasts = []
        for k in refs:
            others = ~own & (gen_fam != t.judge_families[k])
            if not others.any():
                others, excludes_own = ~own, False
            cj = _masked_mean(t.score[j], own) - _masked_mean(t.score[j], others)
            ck = _masked_mean(t.score[k], own) - _masked_mean(t.score[k], others)
            contrasts.append(cj - ck)  # (I,)
        if contrasts:
            c = np.array(contrasts)  # (K, I)
            count = np.sum(~np.isnan(c), axis=0)
            d = np.where(count > 0, np.nansum(c, axis=0) / np.maximum(count, 1), np.nan)
            did = _item_mean_estimate(d, w, settings, test_seed=settings.seed * 7919 + j)
    return SelfPreference(
        judge=t.judges[j],
        judge_family=family,
        did=did,
        raw_gap=raw_gap,
        reference_judges=[t.judges[k] for k in refs],
        reference_excludes_own_family=excludes_own,
    )


def self_preference(
    records: Sequence[PointwiseRecord], settings: BiasOptions = DEFAULT_OPTIONS
) -> list[SelfPreference]:
    """Difference-in-differences self-preference of every judge (see the module docstring).

    Args:
        records: Pointwise records; unscored ones are skipped.
        settings: Resampling settings.

    Returns:
        One result per judge, sorted by judge name. `did` is None for a judge without
        other-family judges to compare with, or without both own and other responses.

    Examples:
        >>> [(s.judge, s.did.value, s.did.p_value) for s in self_preference(records)]  # doctest: +SKIP
    """
    t = pointwise_table(records)
    return [_self_preference(t, j, settings) for j in range(len(t.judges))]


def equal_opportunity_pointwise(
    records: Sequence[PointwiseRecord], settings: BiasOptions = DEFAULT_OPTIONS
) -> list[EqualOpportunity]:
    """Equal-opportunity gap of each judge among the responses humans scored highest.

    Per item, only responses with both a human and a judge score compete. A response is
    human-preferred when its human score is the item's maximum (items where every response ties
    are left out); the judge "prefers" it with credit 1/k when it is one of k responses at the
    judge's maximum. The gap is the mean credit for own-family human-preferred responses minus
    that for other families' ones; its p-value permutes the own/other labels, which assumes
    the preferred responses are exchangeable under H0.

    Args:
        records: Pointwise records with `human_score`; without any, the result is empty.
        settings: Resampling settings.
    """
    t = pointwise_table(records)
    if np.all(np.isnan(t.human)):
        return []
    w = stats.item_weights(len(t.items), settings.n_bootstrap, settings.seed)
    gen_fam = np.array(t.generator_families)
    results = []
    for j, judge in enumerate(t.judges):
        sc = t.score[j]  # (I, G)
        both = ~np.isnan(sc) & ~np.isnan(t.human)
        human = np.where(both, t.human, -np.inf)
        judged = np.where(both, sc, -np.inf)
        h_max = human.max(axis=1, keepdims=True)
        h_top = both & (human == h_max)
        usable = (both.sum(axis=1) >= 2) & (h_top.sum(axis=1) < both.sum(axis=1))  # (I,)
        j_top = both & (judged == judged.max(axis=1, keepdims=True))
        credit = j_top / np.maximum(j_top.sum(axis=1, keepdims=True), 1)  # (I, G)
        pick = h_top & usable[:, None]
        item, gen = np.nonzero(pick)
        values = credit[item, gen]
        own = gen_fam[gen] == t.judge_families[j]
        b_own = stats.group_mean(w, item[own], values[own])
        b_other = stats.group_mean(w, item[~own], values[~own])
        p = stats.label_permutation_p(values, own, settings.n_permutations, settings.seed * 7919 + j)

        def est(boot: np.ndarray, mask: np.ndarray, p_value: float | None = None, item: np.ndarray = item) -> Estimate:
            n_items = int(np.unique(item[mask]).size)
            return stats.estimate(
                boot, n=int(mask.sum()), n_items=n_items, confidence=settings.ci_level, p_value=p_value
            )

        everything = np.ones_like(own)
        results.append(
            EqualOpportunity(
                judge=judge,
                judge_family=t.judge_families[j],
                own=est(b_own, own),
                other=est(b_other, ~own),
                gap=est(b_own - b_other, everything, p),
            )
        )
    return results
