"""Batch-invariant attention: every query block runs in a call of a shape that only its row decides.

A fused attention kernel splits queries and keys into blocks whose sizes depend on the lengths it
is given (torch's CPU flash kernel: 32, 64 or 256 queries, keys up to 512 at once), so a row in
another batch, or after a cached prefix, comes out a few bits different. Here the engine's packed
forward (`engine.packing`) cuts each row's queries into blocks of `grid` queries aligned on
absolute positions, each attending to exactly the keys that a run of the row alone would give it.
Blocks of equal shape from all rows go through one `scaled_dot_product_attention` call, whose
batch elements do not interact (checked by the bitwise tests). The runner passes the plan
(`Blocks`) with the forward's keyword arguments, which transformers hands to the attention
function, and a marker per attention kind as the model's mask (`Blocks.marker`).
"""

from __future__ import annotations

import torch

from localjudge.engine.packing import Blocks

NAME = "localjudge_invariant"
"""The attention implementation's name in transformers' registry."""


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
        query: (1, H, Q, D) of the packed forward; key, value: (1, Hkv, K, D), cached prefix first.
        attention_mask: the marker of this layer's attention kind (`Blocks.marker`).

    Returns:
        (1, Q, H, D) outputs (zeros at grid pads) and no weights.
    """
    softcap = kwargs.pop("softcap", None) or getattr(module, "attn_logit_softcapping", None)
    if localjudge_blocks is None:
        return _fallback(module, query, key, value, attention_mask, dropout, scaling, softcap, **kwargs)
    assert attention_mask is not None and query.shape[0] == 1, "blocks run on a packed forward with its marker"
    window = localjudge_blocks.markers[attention_mask.data_ptr()]
    _, h, q_len, d = query.shape
    hkv = key.shape[1]
    rep = h // hkv
    out = query.new_zeros(q_len, h, value.shape[-1])  # (Q, H, Dv)
    for k, g in enumerate(localjudge_blocks.groups):
        qs, ks = g.queries, g.keys
        n, q = qs.shape
        # grouped-query attention without copying keys per head: the `rep` query heads that share
        # a key head (heads h = j * rep + r read key head j) go into one call as rep * q queries
        # (index_select along the slots of each head copies whole D-vectors: several times faster
        # than indexing a (L, H, D) transposed view)
        qb = query[0].index_select(1, qs.flatten()).view(hkv, rep, n, q, d)
        qb = qb.permute(2, 0, 1, 3, 4).reshape(n, hkv, rep * q, d)
        kb = key[0].index_select(1, ks.flatten()).view(hkv, n, -1, d).transpose(0, 1)  # (n, Hkv, k, D)
        vb = value[0].index_select(1, ks.flatten()).view(hkv, n, -1, value.shape[-1]).transpose(0, 1)
        mb = localjudge_blocks.mask(k, window, rep)  # (n, 1, rep * q, k)
        if softcap:
            scores = torch.matmul(qb, kb.transpose(-1, -2)) * (scaling if scaling is not None else d**-0.5)
            scores = torch.tanh(scores / softcap) * softcap
            scores = scores.masked_fill(~mb, float("-inf"))
            ob = torch.matmul(torch.softmax(scores.float(), dim=-1).to(vb.dtype), vb)
        else:
            ob = torch.nn.functional.scaled_dot_product_attention(qb, kb, vb, attn_mask=mb, scale=scaling)
        dv = ob.shape[-1]
        ob = ob.view(n, hkv, rep, q, dv).permute(0, 3, 1, 2, 4).reshape(n * q, h, dv)  # (n * q, H, Dv)
        out.index_copy_(0, g.slots, ob.index_select(0, g.write))
    return out[None], None


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
