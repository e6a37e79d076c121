"""Pairwise bias analyses: self-preference, equal opportunity, position and length.

Every record holds both orders, so a judge's preference for response A is the mean of
`p_a_first` and `p_a_second`, which cancels position bias out of the family and length
analyses. Tests against a reference are sign flips on per-item sums of the record-level
differences: under H0 each item's sum is symmetric around 0, and items are independent.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

import localjudge.stats as stats
from localjudge.bias.options import DEFAULT_OPTIONS, BiasOptions
from localjudge.bias.records import PairwiseRecord
from localjudge.bias.results import EqualOpportunity, PairwiseLengthBias, PairwiseSelfPreference, PositionBias
from localjudge.bias.tables import PairwiseTable, pairwise_table
from localjudge.stats import Estimate


def _mean_estimate(
    t: PairwiseTable,
    rows: np.ndarray,
    values: np.ndarray,
    settings: BiasOptions,
    *,
    null: float | None = None,
    test_seed: int = 0,
) -> Estimate:
    """Mean of `values` over the records `rows`, tested against `null` by item sign flips.

    Args:
        t: The table the rows index.
        rows: (M,) record indices.
        values: (M,) one value per selected record.
        settings: Resampling settings.
        null: Value under H0; None for no test.
        test_seed: Seed of the sign flips.
    """
    w = stats.item_weights(len(t.items), settings.n_bootstrap, settings.seed)
    item = t.item[rows]
    boot = stats.group_mean(w, item, values)
    p = None
    if null is not None and rows.size:
        sums = np.bincount(item, weights=values - null, minlength=len(t.items))
        p = stats.sign_flip_p(sums[np.unique(item)], settings.n_permutations, test_seed)
    return stats.estimate(
        boot, n=int(rows.size), n_items=int(np.unique(item).size), confidence=settings.ci_level, p_value=p
    )


def _prob_of_family(t: PairwiseTable, family: str) -> np.ndarray:
    """(N,) P(judge prefers the response of `family`); meaningful where exactly one is."""
    return np.where(t.family_a == family, t.p_a, 1.0 - t.p_a)


def _own_rows(t: PairwiseTable, j: int) -> np.ndarray:
    """Records of judge j where exactly one response is from the judge's family."""
    family = t.judge_families[j]
    exactly_one = (t.family_a == family) ^ (t.family_b == family)
    return np.nonzero((t.judge == j) & exactly_one)[0]


def pairwise_self_preference(
    records: Sequence[PairwiseRecord], settings: BiasOptions = DEFAULT_OPTIONS
) -> list[PairwiseSelfPreference]:
    """How much more often each judge prefers its own family's answer than a reference does.

    The reference is the probability that judges of other families give the same family's
    answer on the same pair; judges whose own family is in the pair are used only when no
    other one judged it. Without any other-family judge the reference is chance (0.5). Pairs
    no reference judge saw are left out.

    Args:
        records: Pairwise records; unscored ones are skipped.
        settings: Resampling settings.

    Examples:
        >>> [(s.judge, s.difference.value) for s in pairwise_self_preference(records)]  # doctest: +SKIP
    """
    t = pairwise_table(records)
    results = []
    for j, judge in enumerate(t.judges):
        family = t.judge_families[j]
        rows = _own_rows(t, j)
        p_family = _prob_of_family(t, family)  # (N,)
        others = [k for k, f in enumerate(t.judge_families) if f != family]
        if others:
            # pair index -> P(judge prefers the family) from other judges' rows
            neutral: defaultdict[int, list[float]] = defaultdict(list)
            involved: defaultdict[int, list[float]] = defaultdict(list)
            for r in np.nonzero(np.isin(t.judge, others))[0]:
                in_pair = t.judge_families[t.judge[r]] in (t.family_a[r], t.family_b[r])
                (involved if in_pair else neutral)[t.pair[r]].append(p_family[r])
            ref = np.array([np.mean(neutral[t.pair[r]] or involved[t.pair[r]] or [np.nan]) for r in rows])
            excludes_own = all(neutral[t.pair[r]] or not involved[t.pair[r]] for r in rows)
            rows, ref = rows[~np.isnan(ref)], ref[~np.isnan(ref)]
        else:
            ref, excludes_own = np.full(rows.size, 0.5), True
        seed = settings.seed * 7919 + j
        results.append(
            PairwiseSelfPreference(
                judge=judge,
                judge_family=family,
                own_rate=_mean_estimate(t, rows, p_family[rows], settings),
                reference_rate=_mean_estimate(t, rows, ref, settings) if others else None,
                difference=_mean_estimate(t, rows, p_family[rows] - ref, settings, null=0.0, test_seed=seed),
                reference_excludes_own_family=excludes_own,
            )
        )
    return results


def equal_opportunity_pairwise(
    records: Sequence[PairwiseRecord], settings: BiasOptions = DEFAULT_OPTIONS
) -> list[EqualOpportunity]:
    """Equal-opportunity gap of each judge on pairs with exactly one own-family answer.

    own: mean P(judge prefers the own-family answer) over pairs where humans preferred it;
    other: mean P(judge prefers the other answer) over pairs where humans preferred that one.
    The p-value permutes the own/other labels over records (records assumed exchangeable).

    Args:
        records: Pairwise records with `human_preferred`; without any, the result is empty.
        settings: Resampling settings.
    """
    t = pairwise_table(records)
    if np.all(np.isnan(t.human_a)):
        return []
    w = stats.item_weights(len(t.items), settings.n_bootstrap, settings.seed)
    results = []
    for j, judge in enumerate(t.judges):
        family = t.judge_families[j]
        rows = _own_rows(t, j)
        rows = rows[~np.isnan(t.human_a[rows])]
        p_own = _prob_of_family(t, family)[rows]
        human_own = np.where(t.human_a[rows] == 1.0, t.family_a[rows], t.family_b[rows]) == family
        values = np.where(human_own, p_own, 1.0 - p_own)  # P(judge agrees with the human)
        item = t.item[rows]
        b_own = stats.group_mean(w, item[human_own], values[human_own])
        b_other = stats.group_mean(w, item[~human_own], values[~human_own])
        p = stats.label_permutation_p(values, human_own, settings.n_permutations, settings.seed * 7919 + j)

        def est(boot: np.ndarray, mask: np.ndarray, p_value: float | None = None, item: np.ndarray = item) -> Estimate:
            return stats.estimate(
                boot,
                n=int(mask.sum()),
                n_items=int(np.unique(item[mask]).size),
                confidence=settings.ci_level,
                p_value=p_value,
            )

        results.append(
            EqualOpportunity(
                judge=judge,
                judge_family=family,
                own=est(b_own, human_own),
                other=est(b_other, ~human_own),
                gap=est(b_own - b_other, np.ones_like(human_own), p),
            )
        )
    return results


def _agreement(p: np.ndarray, human_a: np.ndarray) -> np.ndarray:
    """1 when the judgment p > 0.5 matches the human, 0 when not, 0.5 for a tie at 0.5."""
    return np.where(p == 0.5, 0.5, ((p > 0.5) == (human_a == 1.0)).astype(float))


def position_bias(records: Sequence[PairwiseRecord], settings: BiasOptions = DEFAULT_OPTIONS) -> list[PositionBias]:
    """Flip rate, probability given to the first position and per-order accuracy of each judge.

    Args:
        records: Pairwise records; unscored ones are skipped.
        settings: Resampling settings.

    Examples:
        >>> [(b.judge, b.first_position.value, b.flip_rate.value) for b in position_bias(records)]  # doctest: +SKIP
    """
    t = pairwise_table(records)
    results = []
    for j, judge in enumerate(t.judges):
        rows = np.nonzero(t.judge == j)[0]
        p1, p2 = t.p_a_first[rows], t.p_a_second[rows]
        flip = (np.sign(p1 - 0.5) != np.sign(p2 - 0.5)).astype(float)
        first = 0.5 * (p1 + 1.0 - p2)  # P(the answer shown first wins)
        seed = settings.seed * 7919 + j
        labelled = ~np.isnan(t.human_a[rows])
        acc: list[Estimate | None] = [None, None, None]
        if labelled.any():
            lab, h = rows[labelled], t.human_a[rows][labelled]
            acc = [
                _mean_estimate(t, lab, _agreement(p, h), settings)
                for p in (t.p_a_first[lab], t.p_a_second[lab], t.p_a[lab])
            ]
        results.append(
            PositionBias(
                judge=judge,
                flip_rate=_mean_estimate(t, rows, flip, settings),
                first_position=_mean_estimate(t, rows, first, settings, null=0.5, test_seed=seed),
                accuracy_a_first=acc[0],
                accuracy_a_second=acc[1],
                accuracy_combined=acc[2],
            )
        )
    return results


def pairwise_length_bias(
    records: Sequence[PairwiseRecord], settings: BiasOptions = DEFAULT_OPTIONS
) -> list[PairwiseLengthBias]:
    """P(judge prefers the longer answer), both orders averaged, tested against 0.5.

    This does not control for quality: if longer answers are better, a fair judge prefers them
    too. Compare judges with each other, or with human preferences, before calling it a bias.

    Args:
        records: Pairwise records with `length_a` and `length_b`; without any, the result is empty.
        settings: Resampling settings.
    """
    t = pairwise_table(records)
    known = ~np.isnan(t.length_a) & ~np.isnan(t.length_b) & (t.length_a != t.length_b)
    if not known.any():
        return []
    p_longer = np.where(t.length_a > t.length_b, t.p_a, 1.0 - t.p_a)  # (N,)
    results = []
    for j, judge in enumerate(t.judges):
        rows = np.nonzero((t.judge == j) & known)[0]
        results.append(
            PairwiseLengthBias(
                judge=judge,
                prefers_longer=_mean_estimate(
                    t, rows, p_longer[rows], settings, null=0.5, test_seed=settings.seed * 7919 + j
                ),
            )
        )
    return results
