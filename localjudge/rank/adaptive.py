"""Which comparisons to make next: a connected start, then the pairs whose order is least certain.

A group of n outputs with a budget of b comparisons per output gets ⌈b·n/2⌉ comparisons in all
(each compares two outputs), at most every pair once. The first round is a cycle through the
outputs in a seeded random order, so every output is compared twice and the comparison graph is
connected (a path when the budget is smaller than the cycle). Each later round fits the
Bradley–Terry model to what has been read and takes the unread pairs with the highest
probability of being in the wrong order under the fit's Laplace approximation
(`intervals.misorder_probability`), greedily, each output at most once per round: the
uncertainty-guided choice of PairS, where adjacent outputs with overlapping intervals are the
likeliest pairs. A round's pairs are judged together, so the judge sees batches, not single
prompts.

Pure maths: the caller judges the pairs and hands back what it read.

Examples:
    >>> pair_budget(16, 4)
    32
    >>> first_round(4, 32, seed=0)
    [(0, 1), (0, 2), (2, 3), (1, 3)]
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence

import numpy as np

from localjudge.rank.bradley_terry import fit_strengths
from localjudge.rank.intervals import misorder_probability

Pair = tuple[int, int]
"""Two items of a group, by index, the smaller first."""


def pair_budget(n: int, per_output: int) -> int:
    """Comparisons a group of n outputs gets: ⌈per_output·n/2⌉, at most every pair once."""
    return min(n * (n - 1) // 2, math.ceil(per_output * n / 2))


def group_seed(group: str, seed: int = 0) -> int:
    """A seed of its own for each group, stable across runs and Python processes."""
    return zlib.crc32(group.encode("utf-8")) ^ seed


def _pair(a: int, b: int) -> Pair:
    return (a, b) if a < b else (b, a)


def first_round(n: int, budget: int, seed: int) -> list[Pair]:
    """A cycle through the n items in a seeded random order, cut to `budget` pairs (a path then)."""
    if n < 2:
        return []
    order = np.random.default_rng([seed, 0xC1C]).permutation(n).tolist()
    cycle = [_pair(order[k], order[(k + 1) % n]) for k in range(n if n > 2 else 1)]
    return cycle[:budget]


def next_round(
    n: int,
    budget: int,
    pairs: Sequence[Pair],
    observed: Sequence[Pair],
    y: Sequence[float],
    weights: Sequence[float],
    seed: int,
) -> list[Pair]:
    """The next round of pairs to compare in a group, [] when its budget is spent.

    Args:
        n: items in the group.
        budget: comparisons the group may make in all (`pair_budget`).
        pairs: every pair compared so far (read or not: an unscored comparison is not asked again).
        observed: (m,) the pairs with a reading, `y` and `weights` beside them.
        y: (m,) P(smaller index better) of each read pair.
        weights: (m,) weight of each reading (presentation orders averaged).
        seed: the group's seed (`group_seed`).
    """
    done = {_pair(*p) for p in pairs}
    left = budget - len(done)
    if left <= 0 or n < 2:
        return []
    if not done:
        return first_round(n, budget, seed)
    fit = fit_strengths(n, np.asarray(observed, dtype=np.int64).reshape(-1, 2), np.asarray(y), np.asarray(weights))
    # the order of uncertainty among pairs, on the information alone: the dispersion scales every
    # pair's alike, and a near-exact judge's tiny one would round every probability to 0
    wrong = misorder_probability(fit, np.linalg.inv(fit.information))  # (n, n)
    count = np.zeros(n, dtype=int)  # comparisons each item has had
    for a, b in done:
        count[a] += 1
        count[b] += 1
    candidates = [(i, j) for i in range(n) for j in range(i + 1, n) if (i, j) not in done]
    # most uncertain first; then the items compared least; then a fixed order
    candidates.sort(key=lambda p: (-round(float(wrong[p]), 12), count[p[0]] + count[p[1]], p))
    chosen: list[Pair] = []
    busy: set[int] = set()
    for i, j in candidates:
        if len(chosen) == left:
            break
        if i in busy or j in busy:
            continue
        chosen.append((i, j))
        busy |= {i, j}
    return chosen
