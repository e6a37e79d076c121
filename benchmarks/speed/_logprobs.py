"""Pure helpers of `llamacpp.py`: log-probabilities from raw logits, and two engines' log-probs compared.

Arrays in, numbers out: no model, no llama.cpp, no torch, so `test_llamacpp_bench.py` checks them
on hand-built logits.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def target_logprobs(logits: np.ndarray, targets: Sequence[int]) -> np.ndarray:
    """log-softmax in float64 of each row of `logits`, read at that row's target token.

    Args:
        logits: (K, V) raw scores, any float dtype (llama.cpp gives float32).
        targets: (K,) token id read in each row.

    Returns:
        (K,) float64 log-probabilities.

    Examples:
        >>> target_logprobs(np.log(np.array([[0.25, 0.75]])), [1]).round(6).tolist()
        [-0.287682]
    """
    x = np.asarray(logits, dtype=np.float64)  # (K, V)
    top = x.max(axis=1, keepdims=True)  # (K, 1): exp cannot overflow
    lse = top[:, 0] + np.log(np.exp(x - top).sum(axis=1))  # (K,)
    return x[np.arange(len(x)), np.asarray(targets)] - lse


def common_prefix_len(rows: Sequence[Sequence[int]]) -> int:
    """Number of leading tokens that every row shares.

    Examples:
        >>> common_prefix_len([[1, 2, 3], [1, 2, 4], [1, 2]])
        2
    """
    if not rows:
        return 0
    n = min(len(r) for r in rows)
    for i in range(n):
        if any(r[i] != rows[0][i] for r in rows):
            return i
    return n


def compare_logprobs(ref: Sequence[np.ndarray], other: Sequence[np.ndarray]) -> dict:
    """How far `other`'s per-token log-probabilities lie from `ref`'s, for the same tokens of the same items.

    Args:
        ref: one (n_i,) array per item (e.g. localjudge fp32).
        other: the same items' arrays from another engine or dtype, same shapes.

    Returns:
        tokens; max and mean |Δ| over all tokens; max |Δ| of an item's mean log-probability; the
        Pearson correlation of per-item mean log-probabilities (None under two items or no spread).
    """
    if len(ref) != len(other):
        raise ValueError(f"{len(ref)} reference items but {len(other)} compared")
    for i, (a, b) in enumerate(zip(ref, other)):
        if np.shape(a) != np.shape(b):
            raise ValueError(f"item {i}: {np.shape(a)} reference log-probs but {np.shape(b)} compared")
    live = [(np.asarray(a, float), np.asarray(b, float)) for a, b in zip(ref, other) if len(a)]
    if not live:
        raise ValueError("no item has a continuation token to compare")
    delta = np.abs(np.concatenate([a - b for a, b in live]))  # (tokens,)
    mean_a = np.array([a.mean() for a, _ in live])  # (items,)
    mean_b = np.array([b.mean() for _, b in live])
    spread = len(live) > 1 and mean_a.std() > 0 and mean_b.std() > 0
    return {
        "tokens": int(delta.size),
        "items": len(live),
        "max_abs": float(delta.max()),
        "mean_abs": float(delta.mean()),
        "max_abs_item_mean": float(np.abs(mean_a - mean_b).max()),
        "item_mean_pearson": float(np.corrcoef(mean_a, mean_b)[0, 1]) if spread else None,
    }


def tokenisation_agreement(ours: Sequence[Sequence[int]], theirs: Sequence[Sequence[int]]) -> dict:
    """How many texts two tokenizers split into the very same ids, and where the first disagreement is.

    Returns:
        texts, identical (count), and for the first text that differs: its index, the first
        differing position and both lengths (None when all agree).
    """
    if len(ours) != len(theirs):
        raise ValueError(f"{len(ours)} texts tokenised by one side but {len(theirs)} by the other")
    same = [list(a) == list(b) for a, b in zip(ours, theirs)]
    first = next((i for i, s in enumerate(same) if not s), None)
    where = None
    if first is not None:
        a, b = list(ours[first]), list(theirs[first])
        at = common_prefix_len([a, b])
        where = {"item": first, "position": at, "lengths": [len(a), len(b)]}
    return {"texts": len(same), "identical": sum(same), "first_difference": where}
