"""Where bf16's distance from fp32 comes from: one rounding at a time, on the fp32 judge's own layers.

`invariance.py --sections precision` runs the fp32 judge with its linear layers swapped for
kernels that round one thing to bf16 (the weights, the GEMM inputs, the GEMM outputs, or all three,
with the residual stream, norms, attention and output layer left in fp32) and compares each with
plain fp32 and with the engine's bf16 judge (every op in bf16, output layer in fp32). If rounding a
single one of them already moves scores by more than the tolerance, no bf16 variant can meet it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch

from localjudge.engine.gemm import gemm_for
from localjudge.engine.invariant import InvariantLinear, can_prepack

Kernel = Callable[[torch.Tensor], torch.Tensor]

VARIANTS = {
    "weights": "weights rounded to bf16, fp32 GEMM",
    "inputs": "GEMM inputs rounded to bf16, fp32 GEMM",
    "outputs": "GEMM outputs rounded to bf16, fp32 GEMM",
    "inputs+weights": "GEMM inputs and weights rounded to bf16, fp32 accumulation and output",
    "gemm": "bf16 GEMM (inputs, weights, outputs bf16), all else fp32",
}


def _pack(weight: torch.Tensor) -> Kernel:
    """The engine's kernel for this weight: prepacked oneDNN where the CPU supports its dtype, else
    `F.linear` (bf16 prepacking needs AVX-512 or AVX-NE-CONVERT)."""
    return gemm_for(weight, None, can_prepack(weight), 256)


def _kernel(variant: str, weight: torch.Tensor, bias: torch.Tensor | None) -> Kernel:
    """x (C, in) fp32 -> (C, out) fp32 with one rounding to bf16, as `variant` names it; the bias added in fp32."""
    inner = _gemm(variant, weight)
    if bias is None:
        return inner
    b = bias.detach().float()
    return lambda x: inner(x) + b


def _gemm(variant: str, weight: torch.Tensor) -> Kernel:
    w = weight.detach().float()
    if variant == "weights":
        return _pack(w.bfloat16().float())
    fp32 = _pack(w)
    if variant == "inputs":
        return lambda x: fp32(x.bfloat16().float())
    if variant == "outputs":
        return lambda x: fp32(x).bfloat16().float()
    if variant == "inputs+weights":  # what a bf16 GEMM with an fp32 output would compute
        rounded = _pack(w.bfloat16().float())
        return lambda x: rounded(x.bfloat16().float())
    low = _pack(w.bfloat16())
    return lambda x: low(x.bfloat16()).float()


def swap_kernels(model: torch.nn.Module, variant: str | None) -> None:
    """Every fixed-shape linear layer of the fp32 model computes with `variant`'s kernel (None: its own)."""
    for m in model.modules():
        if not isinstance(m, InvariantLinear):
            continue
        m.pin_gemm(None if variant is None else _kernel(variant, m.weight, m.bias))


def deviations(fp32_judge, judges: dict, prompts, conts, questions) -> dict:
    """Each variant (and each judge of `judges`, name -> (judge, what)) against fp32: max changes, seconds."""

    def read(judge) -> tuple[list, list, float]:
        start = time.perf_counter()
        scores = judge.score_texts(questions, 1, 10)
        lls = judge.backend.token_logprobs(prompts, conts)
        return scores, lls, time.perf_counter() - start

    want, want_ll, seconds = read(fp32_judge)
    out: dict = {"items": len(questions), "fp32_seconds": seconds, "variants": {}}
    runs = [(name, fp32_judge, name) for name in VARIANTS] + [(name, j, None) for name, (j, _) in judges.items()]
    for name, judge, variant in runs:
        if variant is not None:
            swap_kernels(judge.backend.model, variant)
        got, got_ll, seconds = read(judge)
        if variant is not None:
            swap_kernels(judge.backend.model, None)
        out["variants"][name] = {
            "what": VARIANTS[name] if name in VARIANTS else judges[name][1],
            "max_normalized_delta": float(max(abs(a.normalized - b.normalized) for a, b in zip(want, got))),
            "max_token_logprob_delta": float(max(np.abs(a - b).max() for a, b in zip(want_ll, got_ll))),
            "max_mean_logprob_delta": float(max(abs(a.mean() - b.mean()) for a, b in zip(want_ll, got_ll))),
            "seconds": seconds,
        }
    return out


def render(d: dict) -> list[str]:
    """Markdown lines of the precision section."""
    lines = [
        f"Where the bf16 distance comes from ({d['items']} items; fp32 judge with one rounding at a time in "
        "its linear layers, the rest fp32; max over items against plain fp32):",
        "",
        "| variant | normalised expected score (1-10) | per-token log-prob (nat) | item mean log-prob | seconds |",
        "|---|---|---|---|---|",
        f"| fp32 | 0 | 0 | 0 | {d['fp32_seconds']:.1f} |",
    ]
    for name, v in d["variants"].items():
        lines.append(
            f"| {name}: {v['what']} | {v['max_normalized_delta']:.4f} | {v['max_token_logprob_delta']:.3f} "
            f"| {v['max_mean_logprob_delta']:.4f} | {v['seconds']:.1f} |"
        )
    return [*lines, ""]
