"""Shared-prefix planning: order prompts so that those sharing a long prefix share a batch.

In a G-Eval run every prompt of a metric starts with the same instructions, criteria, steps and
rubric; in SummEval-style data the 16 summaries of an article also share the article. A batch
whose rows share a prefix computes that prefix once (KV cache) and only the suffixes per row.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from localjudge.engine.batching import BatchPlan

MIN_PREFIX = 16
"""Shorter shared prefixes are not worth a separate prefill."""
MIN_EXTENSION = 128
"""A lone row runs after a new prefix (`PrefixStore`) only when it is this many tokens longer than a kept one:
rows that share an article share it from the first, and a few words more are not worth a prefill."""


def common_prefix_len(rows: Sequence[Sequence[int]]) -> int:
    """Length of the longest prefix all rows share."""
    first = rows[0]
    n = min(len(r) for r in rows)
    for row in rows[1:]:
        k = 0
        limit = min(n, len(row))
        while k < limit and row[k] == first[k]:
            k += 1
        n = k
        if n == 0:
            break
    return n


def plan_prefix_batches(
    rows: Sequence[Sequence[int]], token_budget: int, extra: int, max_batch: int, grid: int = 1
) -> BatchPlan:
    """Batches for prefix reuse: rows sharing a long prefix together, the cheapest split found.

    Rows are sorted by token ids so that rows sharing a long prefix are neighbours. A group of rows
    is either packed as it is (by length, under the budget, its common prefix computed once per
    batch) or split into clusters whose rows share more than the group's common prefix (an
    article's summaries within a metric's prompts), each planned the same way, plus the rows
    that share nothing more; whichever computes fewer tokens is kept. One article's summaries
    thus share one batch and one prefill, and many articles' summaries one batch per article.

    Args:
        rows: token ids of every prompt.
        token_budget: tokens computed per batch.
        extra: tokens appended to every row (the score tree, or the tokens to generate).
        max_batch: most rows per batch.
        grid: cached prefixes are cut to a multiple of it (`shared_prefix_len`).
    """
    order = sorted(range(len(rows)), key=lambda i: tuple(rows[i]))
    batches = _plan_group(order, rows, token_budget, extra, max_batch, grid)
    return BatchPlan(tuple(batches), *_token_counts(batches, rows, extra, grid))


def shared_prefix_len(rows: Sequence[Sequence[int]], grid: int = 1) -> int:
    """Tokens a batch of rows computes once as a cached prefix (0 when too short to be worth it).

    The prefix is cut to a multiple of `grid`, so that the row tokens after it keep the key slots
    and attention blocks they have without a cache (`engine.runner`).

    Examples:
        >>> shared_prefix_len([list(range(40)) + [1], list(range(40)) + [2]], grid=16)
        32
    """
    if len(rows) < 2:
        return 0
    # at least one token per row stays after the prefix: the root reads its logits
    return _cut(min(common_prefix_len(rows), min(len(r) for r in rows) - 1), grid)


def _cut(shared: int, grid: int) -> int:
    shared -= shared % grid
    return shared if shared >= MIN_PREFIX else 0


def _shared(batch: Sequence[int], rows: Sequence[Sequence[int]], grid: int) -> int:
    return shared_prefix_len([rows[j] for j in batch], grid)


def _token_counts(
    batches: Sequence[Sequence[int]], rows: Sequence[Sequence[int]], extra: int, grid: int = 1
) -> tuple[int, int]:
    """Real and computed tokens of a plan: suffixes (unpadded, padded), each prefix once per run of equal ones."""
    real, computed, last = 0, 0, None
    for batch in batches:
        shared = _shared(batch, rows, grid)
        key = tuple(rows[batch[0]][:shared]) if shared else None
        if key is not None and key != last:  # backends keep the latest prefix cache for the next batch
            real += shared
            computed += shared
        last = key
        real += sum(len(rows[j]) - shared + extra for j in batch)
        computed += (max(len(rows[j]) for j in batch) - shared + extra) * len(batch)
    return real, computed


def _pack(group: list[int], rows, token_budget: int, extra: int, max_batch: int, grid: int) -> list[tuple[int, ...]]:
    """A group's rows, longest first, in batches under the budget and the row limit."""
    group = sorted(group, key=lambda i: (-len(rows[i]), i))
    batches, start = [], 0
    while start < len(group):
        first = rows[group[start]]
        batch, common, shortest = [group[start]], len(first), len(first)
        for i in group[start + 1 :]:
            # the common prefix of a set is the least of each row's with the first row
            common = min(common, common_prefix_len([first, rows[i]]))
            shortest = min(shortest, len(rows[i]))
            shared = _cut(min(common, shortest - 1), grid)
            width = len(first) - shared + extra  # the first row is the longest
            if len(batch) + 1 > max_batch or shared + width * (len(batch) + 1) > token_budget:
                break
            batch.append(i)
        batches.append(tuple(batch))
        start += len(batch)
    return batches


def _plan_group(
    order: list[int], rows, token_budget: int, extra: int, max_batch: int, grid: int
) -> list[tuple[int, ...]]:
    """Batches of rows (`order` sorted by token ids): packed as is, or split by longer prefixes."""
    whole = _pack(order, rows, token_budget, extra, max_batch, grid)
    if len(order) < 2:
        return whole
    base = common_prefix_len([rows[i] for i in order])
    clusters: list[list[int]] = []
    loose: list[int] = []
    current = [order[0]]
    for prev, i in pairwise(order):
        if common_prefix_len([rows[prev], rows[i]]) >= base + MIN_PREFIX:
            current.append(i)
        else:
            (clusters.append(current) if len(current) > 1 else loose.extend(current))
            current = [i]
    (clusters.append(current) if len(current) > 1 else loose.extend(current))
    if not clusters:
        return whole
    split = [b for c in clusters for b in _plan_group(c, rows, token_budget, extra, max_batch, grid)]
    if loose:
        split += _pack(loose, rows, token_budget, extra, max_batch, grid)
    return min(whole, split, key=lambda plan: _token_counts(plan, rows, extra, grid)[1])


def expand_cache(cache, batch: int):
    """A fresh cache holding the prefix's keys and values for every row (views, no copies)."""
    from transformers import DynamicCache

    out = DynamicCache()
    for i, layer in enumerate(cache.layers):
        out.update(layer.keys.expand(batch, -1, -1, -1), layer.values.expand(batch, -1, -1, -1), i)
    return out


class PrefixStore:
    """KV caches of shared prefixes, by their token ids.

    Within an engine call the latest prefix is kept for the batches after it (`engine.loop`). A
    runner whose store keeps `keep` > 0 also keeps the `keep` latest across calls, and lets a row
    that comes alone run after the prefix it shares with a recent row: a server's requests come one
    or a few at a time, and the summaries of one article then compute the article once, as they do
    in one offline call. The bits do not change: a row's results are the same after any cached
    prefix cut to the grid as computed whole (`engine.runner`).
    """

    def __init__(self, keep: int = 0, recent: int = 16) -> None:
        self.keep = keep
        """Prefixes kept between calls (0: none; the latest is kept within a call)."""
        self.caches: OrderedDict[tuple[int, ...], Any] = OrderedDict()
        self.recent: deque[np.ndarray] = deque(maxlen=recent)
        """Token ids of rows that came alone, for the prefix a later lone row shares with one of them."""

    def span(self, rows: Sequence[Sequence[int]], grid: int) -> int:
        """Tokens of the cached prefix a batch of rows runs after (0: none)."""
        shared = shared_prefix_len(rows, grid)
        if not self.keep or len(rows) > 1:  # several rows: their common prefix is the longest possible
            return shared
        row = np.asarray(rows[0])
        # negative ids stand for a call's own tokens (`engine.likelihood`'s placeholders): never shared
        fake = np.flatnonzero(row < 0)
        real = min(int(fake[0]) if len(fake) else len(row), len(row) - 1)
        for key in self.caches:  # a kept prefix it starts with
            if shared < len(key) <= real and tuple(rows[0][: len(key)]) == key:
                shared = len(key)
        kept = shared
        for past in self.recent:  # or a longer one it shares with a recent row, worth a prefill
            n = min(real, len(past))
            same = row[:n] == past[:n]
            common = n if same.all() else int(np.argmin(same))
            longer = _cut(common, grid)
            if longer >= kept + MIN_EXTENSION:
                shared = max(shared, longer)
        self.recent.append(row)
        return shared

    def get(self, prefix: Sequence[int], prefill: Callable[[list[int]], Any]) -> Any:
        """The KV cache of `prefix`, computed by `prefill` unless kept."""
        key = tuple(prefix)
        if key in self.caches:
            self.caches.move_to_end(key)
        else:
            self.caches[key] = prefill(list(key))
            self.trim(max(1, self.keep))
        return self.caches[key]

    def trim(self, keep: int) -> None:
        """Drops all but the `keep` latest prefixes."""
        while len(self.caches) > keep:
            self.caches.popitem(last=False)
