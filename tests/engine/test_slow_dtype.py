"""A reduced-precision judge on a CPU without native kernels for it says so when it loads, and records what runs."""

from __future__ import annotations

import copy
import logging

import pytest
import torch

from localjudge import Judge
from localjudge.engine import invariant
from localjudge.engine.options import EngineOptions
from localjudge.testing.tiny_models import tiny_info, tiny_llama


def _load(tokenizer, dtype: str) -> Judge:
    model = tiny_llama(tokenizer).to(getattr(torch, dtype))
    info = tiny_info().model_copy(update={"dtype": dtype})
    return Judge.from_model(model, tokenizer, info, EngineOptions(device="cpu", dtype=dtype, token_budget=512))


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "without native kernels" in r.getMessage()]


def test_bf16_without_native_kernels_warns_once_at_load(monkeypatch, caplog, tiny_tokenizer):
    monkeypatch.setattr(invariant, "can_prepack", lambda weight: weight.dtype == torch.float32)
    with caplog.at_level(logging.WARNING, logger="localjudge"):
        judge = _load(tiny_tokenizer, "bfloat16")
        judge.score_texts(["Rate it. Score:"], 1, 5)  # scoring adds no second warning
    (msg,) = _warnings(caplog)
    assert msg.startswith("bfloat16 on this CPU") and "--dtype float32" in msg


def test_fp32_never_warns(monkeypatch, caplog, tiny_tokenizer):
    monkeypatch.setattr(invariant, "can_prepack", lambda weight: False)
    with caplog.at_level(logging.WARNING, logger="localjudge"):
        _load(tiny_tokenizer, "float32")
    assert _warnings(caplog) == []


@pytest.mark.parametrize("native", [True, False])
def test_slow_dtype_follows_the_kernels(monkeypatch, tiny_tokenizer, native):
    model = tiny_llama(tiny_tokenizer).to(torch.bfloat16)
    monkeypatch.setattr(invariant, "can_prepack", lambda weight: native)
    assert (invariant.slow_dtype(model) is None) == native


def test_a_model_cast_after_it_was_made_invariant_records_the_kernel_that_runs(monkeypatch, tiny_tokenizer):
    # an fp32 judge prepacks its weights; a bf16 copy of that model keeps the layers and chunk shapes,
    # but where bf16 cannot be prepacked its layers run F.linear, and the record must say so
    monkeypatch.setattr(invariant, "can_prepack", lambda weight: weight.dtype == torch.float32)
    fp32 = _load(tiny_tokenizer, "float32")
    assert fp32.info.gemm.endswith("prepacked")
    model = copy.deepcopy(fp32.backend.model).to(torch.bfloat16)
    info = tiny_info().model_copy(update={"dtype": "bfloat16"})
    bf16 = Judge.from_model(model, tiny_tokenizer, info, fp32.options.replace(dtype="bfloat16"))
    assert bf16.info.gemm.endswith("stock linear") and bf16.info.bitwise
