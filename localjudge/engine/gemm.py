"""The GEMM one chunk of rows runs: oneDNN on a prepacked weight, or `F.linear`, and the chunking.

`engine.invariant` runs every linear layer through these on a few fixed chunk shapes, so that a
row's output never depends on its batch.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

Gemm = Callable[[torch.Tensor], torch.Tensor]
"""(C, in) rows -> (C, out) outputs, C a chunk size."""


def gemm_for(weight: torch.Tensor, bias: torch.Tensor | None, packed: bool, big: int) -> Gemm:
    """The kernel one chunk runs: oneDNN on prepacked weights, or `F.linear`."""
    if not packed:
        return lambda x: nn.functional.linear(x, weight, bias)
    return packed_gemm(pack(weight, big), bias)


def pack(weight: torch.Tensor, big: int) -> torch.Tensor:
    """The weight reordered for oneDNN's GEMM on chunks of `big` rows (an opaque mkldnn tensor;
    `.to_dense()` gives the weight back, bit for bit)."""
    return torch.ops.mkldnn._reorder_linear_weight(weight.contiguous(), big)


def packed_gemm(packed: torch.Tensor, bias: torch.Tensor | None) -> Gemm:
    """oneDNN's GEMM on a weight `pack` made (or on a plain weight: `same_bits_unpacked`)."""
    return lambda x: torch.ops.mkldnn._linear_pointwise(x, packed, bias, "none", [], "")


def chunked(gemm: Gemm, x: torch.Tensor, big: int, small: int, width: int) -> torch.Tensor:
    """`gemm` over the rows of x (..., in) in chunks of `big` rows, the rest in chunks of `small`."""
    lead = x.shape[:-1]
    rows = x.reshape(-1, x.shape[-1])  # (M, in)
    m = rows.shape[0]
    full = m - m % big
    outs = [gemm(rows[s : s + big]) for s in range(0, full, big)]
    if full < m:
        rest = rows[full:]
        pad = -len(rest) % small
        if pad:
            rest = torch.cat([rest, rest.new_zeros(pad, rest.shape[1])])
        outs += [gemm(rest[s : s + small]) for s in range(0, len(rest), small)]
    out = torch.cat(outs)[:m] if len(outs) > 1 else outs[0][:m]
    return out.reshape(*lead, width)
