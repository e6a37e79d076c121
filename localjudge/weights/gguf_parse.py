"""Reading a GGUF through transformers: one parse shared by its readers, the cast to a layout, and the
error for a GGUF it cannot read. Both ways of preparing a judge's copy use these (`weights.gguf`,
which parses the file whole, and `weights.gguf_stream`, which writes it tensor by tensor).
"""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from localjudge.errors import ModelUnavailableError
from localjudge.weights.gguf_fast import fast_dequantize, fast_parse_value, fast_reader

_PATCHING = threading.Lock()  # `_parse_once` swaps module attributes of `gguf` for the whole process


def to_layout(model, layout: str) -> None:
    """Casts a parsed fp32 model's parameters in place to `layout` (`cache.LAYOUTS`), one tensor at a time.

    "bfloat16" / "float16": every floating parameter; "<dtype>-mixed": the weights mixed precision
    lowers (`engine.mixed.lowered_weights`), the rest kept fp32. Each cast is the one a load in that
    dtype (or `lower_linears`) makes of the fp32 values, so the copy holds the numbers the run uses.
    """
    import torch

    from localjudge.engine.mixed import lowered_weights

    if layout == "float32":
        return
    dtype = getattr(torch, layout.removesuffix("-mixed"))
    if layout.endswith("-mixed"):
        params = list(lowered_weights(model, model.get_output_embeddings()).values())
    else:
        params = [p for p in model.parameters() if p.is_floating_point()]
    for param in params:
        param.data = param.data.to(dtype)


UNLOADABLE = (ValueError, KeyError, NotImplementedError)
"""What transformers raises for a GGUF it cannot read (an unsupported architecture, a missing field)."""


def cannot_load(path: Path, exc: Exception) -> ModelUnavailableError:
    """The error for a GGUF transformers cannot read, whichever loading path met it."""
    return ModelUnavailableError(
        f"transformers cannot load the GGUF {path.name}: {exc}; convert it to safetensors "
        "or use a GGUF of a supported architecture (llama, mistral, qwen2, gemma3, phi3...)"
    )


@contextmanager
def _parse_once() -> Iterator[None]:
    """Lets transformers' reads of a GGUF share one parse (`gguf.GGUFReader`), one tensor-name map
    and one metadata reading, and swaps in the faster, bit-identical reader, dequantiser and value
    parser of `gguf_fast`.

    transformers imports these from `gguf` and from its own `modeling_gguf_pytorch_utils` when it
    calls them, so swapping the module attributes reaches every read; they are restored on exit.
    The name map is built per module of the model (hundreds of times) from the same two
    arguments; the tokenizer's and the config's reads ask for the metadata alone
    (`return_tensors=False`) and get copies of one reading. transformers copies every dequantised
    tensor (`np.copy`) before it wraps it: needed for a tensor that is a view of the file (F32, F16),
    not for the fresh array the dequantiser returns, which nothing else holds; `_NoCopyOfOwnArrays`
    skips that copy (2 GB of fresh memory for the 0.5B Qwen judge).
    """
    import gguf
    from transformers import modeling_gguf_pytorch_utils as hf_gguf

    names = (
        (gguf, "GGUFReader"),
        (gguf, "get_tensor_name_map"),
        (gguf, "dequantize"),
        (hf_gguf, "load_gguf_checkpoint"),
        (hf_gguf, "_gguf_parse_value"),
        (hf_gguf, "np"),
    )
    real = [getattr(module, name) for module, name in names]
    real_reader, real_map, real_dequantize, real_checkpoint, real_parse_value, real_np = real
    fast_reader_class = fast_reader(real_reader)
    readers: dict[tuple, Any] = {}
    metadata: dict[str, Any] = {}

    def reader(path, *args, **kwargs):
        key = (os.path.realpath(path), args, tuple(sorted(kwargs.items())))
        if key not in readers:
            readers[key] = fast_reader_class(path, *args, **kwargs)
        return readers[key]

    def checkpoint(path, return_tensors=False, **kwargs):
        if return_tensors or kwargs:
            return real_checkpoint(path, return_tensors=return_tensors, **kwargs)
        key = os.path.realpath(path)
        if key not in metadata:
            metadata[key] = real_checkpoint(path, return_tensors=False)
        return copy.deepcopy(metadata[key])  # callers edit what they get

    patched = (
        reader,
        lru_cache(maxsize=None)(real_map),
        fast_dequantize(real_dequantize),
        checkpoint,
        fast_parse_value(real_parse_value),
        _NoCopyOfOwnArrays(real_np),
    )
    with _PATCHING:
        for (module, name), value in zip(names, patched):
            setattr(module, name, value)
        try:
            yield
        finally:
            for (module, name), value in zip(names, real):
                setattr(module, name, value)


class _NoCopyOfOwnArrays:
    """numpy as transformers' GGUF module sees it, except that `copy` of an array that owns its
    memory, is writable and C-contiguous returns that array: such an array is a fresh result of the
    dequantiser or of a processor's arithmetic, referenced by nobody else; a view (of the mapped
    file, of another array) is copied as before. Sharing changes no value: `torch.from_numpy` of
    the array is what the copy would have been, without writing the weights a second time.
    """

    def __init__(self, numpy: Any):
        self._np = numpy

    def __getattr__(self, name: str) -> Any:
        return getattr(self._np, name)

    def copy(self, a: Any, *args: Any, **kwargs: Any) -> Any:
        if not args and not kwargs and type(a) is self._np.ndarray:
            if a.flags.owndata and a.flags.writeable and a.flags.c_contiguous:
                return a
        return self._np.copy(a, *args, **kwargs)
