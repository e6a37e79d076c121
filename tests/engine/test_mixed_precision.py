"""Mixed precision and the overflow check, on tiny random models.

Mixed precision: the linear layers in bf16, everything else in fp32 (`engine.mixed`). The overflow
check: a state holding inf or NaN is never read into a score (`engine.overflow`).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from localjudge import Judge
from localjudge.engine.invariant import InvariantLinear
from localjudge.engine.mixed import MixedLinear, lower_linears
from localjudge.engine.options import EngineOptions
from localjudge.errors import NumericalError
from localjudge.testing.tiny_models import tiny_info, tiny_llama

pytestmark = pytest.mark.usefixtures("torch_one_thread")

PROMPTS = ["the cat sat on a mat Score:", "judges read 7 and 10 quickly Score:", "a mat Score:"]


def _judge(model, tokenizer, dtype: str, **options) -> Judge:
    info = tiny_info().model_copy(update={"dtype": dtype})
    opts = EngineOptions(device="cpu", dtype=dtype, **({"token_budget": 4096} | options))
    return Judge.from_model(model, tokenizer, info, opts)


def test_resolved_options_mix_on_the_cpu_and_not_on_cuda():
    cpu = EngineOptions(dtype="bf16").resolve(cuda_available=False)
    assert cpu.mixed_precision is True and cpu.weights_dtype == "float32"
    gpu = EngineOptions(dtype="bf16").resolve(cuda_available=True)
    assert gpu.mixed_precision is False and gpu.weights_dtype == "bfloat16"
    assert EngineOptions(dtype="fp32").resolve(cuda_available=False).mixed_precision is None
    off = EngineOptions(dtype="bf16", mixed_precision=False).resolve(cuda_available=False)
    assert off.mixed_precision is False and off.weights_dtype == "bfloat16"


def test_only_the_linear_layers_are_lowered(tiny_tokenizer):
    model = tiny_llama(tiny_tokenizer)
    head = model.get_output_embeddings()
    assert lower_linears(model, torch.bfloat16, keep=head) == 2 * 7  # q, k, v, o, gate, up, down per layer
    assert head.weight.dtype == torch.float32 and type(head) is torch.nn.Linear
    low = [m for m in model.modules() if isinstance(m, MixedLinear)]
    assert low and all(m.weight.dtype == torch.bfloat16 for m in low)
    rest = [p for n, p in model.named_parameters() if not any(p is m.weight for m in low)]
    assert rest and all(p.dtype == torch.float32 for p in rest)  # embeddings, norms, the output layer


def test_a_mixed_layer_rounds_what_a_bf16_gemm_rounds_and_nothing_else():
    torch.manual_seed(0)
    linear = torch.nn.Linear(16, 8)
    x = torch.randn(5, 16)
    got = MixedLinear(linear, torch.bfloat16)(x)
    # the bf16 GEMM (inputs and weights in bf16, its output rounded to bf16), then the fp32 bias
    want = torch.nn.functional.linear(x.bfloat16(), linear.weight.bfloat16()).float() + linear.bias
    assert got.dtype == torch.float32 and torch.equal(got, want)


def test_a_mixed_judge_records_it_and_sits_between_fp32_and_full_bf16(tiny_tokenizer):
    fp32 = _judge(tiny_llama(tiny_tokenizer), tiny_tokenizer, "float32")
    mixed = _judge(tiny_llama(tiny_tokenizer), tiny_tokenizer, "bfloat16", mixed_precision=True)
    full = _judge(tiny_llama(tiny_tokenizer).to(torch.bfloat16), tiny_tokenizer, "bfloat16", mixed_precision=False)
    assert mixed.info.mixed_precision is True and full.info.mixed_precision is False
    assert "mixed_precision" not in fp32.info.model_dump(exclude_none=True)  # fp32 records keep their bytes
    layers = [m for m in mixed.backend.model.modules() if isinstance(m, InvariantLinear)]
    assert layers and all(m.weight.dtype == torch.bfloat16 for m in layers)
    ref = fp32.score_texts(PROMPTS, 0, 10)
    got = {"mixed": mixed.score_texts(PROMPTS, 0, 10), "full": full.score_texts(PROMPTS, 0, 10)}
    dist = {k: [abs(a.normalized - b.normalized) for a, b in zip(ref, v)] for k, v in got.items()}
    assert max(dist["mixed"]) > 0  # it is bf16, not a copy of fp32


def test_a_resume_refuses_records_of_the_other_bf16(tmp_path, tiny_tokenizer):
    from localjudge.errors import ConfigError

    mixed = _judge(tiny_llama(tiny_tokenizer), tiny_tokenizer, "bfloat16", mixed_precision=True)
    full = _judge(tiny_llama(tiny_tokenizer).to(torch.bfloat16), tiny_tokenizer, "bfloat16", mixed_precision=False)
    with pytest.raises(ConfigError, match="'bfloat16', mixed precision"):
        full.info.check_same_judge(mixed.info.model_dump(), "r.jsonl")
    mixed.info.check_same_judge(mixed.info.model_dump(), "r.jsonl")


def _overflowing(tokenizer, word: str):
    """A tiny fp32 Llama whose embedding of `word` is inf: every state after that token overflows."""
    model = tiny_llama(tokenizer)
    ids = tokenizer(word, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        model.get_input_embeddings().weight[ids[-1]] = float("inf")
    return model


@pytest.mark.parametrize("invariant", [True, False], ids=["invariant", "stock"])
def test_an_overflowed_item_is_named_and_gets_no_score(tiny_tokenizer, invariant):
    judge = _judge(_overflowing(tiny_tokenizer, " mat"), tiny_tokenizer, "float32", batch_invariant=invariant)
    prompts = ["judges read 7 Score:", "a cat sat on the mat Score:"]
    with pytest.raises(NumericalError, match=r"item 1 \(prompt ending .*Score:.*\) overflowed float32"):
        judge.score_texts(prompts, 0, 10)
    assert np.isfinite(judge.score_texts(prompts[:1], 0, 10)[0].expected)  # the other item alone is fine


def test_overflow_in_likelihood_and_generation_is_refused(tiny_tokenizer):
    judge = _judge(_overflowing(tiny_tokenizer, " mat"), tiny_tokenizer, "float32")
    backend = judge.backend
    ok, bad = backend.encode("judges read"), backend.encode("the cat on the mat")
    cont = backend.encode_continuation(" seven")
    with pytest.raises(NumericalError, match="item 1"):
        backend.token_logprobs([ok, bad], [cont, cont])
    with pytest.raises(NumericalError, match="item 0"):
        judge.generate(["the cat sat on the mat", "judges read"], 3)
    assert judge.generate(["judges read"], 3)


def test_a_second_judge_over_the_same_model_keeps_its_low_weights(tiny_tokenizer):
    # regression: building a second backend widened the lowered weights back to fp32, so a judge's
    # first results were bf16 and its later ones fp32
    model = tiny_llama(tiny_tokenizer)
    first = _judge(model, tiny_tokenizer, "bfloat16", mixed_precision=True)
    before = first.score_texts(PROMPTS, 0, 10)
    _judge(model, tiny_tokenizer, "bfloat16", mixed_precision=True, token_budget=256)
    layers = [m for m in model.modules() if isinstance(m, InvariantLinear)]
    assert layers and all(m.weight.dtype == torch.bfloat16 for m in layers)
    assert [d.probs for d in first.score_texts(PROMPTS, 0, 10)] == [d.probs for d in before]


def test_a_mixed_judge_over_a_model_an_fp32_judge_used_is_mixed(tiny_tokenizer):
    # regression: the fp32 judge had made the linear layers batch-invariant, lowering skipped layers
    # that were no longer `nn.Linear`, and the "mixed" judge ran fp32 GEMMs under a bf16 label
    model = tiny_llama(tiny_tokenizer)
    fp32 = _judge(model, tiny_tokenizer, "float32")
    want_fp32 = [d.probs for d in fp32.score_texts(PROMPTS, 0, 10)]
    mixed = _judge(model, tiny_tokenizer, "bfloat16", mixed_precision=True)
    layers = [m for m in model.modules() if isinstance(m, InvariantLinear)]
    assert len(layers) == 2 * 7 and all(m.weight.dtype == torch.bfloat16 for m in layers)
    assert mixed.backend.gemm is not None and mixed.backend.gemm.dtype == torch.bfloat16  # probed again in bf16
    fresh = _judge(tiny_llama(tiny_tokenizer), tiny_tokenizer, "bfloat16", mixed_precision=True)
    got = [d.probs for d in mixed.score_texts(PROMPTS, 0, 10)]
    assert got == [d.probs for d in fresh.score_texts(PROMPTS, 0, 10)]  # what a judge on a fresh model reads
    assert got != want_fp32


def test_a_bf16_copy_of_an_invariant_model_is_probed_in_bf16(tiny_tokenizer):
    model = tiny_llama(tiny_tokenizer)
    _judge(model, tiny_tokenizer, "float32")
    low = _judge(model.to(torch.bfloat16), tiny_tokenizer, "bfloat16", mixed_precision=False)
    assert low.backend.gemm is not None and low.backend.gemm.dtype == torch.bfloat16
    fresh = _judge(tiny_llama(tiny_tokenizer).to(torch.bfloat16), tiny_tokenizer, "bfloat16", mixed_precision=False)
    assert [d.probs for d in low.score_texts(PROMPTS, 0, 10)] == [d.probs for d in fresh.score_texts(PROMPTS, 0, 10)]
