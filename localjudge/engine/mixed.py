"""Mixed precision: the linear layers in bf16 (or fp16), everything between them in fp32.

A bf16 judge is fast because its GEMMs are: a bf16 GEMM runs at about twice the fp32 rate where
the CPU has bf16 instructions, and it reads half the bytes of weights. Rounding the rest costs
precision and buys little: the residual stream, the norms, attention and its softmax are a small
share of the FLOPs, yet rounding them to bf16 moved the expected score twice as far as rounding
the GEMMs alone (`benchmarks/invariance/invariance_results.md`, "Where the bf16 distance comes from").

So under mixed precision the model is loaded in fp32 and only its linear layers are lowered: each
keeps its weight in the low dtype, casts its fp32 input to it, runs the low GEMM (which
accumulates in fp32 and rounds its output to the low dtype: the CPU kernels torch offers give no
wider output) and hands an fp32 result on, its bias added in fp32. Embeddings, norms, attention
and the output layer stay in fp32. The casts are elementwise, so a row's result still depends on
nothing but the row: the batch-invariant engine stays bitwise.

Examples:
    >>> layer = torch.nn.Linear(4, 3)
    >>> low = MixedLinear(layer, torch.bfloat16)
    >>> low.weight.dtype, low(torch.ones(2, 4)).dtype
    (torch.bfloat16, torch.float32)
"""

from __future__ import annotations

import torch
from torch import nn


class MixedLinear(nn.Module):
    """A linear layer whose weight and GEMM are in a low dtype and whose input, output and bias are not."""

    def __init__(self, linear: nn.Linear, dtype: torch.dtype):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight = low_weight(linear.weight, dtype)
        self.bias = linear.bias  # kept as it is (fp32): added after the GEMM

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return low_linear(x, self.weight, self.bias, lambda rows: nn.functional.linear(rows, self.weight))


def low_weight(weight: torch.Tensor, dtype: torch.dtype) -> nn.Parameter:
    """The weight in `dtype`, marked so that `lower_linears` leaves it in that dtype."""
    low = nn.Parameter(weight.detach().to(dtype), requires_grad=False)
    low.lowered = True  # type: ignore[attr-defined]
    return low


def low_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, gemm) -> torch.Tensor:
    """`gemm` (rows in the weight's dtype -> outputs, no bias) on x cast to the weight's dtype, back in x's dtype."""
    y = gemm(x.to(weight.dtype)).to(x.dtype)
    return y if bias is None else y + bias.to(x.dtype)


def lowered_weights(model: nn.Module, keep: nn.Module | None = None) -> dict[str, nn.Parameter]:
    """The weights `lower_linears` puts in the low dtype, by parameter name: those of every `nn.Linear`
    but `keep`, except a weight another module shares (it stays fp32 there).

    A prepared copy of a GGUF judge for mixed precision stores these in the low dtype and the rest
    in fp32 (`weights.cache`), so the judge loads with its linear layers already low.

    Examples:
        >>> model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.LayerNorm(3))
        >>> sorted(lowered_weights(model))
        ['0.weight']
    """
    uses: dict[int, int] = {}
    for _, param in model.named_parameters(remove_duplicate=False):
        uses[id(param)] = uses.get(id(param), 0) + 1
    linear = {id(m.weight) for m in model.modules() if type(m) is nn.Linear and m is not keep}
    return {name: p for name, p in model.named_parameters() if id(p) in linear and uses[id(p)] == 1}


def lower_linears(model: nn.Module, dtype: torch.dtype, keep: nn.Module | None = None) -> int:
    """Makes the model mixed precision: every float parameter fp32, every linear layer but `keep` in `dtype`.

    A layer that an earlier judge over the same model made batch-invariant (`InvariantLinear`, which
    says so with `lowers_in_place`) is lowered in place: its weight only, the layer and its chunk
    shapes kept (the engine probes them again for the new dtype). Such layers may have let their
    plain weights go: the caller gives them back first (`invariant.restore_weights`).

    Args:
        model: a transformers model (any dtype; weights already in a low dtype are widened first,
            exactly).
        dtype: the linear layers' dtype (bf16 or fp16).
        keep: a layer left in fp32 (the output layer: the engine reads it in fp32 anyway).

    Returns:
        How many linear layers were lowered.
    """
    # not `model.float()`: transformers refuses it on a model that came through a quantizer (GGUF);
    # layers lowered before (another judge over the same model) keep their low weights, and a weight
    # about to be lowered is cast once, straight to `dtype` (a model loaded with its linear layers
    # low already, from a mixed prepared copy, is never widened: the same values, no fp32 copy)
    # a batch-invariant layer that let its plain weight go holds a stand-in (every stride 0) until
    # `invariant.restore_weights` gives it back: casting a stand-in would make zeros
    assert not any(p.dim() and not any(p.stride()) for p in model.parameters()), "restore_weights(model) first"
    about_to_lower = {id(p) for p in lowered_weights(model, keep).values()}
    for param in model.parameters():
        if (
            param.is_floating_point()
            and param.dtype != torch.float32
            and not getattr(param, "lowered", False)
            and id(param) not in about_to_lower
        ):
            param.data = param.data.float()
    for buf in model.buffers():
        if buf.is_floating_point() and buf.dtype != torch.float32:
            buf.data = buf.data.float()
    lowered = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if child is keep:
                continue
            if type(child) is nn.Linear:
                setattr(parent, name, MixedLinear(child, dtype))
                lowered += 1
            elif getattr(child, "lowers_in_place", False):
                weight = child.weight
                assert isinstance(weight, torch.Tensor)
                if not getattr(weight, "lowered", False):
                    child.weight = low_weight(weight, dtype)
                    lowered += 1
    return lowered
