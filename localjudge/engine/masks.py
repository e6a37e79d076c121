"""Attention masks for a left-padded batch of prompts, each followed by the same token tree.

Layout of one row (Q = K = P + T):  [pad ... pad | prompt tokens | tree nodes 1..T]
- prompt tokens attend causally to the real prompt tokens before them;
- tree node n attends to the whole real prompt and to its own ancestors (itself included), and
  sits at position len(prompt) - 1 + depth(n), exactly where it would be if it followed the prompt
  alone;
- pad queries attend only to themselves, so no row is fully masked (NaN-free softmax).
A sliding-window layer additionally hides keys whose position is `window` or more behind.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

import numpy as np
import torch

from localjudge.scoring.trie import TokenTree


class Padded(NamedTuple):
    """A batch of token rows padded to one width."""

    ids: torch.Tensor
    """(B, W) long token ids, `pad_id` at pads."""
    real: torch.Tensor
    """(B, W) bool, False at pads."""


def pad_rows(rows: Sequence[Sequence[int]], pad_id: int, side: Literal["left", "right"] = "left") -> Padded:
    """Rows of token ids padded to the longest: on the left [pad … | row] or the right [row | pad …].

    Examples:
        >>> pad_rows([[5, 6], [7]], pad_id=0).ids.tolist()
        [[5, 6], [0, 7]]
        >>> pad_rows([[5, 6], [7]], pad_id=0, side="right").real.tolist()
        [[True, True], [True, False]]
    """
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)  # (B, W)
    for b, r in enumerate(rows):
        if side == "left":
            ids[b, width - len(r) :] = torch.tensor(r, dtype=torch.long)
        else:
            ids[b, : len(r)] = torch.tensor(r, dtype=torch.long)
    lens = torch.tensor([len(r) for r in rows]).unsqueeze(1)  # (B, 1)
    slot = torch.arange(width).unsqueeze(0)  # (1, W)
    real = slot >= width - lens if side == "left" else slot < lens  # (B, W)
    return Padded(ids, real)


def tree_ancestry(tree: TokenTree) -> np.ndarray:
    """(T, T) bool: [i, j] is True when tree node j+1 is node i+1 or one of its ancestors."""
    t = tree.n_nodes - 1
    anc = np.zeros((t, t), dtype=bool)
    for node in range(1, tree.n_nodes):
        for a in tree.ancestors(node):
            anc[node - 1, a - 1] = True
    return anc


def layout(lengths: list[int], width: int, tree: TokenTree) -> tuple[torch.Tensor, torch.Tensor]:
    """Positions and key validity of the packed batch.

    Args:
        lengths: real prompt length of each row (B,).
        width: padded prompt width P ≥ max(lengths).
        tree: the token tree appended to every row.

    Returns:
        positions: (B, P + T) long position id of every slot (0 for pads).
        real: (B, P + T) bool, False at pads.
    """
    lens = torch.tensor(lengths).unsqueeze(1)  # (B, 1)
    slot = torch.arange(width).unsqueeze(0)  # (1, P)
    start = width - lens  # (B, 1) first real slot
    prompt_pos = (slot - start).clamp(min=0)  # (B, P)
    depths = torch.from_numpy(tree.depths[1:])  # (T,)
    tree_pos = lens - 1 + depths.unsqueeze(0)  # (B, T)
    positions = torch.cat([prompt_pos, tree_pos], dim=1)
    real = torch.cat([slot >= start, torch.ones_like(tree_pos, dtype=torch.bool)], dim=1)
    return positions, real


def tree_mask(
    lengths: list[int],
    width: int,
    ancestry: np.ndarray,
    positions: torch.Tensor,
    real: torch.Tensor,
    window: int | None = None,
    shared: int = 0,
) -> torch.Tensor:
    """Boolean attention mask (B, 1, Q, K), True where a query may attend to a key.

    With `shared` > 0 the first `shared` keys are a cached prefix seen by every query, and
    `positions`/`real` cover the K = shared + Q keys; queries are the last Q slots.
    """
    _, k = positions.shape
    t = ancestry.shape[0]
    idx = torch.arange(k)
    causal = idx.unsqueeze(1) >= idx.unsqueeze(0)  # (K, K), prompt part
    tree_start = shared + width
    causal[tree_start:, tree_start:] = torch.from_numpy(ancestry)  # tree part: ancestors only
    mask = causal.unsqueeze(0) & real.unsqueeze(1)  # (B, K, K): hide pad keys
    if window is not None:
        mask &= (positions.unsqueeze(2) - positions.unsqueeze(1)) < window
    mask |= torch.eye(k, dtype=torch.bool).unsqueeze(0)  # pad queries see themselves
    assert t == k - tree_start
    return mask[:, shared:].unsqueeze(1)  # (B, 1, Q, K)


def additive(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Converts a boolean mask to the additive float form that eager attention expects."""
    out = torch.zeros(mask.shape, dtype=dtype)
    return out.masked_fill_(~mask, torch.finfo(dtype).min)
