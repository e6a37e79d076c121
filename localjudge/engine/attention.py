"""Batch-invariant attention: every query block runs in a call of a shape that only its row decides.

A fused attention kernel splits queries and keys into blocks whose sizes depend on the lengths it
is given (torch's CPU flash kernel: 32, 64 or 256 queries, keys up to 512 at once), so a row padded
to another width, or following a cached prefix, comes out a few bits different. Here each row's
queries are cut into blocks of `grid` queries aligned on absolute positions, and each block
attends to exactly the keys of its own row that a run of the row alone would give it:

- a block of row tokens [jG, (j+1)G) attends to the keys [0, (j+1)G) (prefix included);
- the appended tokens (a score tree's nodes, decoded tokens) attend to the row's keys up to its
  own grid width round_up(S + n, G), then to the appended keys.

Blocks of equal shape from all rows go through one `scaled_dot_product_attention` call; its batch
elements do not interact (checked by the load-time probe of `engine.invariant`). Masks come from
the model's 4D mask, gathered at the same slots. The runner passes the blocks (`Blocks`) with the
forward's keyword arguments, which transformers hands to the attention function.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

NAME = "localjudge_invariant"
"""The attention implementation's name in transformers' registry."""


@dataclass(frozen=True)
class Group:
    """Query blocks of one shape: for each, its row, its query slots and its key slots."""

    rows: torch.Tensor
    """(n,) batch row of each block."""
    queries: torch.Tensor
    """(n, q) query slots of each block (indices into this forward's queries)."""
    keys: torch.Tensor
    """(n, k) key slots each block attends to (indices into prefix + this forward's keys)."""


@dataclass(frozen=True)
class Blocks:
    """Every query block of a forward, grouped by shape."""

    groups: tuple[Group, ...]
    masks: dict = field(default_factory=dict, compare=False, repr=False)
    """Each group's (n, 1, rep * q, k) mask, gathered once per mask and head ratio (every layer of a
    type shares its mask)."""


def plan_blocks(
    lengths: Sequence[int], width: int, tail: int, shared: int, grid: int, generated: int | None = None
) -> Blocks:
    """The query blocks of a right-padded batch: keys [prefix S | row n_b, pad to W | appended].

    Args:
        lengths: real length n_b of each row after the prefix.
        width: W, the padded row width (≥ round_up(n_b, grid) for every row).
        tail: T, tokens appended after the padded rows (a score tree), or new tokens of a step.
        shared: S, cached prefix length (a multiple of grid).
        grid: G, query block size.
        generated: None for a forward over the rows (queries: W row slots, then T tail slots);
            for a decoding step, the tokens generated before it (keys S + W ... S + W + generated),
            its queries being the T new tokens only.

    Examples:
        >>> [(tuple(g.queries.shape), tuple(g.keys.shape)) for g in plan_blocks([3], 4, 1, 0, 2).groups]
        [((1, 2), (1, 2)), ((1, 2), (1, 4)), ((1, 1), (1, 5))]
    """
    groups: dict[tuple[int, int], list[tuple[int, list[int], list[int]]]] = defaultdict(list)
    after = shared + width  # the first key slot after the padded rows
    for b, n in enumerate(lengths):
        own = shared + -(-n // grid) * grid  # the row's keys alone: round_up(S + n, G), S a multiple of G
        if generated is None:
            for start in range(shared, shared + n, grid):  # absolute position of a block's first query
                queries = list(range(start - shared, start - shared + grid))
                groups[(grid, start + grid)].append((b, queries, list(range(start + grid))))
        if tail:
            first = width if generated is None else 0  # the tail's first query in this forward
            before = generated or 0
            keys = list(range(own)) + list(range(after, after + before + tail))
            groups[(tail, len(keys))].append((b, list(range(first, first + tail)), keys))
    out = [
        Group(
            torch.tensor([m[0] for m in members]),
            torch.tensor([m[1] for m in members]),
            torch.tensor([m[2] for m in members]),
        )
        for members in groups.values()
    ]
    return Blocks(tuple(out))


def invariant_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    localjudge_blocks: Blocks | None = None,
    **kwargs,
) -> tuple[torch.Tensor, None]:
    """Attention over the blocks of `localjudge_blocks`; transformers' SDPA when there are none.

    Args:
        query: (B, H, Q, D); key, value: (B, Hkv, K, D); attention_mask: (B, 1, Q, K) bool.

    Returns:
        (B, Q, H, D) outputs (zeros at query slots no block holds: padding) and no weights.
    """
    softcap = kwargs.pop("softcap", None) or getattr(module, "attn_logit_softcapping", None)
    if localjudge_blocks is None:
        return _fallback(module, query, key, value, attention_mask, dropout, scaling, softcap, **kwargs)
    assert attention_mask is not None and attention_mask.dtype == torch.bool, "blocks need a boolean 4D mask"
    b, h, q_len, d = query.shape
    rep = h // key.shape[1]
    qt, kt, vt = query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2)  # (B, L, H*, D)
    out = query.new_zeros(b, q_len, h, value.shape[-1])  # (B, Q, H, Dv)
    hkv = key.shape[1]
    for k, g in enumerate(localjudge_blocks.groups):
        rows, qs, ks = g.rows.to(query.device), g.queries.to(query.device), g.keys.to(query.device)
        n, q = qs.shape
        # grouped-query attention without copying keys per head: the `rep` query heads that share
        # a key head (heads h = j * rep + r read key head j) go into one call as rep * q queries
        qb = qt[rows[:, None], qs].view(n, q, hkv, rep, d).permute(0, 2, 3, 1, 4).reshape(n, hkv, rep * q, d)
        kb = kt[rows[:, None], ks].transpose(1, 2)  # (n, Hkv, k, D)
        vb = vt[rows[:, None], ks].transpose(1, 2)
        memo = (k, attention_mask.data_ptr(), tuple(attention_mask.shape), rep)
        mb = localjudge_blocks.masks.get(memo)
        if mb is None:
            mb = attention_mask[rows[:, None, None], 0, qs[:, :, None], ks[:, None, :]]  # (n, q, k)
            mb = mb[:, None, None].expand(n, 1, rep, q, mb.shape[-1]).reshape(n, 1, rep * q, mb.shape[-1])
            localjudge_blocks.masks[memo] = mb
        if softcap:
            scores = torch.matmul(qb, kb.transpose(-1, -2)) * (scaling if scaling is not None else d**-0.5)
            scores = torch.tanh(scores / softcap) * softcap
            scores = scores.masked_fill(~mb, float("-inf"))
            ob = torch.matmul(torch.softmax(scores.float(), dim=-1).to(vb.dtype), vb)
        else:
            ob = torch.nn.functional.scaled_dot_product_attention(qb, kb, vb, attn_mask=mb, scale=scaling)
        dv = ob.shape[-1]
        out[rows[:, None], qs] = ob.view(n, hkv, rep, q, dv).permute(0, 3, 1, 2, 4).reshape(n, q, h, dv)
    return out, None


def _fallback(module, query, key, value, mask, dropout, scaling, softcap, **kwargs) -> tuple[torch.Tensor, None]:
    """A forward without blocks (a probe, a benchmark's bare pass): transformers' SDPA, or the model's
    own eager attention when it soft-caps its scores (Gemma 2), which SDPA cannot do."""
    if not softcap:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(module, query, key, value, mask, dropout=dropout, scaling=scaling, **kwargs)
    import sys

    eager = sys.modules[type(module).__module__].eager_attention_forward
    if mask is not None and mask.dtype == torch.bool:  # eager adds its mask to the scores
        mask = torch.zeros(mask.shape, dtype=query.dtype, device=mask.device).masked_fill_(~mask, float("-inf"))
    return eager(module, query, key, value, mask, dropout=dropout, scaling=scaling, softcap=softcap, **kwargs)


def use_block_attention(model: torch.nn.Module) -> None:
    """Makes the model run `invariant_attention` (registered with transformers, with its SDPA mask).

    Without blocks in a forward's arguments it runs transformers' SDPA, so other callers of the
    same model (its own `generate`, a judge without batch invariance) still work.
    """
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

    if NAME not in AttentionInterface._global_mapping:
        AttentionInterface.register(NAME, invariant_attention)
        ALL_MASK_ATTENTION_FUNCTIONS.register(NAME, sdpa_mask)
    model.set_attn_implementation(NAME)  # type: ignore[operator]  # a method, typed as a module attribute
