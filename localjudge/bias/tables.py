"""Dense arrays built from bias records, after checking that the records agree with each other.

Pointwise records become a (judge, item, generator) cube with NaN for missing or unscored
judgments; pairwise records become parallel per-record arrays. Both keep the unscored counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from localjudge.bias.records import PairwiseRecord, PointwiseRecord
from localjudge.errors import DataError, clip


def _family_map(pairs: list[tuple[str, str]], kind: str) -> dict[str, str]:
    """Maps each name to its family, refusing a name listed under two families."""
    families: dict[str, str] = {}
    for name, family in pairs:
        if families.setdefault(name, family) != family:
            raise DataError(
                f"{kind} {clip(name)} is tagged with families {clip(families[name])} and {clip(family)}; "
                "fix the records so each model has one family"
            )
    return families


@dataclass(frozen=True)
class PointwiseTable:
    """Pointwise judgments as a dense cube; NaN marks a missing or unscored judgment."""

    items: tuple[str, ...]
    judges: tuple[str, ...]
    judge_families: tuple[str, ...]
    generators: tuple[str, ...]
    generator_families: tuple[str, ...]
    score: np.ndarray  # (J, I, G)
    length: np.ndarray  # (J, I, G) response length as each judge's record states it
    logppl: np.ndarray  # (J, I, G) judge_logppl
    human: np.ndarray  # (I, G) human_score of the response
    n_unscored: np.ndarray  # (J, G) records with score None

    @property
    def families(self) -> tuple[str, ...]:
        """Distinct generator families, sorted."""
        return tuple(sorted(set(self.generator_families)))


def pointwise_table(records: Sequence[PointwiseRecord]) -> PointwiseTable:
    """Checks pointwise records and arranges them as a `PointwiseTable`.

    Raises:
        DataError: No records, a duplicated (judge, item, generator), a model with two
            families, or one response with two different human scores.
    """
    if not records:
        raise DataError("no pointwise records to analyse; run the bias scoring step first")
    judge_fam = _family_map([(r.judge, r.judge_family) for r in records], "judge")
    gen_fam = _family_map([(r.generator, r.generator_family) for r in records], "generator")
    items = tuple(sorted({r.item_id for r in records}))
    judges, generators = tuple(sorted(judge_fam)), tuple(sorted(gen_fam))
    ii = {k: i for i, k in enumerate(items)}
    jj = {k: i for i, k in enumerate(judges)}
    gg = {k: i for i, k in enumerate(generators)}
    shape = (len(judges), len(items), len(generators))
    score, length, logppl = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
    seen = np.zeros(shape, dtype=bool)
    human = np.full(shape[1:], np.nan)
    n_unscored = np.zeros((shape[0], shape[2]), dtype=int)
    for r in records:
        j, i, g = jj[r.judge], ii[r.item_id], gg[r.generator]
        if seen[j, i, g]:
            raise DataError(
                f"judge {clip(r.judge)} scored generator {clip(r.generator)} on item {clip(r.item_id)} "
                "twice; keep one record per (judge, item, generator)"
            )
        seen[j, i, g] = True
        if r.score is None:
            n_unscored[j, g] += 1
        else:
            score[j, i, g] = r.score
        length[j, i, g] = r.response_length
        if r.judge_logppl is not None:
            logppl[j, i, g] = r.judge_logppl
        if r.human_score is not None:
            if not np.isnan(human[i, g]) and abs(human[i, g] - r.human_score) > 1e-9:
                raise DataError(
                    f"item {clip(r.item_id)}, generator {clip(r.generator)} has human scores "
                    f"{human[i, g]} and {r.human_score}; give each response one human score"
                )
            human[i, g] = r.human_score
    return PointwiseTable(
        items=items,
        judges=judges,
        judge_families=tuple(judge_fam[j] for j in judges),
        generators=generators,
        generator_families=tuple(gen_fam[g] for g in generators),
        score=score,
        length=length,
        logppl=logppl,
        human=human,
        n_unscored=n_unscored,
    )


@dataclass(frozen=True)
class PairwiseTable:
    """Scored pairwise judgments as parallel arrays, one entry per record."""

    items: tuple[str, ...]
    judges: tuple[str, ...]
    judge_families: tuple[str, ...]
    item: np.ndarray  # (N,) item index
    judge: np.ndarray  # (N,) judge index
    pair: np.ndarray  # (N,) index of the unordered (item, {generator_a, generator_b})
    generator_a: np.ndarray  # (N,) str
    generator_b: np.ndarray  # (N,) str
    family_a: np.ndarray  # (N,) str
    family_b: np.ndarray  # (N,) str
    p_a_first: np.ndarray  # (N,)
    p_a_second: np.ndarray  # (N,)
    human_a: np.ndarray  # (N,) 1.0 when a human preferred A, 0.0 for B, NaN unlabelled
    length_a: np.ndarray  # (N,) NaN when unknown
    length_b: np.ndarray  # (N,)
    n_records: int
    unscored_by_judge: dict[str, int]

    @property
    def p_a(self) -> np.ndarray:
        """(N,) P(judge prefers A) averaged over both orders."""
        return 0.5 * (self.p_a_first + self.p_a_second)


def pairwise_table(records: Sequence[PairwiseRecord]) -> PairwiseTable:
    """Checks pairwise records and arranges the scored ones as a `PairwiseTable`.

    Raises:
        DataError: No records, a pair judged twice by one judge, or a model with two families.
    """
    if not records:
        raise DataError("no pairwise records to analyse; run the bias scoring step first")
    judge_fam = _family_map([(r.judge, r.judge_family) for r in records], "judge")
    _family_map(
        [(r.generator_a, r.family_a) for r in records] + [(r.generator_b, r.family_b) for r in records],
        "generator",
    )
    items = tuple(sorted({r.item_id for r in records}))
    judges = tuple(sorted(judge_fam))
    ii = {k: i for i, k in enumerate(items)}
    jj = {k: i for i, k in enumerate(judges)}
    seen: set[tuple[str, str, frozenset[str]]] = set()
    pairs: dict[tuple[str, frozenset[str]], int] = {}
    unscored: Counter[str] = Counter()
    rows: list[PairwiseRecord] = []
    for r in records:
        key = (r.item_id, frozenset((r.generator_a, r.generator_b)))
        if (r.judge, *key) in seen:
            raise DataError(
                f"judge {clip(r.judge)} compared {clip(r.generator_a)} and {clip(r.generator_b)} on item "
                f"{clip(r.item_id)} twice; keep one record per pair (it holds both orders)"
            )
        seen.add((r.judge, *key))
        if r.p_a_first is None or r.p_a_second is None:
            unscored[r.judge] += 1  # one order unscored leaves the record unusable
            continue
        pairs.setdefault(key, len(pairs))
        rows.append(r)

    def col(values: list, dtype=float) -> np.ndarray:
        return np.array(values, dtype=dtype)

    def opt(values: list[float | None] | list[int | None]) -> np.ndarray:
        return col([np.nan if v is None else v for v in values])

    return PairwiseTable(
        items=items,
        judges=judges,
        judge_families=tuple(judge_fam[j] for j in judges),
        item=col([ii[r.item_id] for r in rows], int),
        judge=col([jj[r.judge] for r in rows], int),
        pair=col([pairs[(r.item_id, frozenset((r.generator_a, r.generator_b)))] for r in rows], int),
        generator_a=col([r.generator_a for r in rows], object),
        generator_b=col([r.generator_b for r in rows], object),
        family_a=col([r.family_a for r in rows], object),
        family_b=col([r.family_b for r in rows], object),
        p_a_first=col([r.p_a_first for r in rows]),
        p_a_second=col([r.p_a_second for r in rows]),
        human_a=opt([None if r.human_preferred is None else float(r.human_preferred == "a") for r in rows]),
        length_a=opt([r.length_a for r in rows]),
        length_b=opt([r.length_b for r in rows]),
        n_records=len(records),
        unscored_by_judge={j: unscored[j] for j in judges},
    )
