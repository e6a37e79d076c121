"""Bitwise batch invariance on the embedded judges: SmolLM2-135M and Gemma-3-270M (Qwen2.5-Coder's
architecture, biases in q/k/v, is checked on a tiny random Qwen2 in `tests/engine/test_bitwise.py`).

The real architectures, vocabularies and weights: scores, likelihoods and greedy generations of
each item alone against the same items shuffled in batches, prefix reuse on and off (Gemma: on),
compared with `np.array_equal` / `==`. bf16 copies of the session's fp32 models keep the
load count down (a mixed-precision copy shares their fp32 tensors; each check asserts that its
GEMMs run in the dtype it checks). The bf16 checks (bf16, and mixed precision: bf16 linear layers,
fp32 between them, the CPU's bf16 default) run where the CPU has native bf16 kernels; without them
every bf16 GEMM is emulated and the tiny models (tests/engine/test_bitwise.py) keep bf16 covered.
Gemma-3-270M (262k vocabulary, sliding-window layers) runs a smaller set.
"""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
import torch

from localjudge import Judge
from localjudge.engine.invariant import InvariantLinear, can_prepack

pytestmark = pytest.mark.slow

ARTICLE = (
    "The city council voted on Tuesday to expand the bus network by 12 routes, a plan that will cost "
    "4.5 million dollars over three years. Supporters said the routes would serve 30,000 riders a day; "
    "critics argued that the money should repair roads first. The mayor, who proposed the plan in 2023, "
    "said work on the first routes begins in March."
)
SUMMARIES = [
    "The council approved 12 new bus routes costing 4.5 million dollars.",
    "The mayor cancelled the bus plan after critics complained about roads.",
    "Bus routes will expand; work starts in March.",
    "Critics want road repairs first.",
]


def _prompts(judge: Judge) -> list[str]:
    head = f"Article: {ARTICLE}\n\nSummary: "
    texts = [f"{head}{s}\n\nRate the summary's consistency from 1 to 10. Score:" for s in SUMMARIES]
    return texts + ["Is the sky green? Answer Yes or No. Answer:", "Rate this reply from 1 to 10: 'ok'. Score:"]


def _rebuild(judge: Judge, dtype: str, mixed: bool = False, **options) -> Judge:
    """The session's fp32 judge in `dtype`: a bf16 copy of its model, or (mixed) an fp32 copy the engine lowers."""
    opts = judge.options.replace(dtype=dtype, mixed_precision=mixed if dtype != "float32" else None, **options)
    if dtype == judge.info.dtype:
        model = judge.backend.model
    else:
        model = _as(judge.backend.model, "mixed" if mixed else dtype)
    info = judge.info.model_copy(update={"dtype": dtype})
    return Judge.from_model(model, judge.backend.tokenizer, info, opts)


_COPIES: dict[tuple[int, str], torch.nn.Module] = {}


def _as(model: torch.nn.Module, dtype: str) -> torch.nn.Module:
    """A copy of the model in `dtype`; "mixed": its modules copied over the same fp32 tensors.

    Lowering a mixed judge's linear layers gives the copy's layers bf16 weights of their own and
    leaves shared tensors as they are, so copying the fp32 weights (2 GB for Qwen) would buy nothing.
    """
    key = (id(model), dtype)
    if key not in _COPIES:
        if dtype == "mixed":
            shared = {id(t): t for t in (*model.parameters(), *model.buffers())}
            _COPIES[key] = copy.deepcopy(model, shared)
        else:
            _COPIES[key] = copy.deepcopy(model).to(getattr(torch, dtype))
    return _COPIES[key]


def check_bitwise(
    judge: Judge,
    dtype: str,
    budgets: tuple[int, ...],
    texts: int = 6,
    mixed: bool = False,
    reuse: tuple[bool, ...] = (True, False),
) -> None:
    base = _rebuild(judge, dtype, mixed)
    assert base.info.mixed_precision is (mixed if dtype != "float32" else None)
    assert base.info.bitwise, base.info
    layers = [m for m in base.backend.model.modules() if isinstance(m, InvariantLinear)]
    assert layers and all(m.weight.dtype == getattr(torch, dtype) for m in layers)  # GEMMs in the dtype checked
    texts = _prompts(base)[-texts:]
    alone = [base.score_texts([t], 1, 10)[0] for t in texts]
    backend = base.backend
    # three summaries of one article: rows that share a prefix, of three lengths
    prompts = [backend.encode(f"Article: {ARTICLE}\n\nSummary:")] * 3
    conts = [backend.encode_continuation(" " + s) for s in SUMMARIES[:3]]
    ll_alone = [backend.token_logprobs([p], [c])[0] for p, c in zip(prompts, conts)]
    rng = random.Random(0)
    for budget in budgets:
        for share in reuse:
            other = _rebuild(judge, dtype, mixed, token_budget=budget, reuse_prefix=share)
            order = rng.sample(range(len(texts)), len(texts))
            got = other.score_texts([texts[i] for i in order], 1, 10)
            for i, g in zip(order, got):
                assert g.probs == alone[i].probs and g.valid_mass == alone[i].valid_mass, (budget, share, i)
            lls = other.backend.token_logprobs(prompts[::-1], conts[::-1])[::-1]
            assert all(np.array_equal(a, b) for a, b in zip(ll_alone, lls)), (budget, share)
    # generation: two prompts of different lengths, alone and batched in reverse order
    gen_alone = [backend.generate([t], 5)[0] for t in texts[:2]]
    assert backend.generate(texts[:2][::-1], 5, share_prefix=True)[::-1] == gen_alone


def check_head_rows(judge: Judge, dtype: str, mixed: bool = False) -> None:
    """Log-probabilities read with the output layer on its big GEMM chunk are the bits of its small one.

    A continuation longer than the big chunk puts rows through both shapes; the same item read
    with every call on the small chunk (16 rows, as the engine read them before) must agree bitwise.
    """
    base = _rebuild(judge, dtype, mixed)
    runner, backend = base.backend.runner, base.backend
    small = runner.chunks[1]
    assert runner.head_rows > small and runner.head_rows % small == 0, runner.head_rows
    prompt = backend.encode("Article:")
    cont = backend.encode_continuation(" " + ARTICLE * 4)
    assert len(cont) > runner.head_rows  # one big chunk and small ones after it
    big = backend.token_logprobs([prompt], [cont])[0]
    rows, runner.head_rows = runner.head_rows, small
    try:
        assert np.array_equal(backend.token_logprobs([prompt], [cont])[0], big)
    finally:
        runner.head_rows = rows


def _skip_emulated_bf16() -> None:
    """Skips a real-weight bf16 check where the CPU has no native bf16 kernels.

    There every bf16 GEMM is emulated (4-5x the fp32 time: SmolLM2's mixed checks took 56 s of a
    2-core AVX2 run, Gemma's bf16 two minutes) in a configuration the judge warns against; the tiny
    models (tests/engine/test_bitwise.py) run every op in bf16 and mixed precision on every CPU, and
    CPUs with native bf16 (AVX-512 BF16, AMX) run these checks on the real weights.
    """
    if not can_prepack(torch.zeros(8, 8, dtype=torch.bfloat16)):
        pytest.skip("bf16 has no native kernels on this CPU")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_gemma3_bitwise(gemma_judge, dtype):
    # 3 texts: a summary after the article, the Yes/No and the short rating; batched with prefix reuse
    # only: without it the rows run through the same layers, which SmolLM2's check and the tiny sliding-window
    # Gemma 3 (tests/engine/test_bitwise.py) run both ways (the leg was 10 s of a 262k-row output layer)
    if dtype == "bfloat16":
        _skip_emulated_bf16()
    check_bitwise(gemma_judge, dtype, (1024,), texts=3, reuse=(True,))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_smollm2_bitwise(smollm_judge, dtype):
    if dtype == "bfloat16":
        _skip_emulated_bf16()
    # fp32: 6 texts under a 512-token budget (two batches); bf16: 4 (2 summaries of the article) in one
    # batch of everything, the mixed check's 8192 (Qwen's and Gemma's 1024)
    check_bitwise(smollm_judge, dtype, (512,) if dtype == "float32" else (8192,), texts=6 if dtype == "float32" else 4)


@pytest.mark.parametrize("mixed", [False, True])
def test_smollm2_output_layer_chunks(smollm_judge, mixed):
    if mixed:
        _skip_emulated_bf16()
    check_head_rows(smollm_judge, "bfloat16" if mixed else "float32", mixed)


def test_gemma3_output_layer_chunks(gemma_judge):
    check_head_rows(gemma_judge, "float32")


def test_smollm2_mixed_precision_bitwise(smollm_judge):
    # the bf16 default on the CPU: bf16 linear layers, fp32 between them
    _skip_emulated_bf16()
    before = smollm_judge.score_texts(_prompts(smollm_judge)[-1:], 1, 10)[0].probs
    check_bitwise(smollm_judge, "bfloat16", (8192,), texts=4, mixed=True)
    # the mixed copy shares the session model's fp32 tensors: they, and its scores, are as they were
    assert all(p.dtype == torch.float32 for p in smollm_judge.backend.model.parameters())
    assert smollm_judge.score_texts(_prompts(smollm_judge)[-1:], 1, 10)[0].probs == before
