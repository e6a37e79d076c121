"""A first load writes its prepared copy tensor by tensor (`weights.gguf_stream`): the same bytes as
parsing the GGUF whole and saving the model, in every layout, without the model in memory.

On the tiny Llama GGUF (tests/support/tiny_gguf.py; Q8_0 blocks and F32 tensors, q/k permuted as
llama GGUFs are); `benchmarks/memory` compares the embedded judges' copies the same way.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
import torch
from tiny_gguf import write_tiny_gguf

from localjudge import load_judge
from localjudge.engine.options import EngineOptions
from localjudge.testing.tiny_models import tiny_llama
from localjudge.weights.gguf import _save, parse_gguf, to_layout
from localjudge.weights.gguf_stream import StreamedCopy, Unstreamable, _StreamedFile, streamed_copy

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.fixture(scope="module")
def gguf_path(tmp_path_factory, tiny_tokenizer) -> Path:
    return write_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf", tiny_tokenizer, tiny_llama(tiny_tokenizer))


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("layout", ["float32", "bfloat16", "float16", "bfloat16-mixed", "float16-mixed"])
def test_the_streamed_copy_is_byte_for_byte_the_parsed_one(gguf_path, tmp_path, layout):
    parsed, streamed = tmp_path / "parsed", tmp_path / "streamed"
    model, tokenizer = parse_gguf(gguf_path, torch.float32)
    to_layout(model, layout)
    _save(model, tokenizer, parsed)
    with streamed_copy(gguf_path, layout) as copy:
        assert all(p.device.type == "meta" for p in copy.model.parameters())  # shapes and dtypes, no data
        assert copy.size == sum(p.numel() * p.element_size() for p in model.parameters())
        copy.write(streamed)
    assert {"model.safetensors", "config.json", "tokenizer.json"} <= set(_files(streamed))
    assert _files(streamed) == _files(parsed)


def test_a_cold_load_streams_its_copy_and_loads_it(gguf_path, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="localjudge")
    options = EngineOptions(device="cpu", dtype="bfloat16", mixed_precision=True)
    load_judge(str(gguf_path), options=options, cache=tmp_path, progress=False)
    assert "prepared copy of tiny.gguf written" in caplog.text
    assert "parsed whole" not in caplog.text


def _reference(tensors: dict[str, torch.Tensor], path: Path) -> bytes:
    from safetensors.torch import save_file

    save_file(tensors, str(path), metadata={"format": "pt"})
    return path.read_bytes()


def test_a_streamed_file_is_laid_out_as_safetensors_lays_it_out(tmp_path):
    g = torch.Generator().manual_seed(0)
    tensors = {
        "b.weight": torch.randn(3, 5, generator=g).to(torch.bfloat16),
        "a.weight": torch.randn(7, generator=g),
        "B.bias": torch.randn(2, 2, generator=g).to(torch.float16),
        "z.norm": torch.randn(1, generator=g),
        "m.scale": torch.randn((), generator=g),
        "c.empty": torch.zeros(0, 4),
        "a.half": torch.randn(9, generator=g).to(torch.float16),
    }
    streamed = _StreamedFile({n: t.to("meta") for n, t in tensors.items()}, str(tmp_path / "s"), {"format": "pt"})
    for name in reversed(list(tensors)):  # in any order: each goes to its place
        streamed.write(name, tensors[name])
    assert not streamed.missing
    streamed.close()
    assert (tmp_path / "s").read_bytes() == _reference(tensors, tmp_path / "r")


def test_a_streamed_file_refuses_a_tensor_that_is_not_the_one_laid_out(tmp_path):
    laid = {"w": torch.empty(2, 3, device="meta"), "v": torch.empty(4, device="meta", dtype=torch.bfloat16)}
    streamed = _StreamedFile(laid, str(tmp_path / "s"), None)
    try:
        with pytest.raises(Unstreamable, match="w: the GGUF gives"):
            streamed.write("w", torch.zeros(3, 2))
        with pytest.raises(Unstreamable, match="v: the GGUF gives"):
            streamed.write("v", torch.zeros(4))  # fp32 where bf16 was laid out
        streamed.write("w", torch.zeros(2, 3))
        with pytest.raises(Unstreamable, match="twice"):
            streamed.write("w", torch.zeros(2, 3))
        assert streamed.missing == {"v"}
    finally:
        streamed.close()
    with pytest.raises(Unstreamable, match="int64"):
        _StreamedFile({"i": torch.empty(2, dtype=torch.int64, device="meta")}, str(tmp_path / "i"), None)


def test_a_copy_the_gguf_does_not_fill_is_refused_and_left_to_the_parse(gguf_path, tmp_path):
    """A tensor the model stores and the GGUF lacks (transformers would initialise it at random)."""
    with streamed_copy(gguf_path, "float32") as copy:
        extra = torch.nn.Parameter(torch.empty(3, device="meta"), requires_grad=False)
        copy.model.model.norm.register_parameter("extra", extra)
        with pytest.raises(Unstreamable, match="lacks"):
            copy.write(tmp_path)
    assert isinstance(copy, StreamedCopy)
    assert os.path.getsize(tmp_path / "model.safetensors") > 0  # the caller (`store_prepared`) drops the folder
