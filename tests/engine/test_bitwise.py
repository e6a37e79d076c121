"""Bitwise batch invariance: an item scored alone equals the same item in any batch, to the bit.

Compared with `np.array_equal` / `==`, never a tolerance: score distributions, label
distributions, continuation log-likelihoods and greedy generations of each item run alone (a batch
of one, no prefix cache) against the same items shuffled among companions, under several token
budgets, with prefix reuse on and off, in fp32 and bf16, on tiny random Llama, Gemma 3 and Qwen2
models (the Gemma mixes sliding-window and full attention; the Qwen2 adds biases to q/k/v, which mixed
precision keeps in fp32 and adds after the bf16 GEMM). The embedded SmolLM2 and Gemma judges get the
same check in `test_bitwise_judges.py`; Qwen's architecture is checked here only.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from localjudge import Judge
from localjudge.engine.options import EngineOptions
from localjudge.testing.tiny_models import tiny_gemma3, tiny_info, tiny_llama, tiny_qwen2

pytestmark = pytest.mark.usefixtures("torch_one_thread")

WORDS = "the cat sat on a mat while judges read scores of 7 and 10 in 2024 quickly".split()


def _prompts(seed: int = 0) -> list[str]:
    """Prompts sharing a long head (prefix reuse), clusters, and unrelated ones of many lengths."""
    rng = random.Random(seed)
    head = " ".join(rng.choice(WORDS) for _ in range(70))
    shared = [f"{head} {' '.join(rng.choice(WORDS) for _ in range(rng.randint(1, 50)))} Score:" for _ in range(5)]
    loose = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 90))) + " Score:" for _ in range(4)]
    return shared + loose


def _judge(model, tokenizer, dtype: str, mixed: bool | None = None, **options) -> Judge:
    info = tiny_info().model_copy(update={"dtype": dtype})
    options["mixed_precision"] = mixed
    opts = EngineOptions(device="cpu", dtype=dtype, token_budget=options.pop("token_budget", 4096), **options)
    return Judge.from_model(model, tokenizer, info, opts)


def _scores(judge: Judge, texts: list[str]) -> list[np.ndarray]:
    out = judge.score_texts(texts, low=0, high=10)
    return [np.array([d.probs[k] for k in sorted(d.probs)] + [d.valid_mass]) for d in out]


def _labels(judge: Judge, texts: list[str]) -> list[np.ndarray]:
    out = judge.score_labels(texts, ["A", "B"])
    return [np.array([d.probs[k] for k in sorted(d.probs)] + [d.valid_mass]) for d in out]


CASES = [
    ("llama", "float32", None),
    ("llama", "bfloat16", False),
    ("llama", "bfloat16", True),
    ("gemma3", "float32", None),
    ("qwen2", "float32", None),
    ("qwen2", "bfloat16", True),
]
BUILD = {"llama": tiny_llama, "gemma3": tiny_gemma3, "qwen2": tiny_qwen2}


@pytest.fixture(
    scope="module",
    params=CASES,
    ids=["llama-fp32", "llama-bf16", "llama-bf16-mixed", "gemma3-fp32", "qwen2-fp32", "qwen2-bf16-mixed"],
)
def model_case(request, tiny_tokenizer):
    """A tiny model in its dtype; the mixed-precision one loads in fp32 and the engine lowers its linear layers."""
    build, dtype, mixed = request.param
    model = BUILD[build](tiny_tokenizer)
    if not mixed:
        model = model.to(getattr(torch, dtype))
    return model, dtype, mixed


@pytest.mark.parametrize("read", [_scores, _labels], ids=["scores", "labels"])
def test_distributions_alone_equal_batched(model_case, tiny_tokenizer, read):
    model, dtype, mixed = model_case
    texts = _prompts()
    judge = _judge(model, tiny_tokenizer, dtype, mixed)
    assert judge.info.bitwise, judge.info  # the probe passed on this machine
    alone = [read(judge, [t])[0] for t in texts]
    rng = random.Random(1)
    for budget in (256, 4096):
        for reuse in (True, False):
            batched = _judge(model, tiny_tokenizer, dtype, mixed, token_budget=budget, reuse_prefix=reuse)
            order = rng.sample(range(len(texts)), len(texts))
            got = read(batched, [texts[i] for i in order])
            for i, g in zip(order, got):
                assert np.array_equal(g, alone[i]), (budget, reuse, i, np.abs(g - alone[i]).max())


def test_likelihoods_alone_equal_batched(model_case, tiny_tokenizer):
    model, dtype, mixed = model_case
    judge = _judge(model, tiny_tokenizer, dtype, mixed)
    backend = judge.backend
    prompts = [backend.encode(t) for t in _prompts(2)]
    conts = [backend.encode_continuation(c) for c in [" the cat sat", " 7 and 10", " quickly"] * 3]
    alone = [backend.token_logprobs([p], [c])[0] for p, c in zip(prompts, conts)]
    for budget in (256, 4096):
        for reuse in (True, False):
            got = _judge(
                model, tiny_tokenizer, dtype, mixed, token_budget=budget, reuse_prefix=reuse
            ).backend.token_logprobs(prompts, conts)
            for i, (a, g) in enumerate(zip(alone, got)):
                assert np.array_equal(a, g), (budget, reuse, i)


def test_generations_alone_equal_batched(model_case, tiny_tokenizer):
    model, dtype, mixed = model_case
    backend = _judge(model, tiny_tokenizer, dtype, mixed).backend
    texts = _prompts(3)
    alone = [backend.generate([t], 6)[0] for t in texts]
    for share in (True, False):
        assert backend.generate(texts[::-1], 6, share_prefix=share)[::-1] == alone


def test_records_say_what_ran(tiny_tokenizer):
    model = tiny_llama(tiny_tokenizer)
    info = _judge(model, tiny_tokenizer, "float32").info
    assert info.bitwise and info.batch_invariant and info.grid == 32 and info.fp32_head
    assert info.gemm and info.gemm != "none" and info.threads == torch.get_num_threads()
    plain = _judge(tiny_llama(tiny_tokenizer), tiny_tokenizer, "float32", batch_invariant=False).info
    assert plain.bitwise is False and plain.gemm == "none" and plain.grid == 1
    dumped = info.model_dump()
    assert {"bitwise", "gemm", "grid", "threads", "fp32_head", "batch_invariant"} <= dumped.keys()


def test_a_failed_probe_is_not_claimed_bitwise(tiny_tokenizer, monkeypatch):
    from localjudge.engine import invariant

    monkeypatch.setattr(invariant, "probe", lambda *a, **k: False)  # no candidate plan passes
    info = _judge(tiny_llama(tiny_tokenizer), tiny_tokenizer, "float32").info
    assert info.bitwise is False and info.gemm == "none"


def test_probe_catches_a_row_dependent_kernel():
    from localjudge.engine.invariant import probe

    def gemm(x: torch.Tensor) -> torch.Tensor:  # a kernel whose rows depend on their companions
        return x @ torch.ones(x.shape[1], 4) + x.sum() * 1e-3

    assert not probe(gemm, 8, torch.float32, torch.device("cpu"), 32, 8)
    assert probe(lambda x: x @ torch.ones(x.shape[1], 4), 8, torch.float32, torch.device("cpu"), 32, 8)


def test_weights_outside_linear_layers_are_not_claimed_bitwise(tiny_tokenizer):
    # fused mixture-of-experts weights (3D tensors) run their own matmuls, which no probe covers
    model = tiny_llama(tiny_tokenizer)
    model.model.layers[0].mlp.experts = torch.nn.Parameter(torch.zeros(2, 4, 4))
    info = _judge(model, tiny_tokenizer, "float32").info
    assert info.bitwise is False and info.gemm != "none"


def test_mixed_precision_keeps_qwen2_biases_in_fp32(tiny_tokenizer):
    # what the qwen2-bf16-mixed case above checks bitwise: bf16 GEMMs, their (non-zero) biases in fp32
    from localjudge.engine.invariant import InvariantLinear

    judge = _judge(tiny_qwen2(tiny_tokenizer), tiny_tokenizer, "bfloat16", mixed=True)
    q = judge.backend.model.model.layers[0].self_attn.q_proj
    assert isinstance(q, InvariantLinear) and q.weight.dtype == torch.bfloat16
    assert q.bias is not None and q.bias.dtype == torch.float32 and bool(q.bias.abs().gt(0).all())
