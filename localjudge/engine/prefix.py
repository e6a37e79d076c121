"""Shared-prefix planning: order prompts so that those sharing a long prefix share a batch.

In a G-Eval run every prompt of a metric starts with the same instructions, criteria, steps and
rubric; in SummEval-style data the 16 summaries of an article also share the article. A batch
whose rows share a prefix computes that prefix once (KV cache) and only the suffixes per row.
"""

from __future__ import annotations

from collections.abc import Sequence

from localjudge.engine.batching import BatchPlan

MIN_PREFIX = 16
"""Shorter shared prefixes are not worth a separate prefill."""


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


def plan_prefix_batches(rows: Sequence[Sequence[int]], token_budget: int, extra: int, max_batch: int) -> BatchPlan:
    """Batches for prefix reuse: clusters of rows sharing more than the common prefix, by length.

    Rows are sorted by token ids so that rows sharing a long prefix are neighbours; neighbours
    whose shared prefix extends beyond what all rows share form a cluster (an article's
    summaries). Clusters are batched on their own, the remaining rows together, each sorted by
    length. The budget counts the suffix tokens of every row plus the shared prefix once.

    Args:
        rows: token ids of every prompt.
        token_budget: tokens computed per batch.
        extra: tokens appended to every row (the score tree).
        max_batch: most rows per batch.
    """
    order = sorted(range(len(rows)), key=lambda i: rows[i])
    base = common_prefix_len(rows)
    clusters: list[list[int]] = []
    loose: list[int] = []
    current: list[int] = [order[0]]
    for prev, i in zip(order, order[1:]):
        if common_prefix_len([rows[prev], rows[i]]) >= base + MIN_PREFIX:
            current.append(i)
        else:
            (clusters.append(current) if len(current) > 1 else loose.extend(current))
            current = [i]
    (clusters.append(current) if len(current) > 1 else loose.extend(current))
    if loose:
        clusters.append(loose)
    batches, real, computed = [], 0, 0
    for cluster in clusters:
        cluster.sort(key=lambda i: (-len(rows[i]), i))
        start = 0
        while start < len(cluster):
            batch = [cluster[start]]
            for i in cluster[start + 1 :]:
                trial = batch + [i]
                shared = common_prefix_len([rows[j] for j in trial])
                width = max(len(rows[j]) for j in trial) - shared + extra
                if len(trial) > max_batch or shared + width * len(trial) > token_budget:
                    break
                batch = trial
            shared = common_prefix_len([rows[j] for j in batch]) if len(batch) > 1 else 0
            computed += shared + (max(len(rows[j]) for j in batch) - shared + extra) * len(batch)
            real += shared + sum(len(rows[j]) - shared + extra for j in batch)
            batches.append(tuple(batch))
            start += len(batch)
    return BatchPlan(tuple(batches), real, computed)
