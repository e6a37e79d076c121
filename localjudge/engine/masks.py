"""Attention masks of the stock engine: a right-padded batch of rows, each followed by the same tail.

Layout of one row's keys (K = S + W + T):  [prefix 0..S-1 | row tokens | pad ... pad | tail 1..T]
- the prefix is a KV cache every row shares; row tokens attend causally to the prefix and to the
  real row tokens before them;
- tail token n (a score-tree node) attends to the prefix, the whole real row and its own
  ancestors (itself included), and sits at position S + len(row) - 1 + depth(n), exactly where it
  would be if it followed the row alone;
- pad keys are hidden; a pad query sees at least itself, so no row is fully masked (NaN-free).
A sliding-window layer additionally hides keys whose position is `window` or more behind.
The batch-invariant engine packs rows instead and plans its masks per attention block
(`engine.packing`).
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


def pad_rows(
    rows: Sequence[Sequence[int]], pad_id: int, side: Literal["left", "right"] = "left", width: int | None = None
) -> Padded:
    """Rows of token ids padded to `width` (default the longest): left [pad … | row] or right [row | pad …].

    Examples:
        >>> pad_rows([[5, 6], [7]], pad_id=0).ids.tolist()
        [[5, 6], [0, 7]]
        >>> pad_rows([[5, 6], [7]], pad_id=0, side="right").real.tolist()
        [[True, True], [True, False]]
    """
    width = max(len(r) for r in rows) if width is None else width
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


def layout(
    lengths: Sequence[int], width: int, depths: np.ndarray, shared: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Positions and validity of every key slot of a right-padded batch.

    Args:
        lengths: real length of each row after the prefix (B,).
        width: padded row width W ≥ max(lengths).
        depths: (T,) depth of each tail token below its row's last token (empty: no tail).
        shared: length S of a cached prefix before every row.

    Returns:
        positions: (B, S + W + T) long position id of every key slot.
        real: (B, S + W + T) bool, False at pads.

    Examples:
        >>> pos, real = layout([2, 1], 3, np.array([1]), shared=1)
        >>> pos.tolist(), real.tolist()
        ([[0, 1, 2, 3, 3], [0, 1, 2, 3, 2]], [[True, True, True, False, True], [True, True, False, False, True]])
    """
    b = len(lengths)
    lens = torch.tensor(list(lengths)).unsqueeze(1)  # (B, 1)
    slot = torch.arange(width).unsqueeze(0)  # (1, W)
    prefix_pos = torch.arange(shared).expand(b, shared)  # (B, S)
    row_pos = (slot + shared).expand(b, width)  # (B, W); pads sit past the row, masked
    tail_pos = shared + lens - 1 + torch.as_tensor(depths, dtype=torch.long).unsqueeze(0)  # (B, T)
    positions = torch.cat([prefix_pos, row_pos, tail_pos], dim=1)
    real = torch.cat(
        [torch.ones((b, shared), dtype=torch.bool), slot < lens, torch.ones_like(tail_pos, dtype=torch.bool)], dim=1
    )
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
