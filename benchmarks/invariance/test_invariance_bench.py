"""Checks of `invariance.py`'s precision section: each variant rounds what it says, and only that."""

from __future__ import annotations

import pytest
import torch

from benchmarks.invariance import _bf16_sources as B
from localjudge import Judge
from localjudge.engine.invariant import InvariantLinear
from localjudge.engine.options import EngineOptions
from localjudge.testing import build_tiny_tokenizer
from localjudge.testing.tiny_models import tiny_info, tiny_llama


def _is_bf16(t: torch.Tensor) -> bool:
    return torch.equal(t, t.bfloat16().float())


@pytest.fixture
def w_x():
    g = torch.Generator().manual_seed(0)
    return torch.randn(24, 16, generator=g), torch.randn(16, 16, generator=g)


def test_each_variant_rounds_one_thing(w_x):
    w, x = w_x
    exact = x @ w.T
    assert torch.allclose(B._kernel("weights", w, None)(x), x @ w.bfloat16().float().T, atol=1e-5)
    assert torch.allclose(B._kernel("inputs", w, None)(x), x.bfloat16().float() @ w.T, atol=1e-5)
    out = B._kernel("outputs", w, None)(x)
    assert _is_bf16(out) and torch.allclose(out, exact, rtol=1e-2, atol=1e-2)
    low = B._kernel("gemm", w, None)(x)
    assert _is_bf16(low) and not torch.equal(low, exact)


def test_a_bias_is_added_in_fp32_after_the_rounded_gemm(w_x):
    # Qwen's q/k/v projections have a bias: the variant rounds the GEMM, the bias is added unrounded
    w, x = w_x
    bias = torch.linspace(-1, 1, w.shape[0]) / 3
    assert torch.equal(B._kernel("outputs", w, bias)(x), B._kernel("outputs", w, None)(x) + bias)
    assert not _is_bf16(B._kernel("outputs", w, bias)(x))


def test_swapping_kernels_changes_results_and_restoring_gives_them_back():
    tiny_tokenizer = build_tiny_tokenizer()
    model = tiny_llama(tiny_tokenizer)
    judge = Judge.from_model(
        model, tiny_tokenizer, tiny_info(), EngineOptions(device="cpu", dtype="float32", token_budget=4096)
    )
    assert any(isinstance(m, InvariantLinear) for m in model.modules())
    texts = ["the cat sat on the mat. Score:", "judges read 7 and 10. Score:"]
    want = [d.probs for d in judge.score_texts(texts, 0, 10)]
    B.swap_kernels(model, "gemm")
    moved = [d.probs for d in judge.score_texts(texts, 0, 10)]
    B.swap_kernels(model, None)
    again = [d.probs for d in judge.score_texts(texts, 0, 10)]
    assert moved != want and again == want


def test_render_lists_every_variant():
    d = {
        "items": 2,
        "fp32_seconds": 1.0,
        "variants": {
            name: {
                "what": what,
                "max_normalized_delta": 0.01,
                "max_token_logprob_delta": 0.1,
                "max_mean_logprob_delta": 0.001,
                "seconds": 1.0,
            }
            for name, what in B.VARIANTS.items()
        },
    }
    text = "\n".join(B.render(d))
    assert all(name in text for name in B.VARIANTS) and "| fp32 | 0 |" in text
