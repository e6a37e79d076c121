"""A batch-invariant layer holds its weight once: oneDNN's packed copy, the plain tensor let go.

Where the plan prepacks (fp32 on every CPU here, bf16 where oneDNN has native kernels), a layer
whose weight no other module reads drops the plain tensor after packing it; reading the weight,
casting, copying or saving the model gives it back exactly (`to_dense`), and every result stays
the same to the bit. Checked on a tiny Llama through `Judge.from_model`, as a judge runs.
"""

from __future__ import annotations

import copy
import mmap
import sys

import numpy as np
import pytest
import torch

from localjudge import Judge
from localjudge.engine.invariant import InvariantLinear, can_prepack
from localjudge.engine.options import EngineOptions
from localjudge.engine.pages import drop_pages
from localjudge.testing.tiny_models import tiny_info, tiny_llama

pytestmark = pytest.mark.usefixtures("torch_one_thread")
PROMPTS = ["the answer is good. Score:", "Rating 7/10 and the response is fluent. Score: ", "a cat. Score:"]


def _judge(model, tokenizer, dtype: str = "float32", mixed: bool | None = False) -> Judge:
    info = tiny_info().model_copy(update={"dtype": dtype})
    options = EngineOptions(device="cpu", dtype=dtype, mixed_precision=mixed).resolve(False)
    return Judge.from_model(model, tokenizer, info, options)


def _scores(judge: Judge) -> np.ndarray:
    out = judge.score_texts(PROMPTS, low=0, high=10)
    return np.array([[d.probs[k] for k in sorted(d.probs)] + [d.valid_mass] for d in out])


def _layers(model) -> list[InvariantLinear]:
    return [m for m in model.modules() if isinstance(m, InvariantLinear)]


def _plain(model) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def test_a_run_lets_the_plain_weights_go_and_keeps_its_scores(tiny_tokenizer):
    model = tiny_llama(tiny_tokenizer)
    before = _plain(model)
    judge = _judge(model, tiny_tokenizer)
    first = _scores(judge)
    layers = _layers(model)
    assert layers and all(layer.released for layer in layers)
    for layer in layers:
        held = layer._parameters["weight"]
        assert held.untyped_storage().nbytes() == held.element_size()  # one element, not out x in
        assert held.shape == (layer.out_features, layer.in_features) and held.dtype == torch.float32
    assert not model.lm_head.weight.stride() == (0, 0)  # the output layer is read apart, never let go
    assert np.array_equal(_scores(judge), first)
    # a model whose layers never let go reads the same bits
    kept = tiny_llama(tiny_tokenizer)
    other = _judge(kept, tiny_tokenizer)
    for layer in _layers(kept):
        layer.release = False
    assert np.array_equal(_scores(other), first) and not any(layer.released for layer in _layers(kept))
    assert all(torch.equal(before[name], p) for name, p in _plain(kept).items())


def test_reading_a_released_weight_gives_it_back_exactly(tiny_tokenizer):
    model = tiny_llama(tiny_tokenizer)
    before = _plain(model)
    judge = _judge(model, tiny_tokenizer)
    first = _scores(judge)
    layer = _layers(model)[0]
    name = next(n for n, m in model.named_modules() if m is layer) + ".weight"
    assert layer.released and torch.equal(layer.weight, before[name]) and not layer.released
    assert np.array_equal(_scores(judge), first) and layer.released  # packed and let go again
    state = model.state_dict()  # every layer's plain weight, none a stand-in
    assert all(torch.equal(state[n], before[n]) for n in before)
    copied = copy.deepcopy(model)
    assert all(torch.equal(p, before[n]) for n, p in copied.named_parameters())
    assert np.array_equal(_scores(_judge(copied, tiny_tokenizer)), first)


def test_a_cast_model_casts_the_plain_weights(tiny_tokenizer):
    model = tiny_llama(tiny_tokenizer)
    before = _plain(model)
    _scores(_judge(model, tiny_tokenizer))
    model.to(torch.float64)  # `_apply` rebuilds each layer's weight before casting it
    assert all(torch.equal(p, before[n].double()) for n, p in model.named_parameters())


def test_a_mixed_judge_over_a_model_whose_weights_were_let_go_is_a_mixed_judge(tiny_tokenizer):
    model = tiny_llama(tiny_tokenizer)
    _scores(_judge(model, tiny_tokenizer))
    assert all(layer.released for layer in _layers(model))
    again = _scores(_judge(model, tiny_tokenizer, "bfloat16", mixed=True))
    fresh = _scores(_judge(tiny_llama(tiny_tokenizer), tiny_tokenizer, "bfloat16", mixed=True))
    assert np.array_equal(again, fresh)


def test_bf16_weights_are_let_go_where_they_are_packed_and_come_back_exactly(tiny_tokenizer):
    model = tiny_llama(tiny_tokenizer).to(torch.bfloat16)
    before = _plain(model)
    _scores(_judge(model, tiny_tokenizer, "bfloat16"))
    packs = can_prepack(model.lm_head.weight)  # native bf16 kernels (AVX-512 BF16, AMX) only
    assert all(layer.released == packs for layer in _layers(model))
    state = model.state_dict()
    assert all(torch.equal(state[n], before[n]) for n in before)


def _resident_bytes(file) -> int:
    """The bytes of `file`'s mappings resident in this process (/proc/self/smaps)."""
    total, inside = 0, False
    for line in open("/proc/self/smaps", encoding="utf-8"):
        head = line.split()
        if "-" in head[0] and len(head) >= 5:  # a mapping's first line: its range, and its path if any
            inside = len(head) == 6 and head[5] == str(file)
        elif inside and head[0] == "Rss:":
            total += int(head[1]) * 1024
    return total


FAULT_AROUND = 128 << 10
"""Bytes a page fault may map beside the page read (Linux maps up to `fault_around_bytes`, 64 KiB by
default, of neighbours already in the page cache): what a read of a tensor beside a dropped one brings back."""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="page residency is read from /proc (Linux)")
def test_a_weight_mapped_from_its_file_leaves_the_resident_set(tmp_path, tiny_tokenizer):
    from transformers import AutoModelForCausalLM

    # weights of 0.25-2 MiB, so that a page faulted beside one cannot bring it back
    tiny_llama(tiny_tokenizer, hidden=256, intermediate=2048).save_pretrained(tmp_path)  # read back memory-mapped
    model = AutoModelForCausalLM.from_pretrained(tmp_path).eval()
    file = tmp_path / "model.safetensors"
    linear = sum(p.numel() * 4 for n, p in model.model.named_parameters() if n.endswith("proj.weight"))
    with torch.no_grad():
        sum(float(p.sum()) for p in model.parameters())  # every page read, as a run of the model would
    before = _resident_bytes(file)
    assert before >= linear  # the weights are read through the map
    first = _scores(_judge(model, tiny_tokenizer))
    layers = _layers(model)
    assert all(layer.released for layer in layers)
    # each released weight's whole pages left; reads of its neighbours may map some back at its ends
    assert _resident_bytes(file) <= before - linear + 2 * len(layers) * (FAULT_AROUND + mmap.PAGESIZE)
    reloaded = AutoModelForCausalLM.from_pretrained(tmp_path).eval()
    assert np.array_equal(_scores(_judge(reloaded, tiny_tokenizer)), first)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), reloaded.state_dict().values()))


def test_pages_are_dropped_only_from_a_file_map_no_one_else_reads():
    anonymous = torch.arange(1 << 16, dtype=torch.float32)
    assert drop_pages(anonymous) == 0 and anonymous[-1] == (1 << 16) - 1
    view = anonymous[1:]
    assert drop_pages(anonymous) == 0 and view[0] == 1  # a view shares its storage: kept


@pytest.mark.parametrize("bias", [False, True])
def test_a_weight_kept_whole_is_read_as_it_is_with_the_packed_copys_bits(bias):
    """A weight another module reads (a tied embedding as the output layer) is not packed beside
    itself where oneDNN gives the packed copy's bits reading it unpacked (`same_bits_unpacked`)."""
    from localjudge.engine.invariant import GemmPlan, chunked, pack, packed_gemm, same_bits_unpacked

    layer = torch.nn.Linear(96, 3000, bias=bias)
    plan = GemmPlan(16, 8, packed=True)
    if not can_prepack(layer.weight):
        pytest.skip("oneDNN cannot pack fp32 weights here")
    assert same_bits_unpacked(layer.weight, layer.bias, plan)  # measured so on the CPUs this runs on
    kept = InvariantLinear(layer, plan)  # release=False: the weight stays whole
    x = torch.randn(37, 96, generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        out = kept(x)
        packed = chunked(packed_gemm(pack(layer.weight, 16), layer.bias), x, 16, 8, 3000)
    assert kept._unpack is None and not kept.released  # no packed copy to unpack: the plain weight is read
    assert kept._held() is layer.weight
    assert torch.equal(out, packed)


def test_a_judges_tied_output_layer_holds_no_copy_of_the_embedding(tiny_tokenizer):
    from localjudge.engine.invariant import read_layer

    model = tiny_llama(tiny_tokenizer)
    model.lm_head.weight = model.model.embed_tokens.weight  # tied, as SmolLM2's and Gemma's are
    judge = _judge(model, tiny_tokenizer)
    first = _scores(judge)
    head = read_layer(model.lm_head, True, True)
    if not (isinstance(head, InvariantLinear) and head.plan.packed):
        pytest.skip("no packed plan here")
    assert head._held() is model.model.embed_tokens.weight and head._unpack is None
    assert np.array_equal(_scores(judge), first)
