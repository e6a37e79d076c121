"""Model-level preferences: a judge for its own responses, and for the other models of its family.

The family analyses (`pairwise`, `pointwise`) pool every generator of a judge's family. Here the
target is one generator: the judge itself, matched by name (self-preference), or another model of
its family (family preference: does one Qwen size favour the other?). The opponents are always
the generators of *other* families, so the two targets of a judge are measured against the same
field and a sibling never competes with its own family.

Pairwise, for judge J and target T, over J's pairs (T, X) with X of another family (Panickssery
et al. 2024, from the two answer labels' probabilities):

    rate = ½ [P(J prefers T | T shown first) + P(J prefers T | T shown second)]

tested against 0.5 by item sign flips. Because T may simply be better, the reference is the same
probability from the judges of neither family in the pair (their own families are not at stake),
and `difference` = rate − reference. Pointwise, the difference in differences of `pointwise` with
one generator in place of a family: per item, [s_J(T) − mean s_J(O)] − [s_K(T) − mean s_K(O)],
O the generators of neither J's nor K's family, averaged over the judges K of other families.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence

import numpy as np

import localjudge.stats as stats
from localjudge.bias.options import DEFAULT_OPTIONS, BiasOptions
from localjudge.bias.pairwise import _mean_estimate
from localjudge.bias.pointwise import _item_mean_estimate, _masked_mean, _nan_estimate
from localjudge.bias.records import PairwiseRecord, PointwiseRecord
from localjudge.bias.results import TargetDiD, TargetPreference, WinRateCell, WinRateMatrix
from localjudge.bias.tables import PairwiseTable, pairwise_table, pointwise_table


def judge_targets(judge: str, family: str, generator_families: dict[str, str]) -> list[tuple[str, str]]:
    """(target, relation) of a judge: itself if it is a generator, then its family's other generators, by name.

    Examples:
        >>> judge_targets("q-big", "qwen", {"q-big": "qwen", "q-small": "qwen", "s": "smollm"})
        [('q-big', 'self'), ('q-small', 'family')]
    """
    own = [(judge, "self")] if generator_families.get(judge) == family else []
    return own + [(g, "family") for g, f in sorted(generator_families.items()) if f == family and g != judge]


def _generator_families(t: PairwiseTable) -> dict[str, str]:
    pairs = zip([*t.generator_a, *t.generator_b], [*t.family_a, *t.family_b])
    return {str(g): str(f) for g, f in pairs}


def pairwise_targets(
    records: Sequence[PairwiseRecord], settings: BiasOptions = DEFAULT_OPTIONS, only: Collection[str] | None = None
) -> list[TargetPreference]:
    """Each judge's preference for itself and for its family's other models (see the module docstring).

    Args:
        records: Pairwise records (both orders); unscored ones are skipped.
        settings: Resampling settings.
        only: The judges to report on (every judge's records still serve as references); default all.

    Returns:
        One result per (judge, target) with at least one pair, judges sorted, self first.

    Examples:
        >>> [(p.judge, p.target, p.rate.value) for p in pairwise_targets(records)]  # doctest: +SKIP
    """
    t = pairwise_table(records)
    gen_family = _generator_families(t)
    fam_of_judge = np.array(t.judge_families, dtype=object)[t.judge]  # (N,)
    by_pair: defaultdict[int, list[int]] = defaultdict(list)
    for r in range(t.pair.size):
        by_pair[int(t.pair[r])].append(r)
    results = []
    for j, judge in enumerate(t.judges):
        if only is not None and judge not in only:
            continue
        family = t.judge_families[j]
        for k, (target, relation) in enumerate(judge_targets(judge, family, gen_family)):
            is_a = t.generator_a == target  # (N,)
            other_family = np.where(is_a, t.family_b, t.family_a)
            holds = is_a | (t.generator_b == target)
            rows = np.nonzero((t.judge == j) & holds & (other_family != family))[0]
            if not rows.size:
                continue
            first = np.where(is_a, t.p_a_first, 1.0 - t.p_a_second)[rows]  # P(T | T shown first)
            second = np.where(is_a, t.p_a_second, 1.0 - t.p_a_first)[rows]  # P(T | T shown second)
            p_target = np.where(is_a, t.p_a, 1.0 - t.p_a)  # (N,) any judge's P(T), orders averaged
            # the same pair from judges whose family is neither the target's nor the opponent's
            neutral = [
                [s for s in by_pair[int(t.pair[r])] if fam_of_judge[s] not in (family, other_family[r])] for r in rows
            ]
            ref = np.array([np.mean(p_target[s]) if s else np.nan for s in neutral])
            seed = settings.seed * 7919 + 101 * j + k
            has_ref = ~np.isnan(ref)
            rate = 0.5 * (first + second)
            results.append(
                TargetPreference(
                    judge=judge,
                    judge_family=family,
                    target=target,
                    relation=relation,  # type: ignore[arg-type]
                    shown_first=_mean_estimate(t, rows, first, settings),
                    shown_second=_mean_estimate(t, rows, second, settings),
                    rate=_mean_estimate(t, rows, rate, settings, null=0.5, test_seed=seed),
                    reference_rate=_mean_estimate(t, rows[has_ref], ref[has_ref], settings) if has_ref.any() else None,
                    difference=(
                        _mean_estimate(t, rows[has_ref], (rate - ref)[has_ref], settings, null=0.0, test_seed=seed + 7)
                        if has_ref.any()
                        else None
                    ),
                )
            )
    return results


def pointwise_targets(
    records: Sequence[PointwiseRecord], settings: BiasOptions = DEFAULT_OPTIONS, only: Collection[str] | None = None
) -> list[TargetDiD]:
    """Each judge's pointwise difference in differences for itself and its family's other models.

    Args:
        records: Pointwise records; unscored ones are skipped.
        settings: Resampling settings.
        only: The judges to report on (every judge's records still serve as controls); default all.

    Returns:
        One result per (judge, target), judges sorted; `did` is undefined without a judge of
        another family, or without generators outside both families.
    """
    t = pointwise_table(records)
    gen_fam = np.array(t.generator_families)  # (G,)
    index = {g: i for i, g in enumerate(t.generators)}
    w = stats.item_weights(len(t.items), settings.n_bootstrap, settings.seed)
    results = []
    for j, judge in enumerate(t.judges):
        if only is not None and judge not in only:
            continue
        family = t.judge_families[j]
        outside = gen_fam != family
        refs = [k for k, f in enumerate(t.judge_families) if f != family]
        for n, (target, relation) in enumerate(judge_targets(judge, family, dict(zip(t.generators, gen_fam)))):
            g = index[target]
            raw = t.score[j][:, g] - _masked_mean(t.score[j], outside)  # (I,)
            contrasts = []
            for k in refs:
                others = outside & (gen_fam != t.judge_families[k])
                if others.any():
                    cj = t.score[j][:, g] - _masked_mean(t.score[j], others)
                    ck = t.score[k][:, g] - _masked_mean(t.score[k], others)
                    contrasts.append(cj - ck)  # (I,)
            did = _nan_estimate()
            if contrasts:
                c = np.array(contrasts)  # (K, I)
                count = np.sum(~np.isnan(c), axis=0)
                d = np.where(count > 0, np.nansum(c, axis=0) / np.maximum(count, 1), np.nan)
                did = _item_mean_estimate(d, w, settings, test_seed=settings.seed * 7919 + 101 * j + n + 3)
            results.append(
                TargetDiD(
                    judge=judge,
                    judge_family=family,
                    target=target,
                    relation=relation,  # type: ignore[arg-type]
                    raw_gap=_item_mean_estimate(raw, w, settings) if outside.any() else _nan_estimate(),
                    did=did,
                    reference_judges=[t.judges[k] for k in refs],
                )
            )
    return results


def win_rates(records: Sequence[PairwiseRecord], settings: BiasOptions = DEFAULT_OPTIONS) -> WinRateMatrix:
    """Judge × generator mean P(judge prefers the generator) over the pairs that hold it, both orders averaged.

    Args:
        records: Pairwise records; unscored ones are skipped.
        settings: Resampling settings (intervals over items).

    Examples:
        >>> m = win_rates(records)  # doctest: +SKIP
        >>> [(c.judge, c.generator, c.rate.value) for c in m.cells]  # doctest: +SKIP
    """
    t = pairwise_table(records)
    gen_family = _generator_families(t)
    generators = sorted(gen_family)
    w = stats.item_weights(len(t.items), settings.n_bootstrap, settings.seed)
    cells = []
    for j, judge in enumerate(t.judges):
        for g in generators:
            is_a = t.generator_a == g
            rows = np.nonzero((t.judge == j) & (is_a | (t.generator_b == g)))[0]
            values = np.where(is_a, t.p_a, 1.0 - t.p_a)[rows]
            boot = stats.group_mean(w, t.item[rows], values)
            n_items = int(np.unique(t.item[rows]).size)
            cells.append(
                WinRateCell(
                    judge=judge,
                    generator=g,
                    rate=stats.estimate(boot, n=int(rows.size), n_items=n_items, confidence=settings.ci_level),
                )
            )
    return WinRateMatrix(
        judges=list(t.judges),
        judge_families=list(t.judge_families),
        generators=generators,
        generator_families=[gen_family[g] for g in generators],
        cells=cells,
    )
