"""The output layer applied only at tree nodes that can move the score, within a stated bound.

One forward pass gives the final hidden state at the root and at every tree node, (B, N, H).
Turning a hidden state into log-probabilities costs a V×H product and a log-sum-exp over V: for
Gemma 3 (V = 262k, H = 640) that is 0.34 GFLOP a node, more than a prompt token costs in the whole
body of the 270M model. Most nodes carry no probability worth it: Gemma's byte-fallback digits
(`<0x31>`) sit near 1e-17. So the output layer runs level by level, only at nodes whose path
probability is large enough.

The bound. A node whose row is not computed has an exactly known path probability q (from its
parent's row) but an unknown split of q between ending there and going on to its descendants.
Leaving it out lowers outcome masses by at most U, the sum of such q, so the normalised
distribution moves by at most U / M in total variation and the expected score by at most
(high - low) · U / M, where M is the valid mass found. Every item ends with U ≤ tolerance · M;
one that does not is expanded in full. Tolerance 0 expands every node: the exact computation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from localjudge.engine.runner import ROW_BYTES, map_rows
from localjudge.scoring.trie import TokenTree

log = logging.getLogger("localjudge")

Head = Callable[[torch.Tensor], torch.Tensor]
"""(K, H) final hidden states -> (K, V) logits."""


@dataclass(frozen=True)
class TreeRows:
    """Log-probabilities read at the tree nodes of a batch.

    Attributes:
        edge: (B, N) log P(node token | parent context); -inf below a node left unexpanded.
        end: (B, N) log P(outcome ends at node | node context); -inf where not computed.
        unexpanded: (B,) path probability left out, at most tolerance × valid mass.
        rows: number of output-layer rows computed, for the statistics.
    """

    edge: np.ndarray
    end: np.ndarray
    unexpanded: np.ndarray
    rows: int


class _Reader:
    """Expands (item, node) pairs: one output-layer row each, written into the (B, N) tables."""

    def __init__(
        self, hidden: torch.Tensor, head: Head, tree: TokenTree, ends_mask: torch.Tensor, chunks: tuple[int, int] | None
    ):
        self.hidden, self.head, self.ends_mask, self.chunks = hidden, head, ends_mask, chunks
        b, n = hidden.shape[:2]
        device = hidden.device
        inf = torch.full((b, n), float("-inf"), dtype=torch.float64, device=device)
        self.path, self.edge, self.end = inf.clone(), inf.clone(), inf.clone()  # (B, N) each
        self.path[:, 0] = 0.0
        self.edge[:, 0] = 0.0
        self.done = torch.zeros((b, n), dtype=torch.bool, device=device)
        kids: list[list[int]] = [[] for _ in range(n)]
        for node in range(1, n):
            kids[int(tree.parents[node])].append(node)
        width = max(1, max(len(k) for k in kids))
        table = torch.zeros((n, width), dtype=torch.long)  # (N, C) child node ids, 0 = none
        for node, k in enumerate(kids):
            table[node, : len(k)] = torch.tensor(k, dtype=torch.long)
        self.kids = table.to(device)
        self.tokens = torch.from_numpy(np.maximum(tree.token_ids, 0)).to(device)  # (N,)
        self.cap = max(1, ROW_BYTES // (4 * ends_mask.numel()))
        going = torch.nonzero(~ends_mask).flatten()  # (C,) tokens that continue an outcome
        self.going = going if 8 * len(going) < len(ends_mask) else None  # digits yes, word pieces no
        self.rows = 0

    def expand(self, items: torch.Tensor, nodes: torch.Tensor) -> None:
        kids = self.kids[nodes]  # (K, C)
        edge, end = map_rows(self._rows, (self.hidden[items, nodes], self.tokens[kids]), self.chunks, self.cap)
        real = kids > 0
        self.end[items, nodes] = end
        rows, cols = items[:, None].expand_as(kids)[real], kids[real]
        self.edge[rows, cols] = edge[real]
        self.path[rows, cols] = self.path[items, nodes][:, None].expand_as(kids)[real] + edge[real]
        self.done[items, nodes] = True
        self.rows += len(items)

    def _rows(self, hidden: torch.Tensor, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(K, C) edge and (K,) end log-probabilities of K states whose children spell `tokens` (K, C)."""
        logits = self.head(hidden).float()  # (K, V)
        lse = torch.logsumexp(logits, dim=-1)  # (K,)
        edge = (logits.gather(1, tokens) - lse[:, None]).double()  # (K, C)
        ending = logits.masked_fill(~self.ends_mask, float("-inf"))  # (K, V)
        end = (torch.logsumexp(ending, dim=-1) - lse).double()  # (K,)
        if self.going is not None:
            # P(end) = 1 - P(a continuation token) keeps the relative precision of a tiny P(go on);
            # where the outcome probably goes on, 1 - P loses it: the direct sum above stays
            going = torch.exp((logits[:, self.going] - lse[:, None]).double()).sum(1)  # (K,)
            end = torch.where(going > 0.5, end, torch.log1p(-going.clamp(max=0.5)))
        return edge, end


def read_tree(
    hidden: torch.Tensor,
    head: Head,
    tree: TokenTree,
    ends_mask: torch.Tensor,
    tolerance: float,
    chunks: tuple[int, int] | None = None,
) -> TreeRows:
    """Edge and end log-probabilities at the tree nodes, expanding only what the bound needs.

    Args:
        hidden: (B, N, H) final hidden states at the root (column 0) and every tree node.
        head: the model's output layer, hidden states to logits.
        tree: the token tree the hidden states were computed over.
        ends_mask: (V,) True where a token ends the outcome (is not a continuation).
        tolerance: largest unexpanded path probability allowed, relative to the valid mass.
        chunks: fixed (big, small) row chunks for the output layer (`runner.map_rows`), or None.

    Returns:
        The tables and the mass left out, per item.
    """
    b, n = hidden.shape[:2]
    reader = _Reader(hidden, head, tree, ends_mask, chunks)
    everyone = torch.arange(b, device=hidden.device)
    reader.expand(everyone, torch.zeros(b, dtype=torch.long, device=hidden.device))
    levels = (
        [torch.from_numpy(np.flatnonzero(tree.depths == d)).to(hidden.device) for d in range(1, tree.max_depth + 1)]
        if n > 1
        else []
    )
    if tolerance > 0 and levels:
        # a node is worth a row when it holds more than its share of the allowed error, taking the
        # mass on first tokens as the scale; the check below makes the bound exact either way
        first = torch.exp(reader.path[:, levels[0]]).sum(1)  # (B,)
        cut = torch.log(tolerance * first / n)
        _sweep(reader, levels, everyone, cut)
        valid = _valid_mass(reader, tree)
        short = _unexpanded(reader, tree) > tolerance * valid
        _sweep(reader, levels, everyone[short], None)
    else:
        _sweep(reader, levels, everyone, None)
    return TreeRows(
        reader.edge.cpu().numpy(), reader.end.cpu().numpy(), _unexpanded(reader, tree).cpu().numpy(), reader.rows
    )


def _sweep(reader: _Reader, levels: list[torch.Tensor], items: torch.Tensor, cut: torch.Tensor | None) -> None:
    """Expands, level by level, the reached nodes of `items` not yet done whose path beats `cut`."""
    if len(items) == 0:
        return
    for nodes in levels:
        path = reader.path[items][:, nodes]  # (I, L)
        take = torch.isfinite(path) & ~reader.done[items][:, nodes]
        if cut is not None:
            take &= path >= cut[items][:, None]
        i, j = torch.nonzero(take, as_tuple=True)
        if len(i):
            reader.expand(items[i], nodes[j])


def _valid_mass(reader: _Reader, tree: TokenTree) -> torch.Tensor:
    """(B,) probability found on complete outcomes."""
    terminal = torch.from_numpy(tree.terminal_value >= 0).to(reader.path.device)
    return torch.exp(reader.path + reader.end)[:, terminal].sum(1)


def _unexpanded(reader: _Reader, tree: TokenTree) -> torch.Tensor:
    """(B,) path probability of reached nodes whose row was never computed."""
    reached = torch.isfinite(reader.path) & ~reader.done
    return torch.where(reached, torch.exp(reader.path), torch.zeros_like(reader.path)).sum(1)


@dataclass(frozen=True)
class DecoderAndHead:
    """A model's decoder and output layer, applied apart."""

    decoder: Any
    """The decoder: token ids to final hidden states."""
    layer: Any
    """The output layer (an `nn.Linear` for every model seen so far)."""
    cap: float | None
    """Gemma's final logit soft-capping, applied after the layer; None for none."""

    def head(self, layer: Any = None) -> OutputHead:
        """Hidden states to logits through `layer` (default the model's own), capped like the model."""
        return OutputHead(self.layer if layer is None else layer, self.cap)


@dataclass(frozen=True)
class OutputHead:
    """Hidden states to logits at the positions read: the output layer, then the model's capping."""

    layer: Any
    """The layer applied (the model's own, or its fp32 / fixed-shape reading, `invariant.read_layer`)."""
    cap: float | None
    """Gemma's final logit soft-capping; None for none."""

    def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
        layer, cap = self.layer, self.cap
        logits = layer(hidden.to(layer.weight.dtype) if hasattr(layer, "weight") else hidden)
        return torch.tanh(logits / cap) * cap if cap else logits


def split_model(model: Any, probe: Sequence[int]) -> DecoderAndHead | None:
    """The model's decoder and output layer, when applying them apart reproduces its logits.

    The reader needs final hidden states and the output layer separately. Gemma's final logit
    soft-capping is applied here; a model that rescales its logits any other way fails the check
    on `probe` (a few token ids) and keeps the plain forward, which computes the logits of every
    node (the reader then applies the same bound to them).
    """
    decoder = model.get_decoder() if hasattr(model, "get_decoder") else None
    layer = model.get_output_embeddings()
    if decoder is None or decoder is model or layer is None:
        return None
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    split = DecoderAndHead(decoder, layer, getattr(config, "final_logit_softcapping", None))
    head = split.head()
    ids = torch.tensor([list(probe)], device=next(model.parameters()).device)
    with torch.inference_mode():
        want = model(input_ids=ids, logits_to_keep=1).logits[:, -1].float()  # (1, V)
        got = head(decoder(input_ids=ids).last_hidden_state[:, -1]).float()
    if got.shape == want.shape and torch.allclose(got, want, rtol=1e-3, atol=1e-3 * float(want.abs().max())):
        return split
    log.info("the model's logits are not its output layer over its decoder: logits at every tree node")
    return None
