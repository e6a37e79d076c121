"""A GGUF judge's prepared copy written tensor by tensor: a first load never holds the whole model.

Parsing a GGUF into an fp32 model, casting it to the run's layout and saving it held the fp32
model, the GGUF's pages and safetensors' serialised bytes at once: a first load peaked at 2-5x
the judge's weights (`benchmarks/memory/memory_results.md`). Here the model is built on the meta
device (shapes and dtypes, no data) and cast there to the layout (`gguf.to_layout`);
transformers' `save_pretrained` writes its config files and hands its tensors, as it would to
safetensors, to `_StreamedFile`, which lays the file out as safetensors does (the same header,
the same order of tensors) and leaves the data to come. transformers' own GGUF loop (its reader,
tensor-name map and tensor processor, with `gguf_fast`'s dequantiser, as a parse runs it) then
unpacks the GGUF one tensor at a time, and each tensor is cast as `to_layout` casts it and written
at its place. The copy is byte for byte the one a parse writes (`tests/judges/test_streamed_copy.py`),
and the load holds one tensor (the largest: the embedding) where a parse held the model.

A GGUF this cannot reproduce exactly (an architecture transformers loads through its newer GGUF
path, a processor that builds tensors of its own, a tensor the model has and the GGUF lacks)
raises `Unstreamable` before the copy is kept; the caller then parses the GGUF whole, as before.
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from localjudge.weights.gguf_parse import UNLOADABLE, _parse_once, cannot_load, to_layout

# safetensors orders a file's tensors by dtype (its enum, the widest first), then by name
_DTYPES = {"float32": ("F32", 4, 2), "bfloat16": ("BF16", 2, 1), "float16": ("F16", 2, 0)}
"""torch dtype -> (safetensors code, bytes per value, rank in safetensors' order)."""
_TORCH = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}
_MADV_DONTNEED = 4  # Linux
_WRITE = 1 << 26  # bytes per `pwrite`: a large tensor in slices the kernel takes whole


class Unstreamable(Exception):
    """This GGUF's copy cannot be written tensor by tensor exactly as a parse writes it."""


class _StreamedFile:
    """A safetensors file laid out for `tensors` (names -> meta tensors), its data written later by name."""

    def __init__(self, tensors: dict[str, Any], filename: str, metadata: dict[str, str] | None):
        order = []
        for name, tensor in tensors.items():
            kind = _DTYPES.get(str(tensor.dtype).removeprefix("torch."))
            if kind is None:
                raise Unstreamable(f"{name} is stored as {tensor.dtype}")
            order.append((-kind[2], name, kind, tuple(tensor.shape)))
        order.sort()
        header: dict[str, Any] = {"__metadata__": metadata} if metadata else {}
        self.places: dict[str, tuple[int, int, tuple[int, ...], str]] = {}
        offset = 0
        for _, name, (code, width, _), shape in order:
            size = width
            for n in shape:
                size *= n
            header[name] = {"dtype": code, "shape": list(shape), "data_offsets": [offset, offset + size]}
            self.places[name] = (offset, size, shape, code)
            offset += size
        text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
        text += b" " * (-len(text) % 8)  # safetensors pads its header with spaces to 8 bytes
        self.start = 8 + len(text)
        self.missing = set(self.places)
        self.fd = os.open(filename, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.pwrite(self.fd, len(text).to_bytes(8, "little") + text, 0)
        os.ftruncate(self.fd, self.start + offset)

    def write(self, name: str, tensor: Any) -> None:
        """Writes `tensor` (CPU, in the dtype the header gives `name`) at its place."""
        import torch

        at, size, shape, code = self.places[name]
        if tuple(tensor.shape) != shape or _DTYPES[str(tensor.dtype).removeprefix("torch.")][0] != code:
            raise Unstreamable(f"{name}: the GGUF gives {tuple(tensor.shape)} {tensor.dtype}, the model {shape} {code}")
        if name not in self.missing:
            raise Unstreamable(f"the GGUF gives {name} twice")
        data = memoryview(tensor.contiguous().reshape(-1).view(torch.uint8).numpy())
        assert len(data) == size
        done = 0
        while done < size:  # `pwrite` may write less than it is given
            done += os.pwrite(self.fd, data[done : done + _WRITE], self.start + at + done)
        self.missing.discard(name)

    def close(self) -> None:
        os.close(self.fd)


@contextmanager
def streamed_copy(path: Path, layout: str) -> Iterator[StreamedCopy]:
    """The copy of the GGUF at `path` in `layout`, ready to write (`StreamedCopy.write`), within one
    parse of the GGUF's metadata (`gguf._parse_once`).

    Raises:
        Unstreamable: this GGUF needs the parse (see the module docstring).
    """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    with _parse_once():
        try:
            tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
            config = AutoConfig.from_pretrained(path.parent, gguf_file=path.name)
        except UNLOADABLE as exc:
            raise cannot_load(path, exc) from None
        if hasattr(config, "quantization_config"):  # dequantised as it is written: as `parse_gguf` leaves it
            del config.quantization_config
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        to_layout(model, layout)
        yield StreamedCopy(path, model, tokenizer)


class StreamedCopy:
    """A GGUF's prepared copy as a model on the meta device (cast to its layout) and its tokenizer."""

    def __init__(self, path: Path, model: Any, tokenizer: Any):
        self.path, self.model, self.tokenizer = path, model, tokenizer
        self.size = sum(p.numel() * p.element_size() for p in model.parameters())
        """Bytes of the weights (a tied weight once), as the copy stores them."""

    def write(self, folder: Path) -> None:
        """Writes the copy's files into `folder`, one tensor in memory at a time: byte for byte those of
        parsing the GGUF in fp32, `to_layout` and `save_pretrained` with the tokenizer's (`gguf._save`).

        Raises:
            Unstreamable: the GGUF and the model do not match tensor for tensor; `folder` is to be dropped.
        """
        import torch
        from transformers import modeling_utils

        files: list[_StreamedFile] = []

        def lay_out(tensors, filename, metadata=None):
            files.append(_StreamedFile(tensors, filename, metadata))

        real_save = modeling_utils.safe_save_file
        modeling_utils.safe_save_file = lay_out  # the config files written by transformers, the data here
        try:
            self.model.save_pretrained(folder)
        finally:
            modeling_utils.safe_save_file = real_save
        try:
            where = {name: f for f in files for name in f.places}
            for name, values in _gguf_tensors(self.path, self.model):
                if name not in where:
                    raise Unstreamable(f"the GGUF gives {name}, which the copy does not store")
                f = where[name]
                # loaded into an fp32 parameter, then cast by `to_layout`: the same two steps
                f.write(name, values.to(torch.float32).to(getattr(torch, _TORCH[f.places[name][3]])))
                del values
            missing = sorted(n for f in files for n in f.missing)
            if missing:
                raise Unstreamable(f"the GGUF lacks {missing[:3]}")
        finally:
            for f in files:
                f.close()
        self.tokenizer.save_pretrained(folder)


def _gguf_tensors(path: Path, model) -> Iterator[tuple[str, Any]]:
    """(parameter name, fp32 tensor) for each GGUF tensor `model` reads, as transformers' GGUF loader
    makes them (`load_gguf_checkpoint`'s loop, run inside `_parse_once`), one at a time."""
    import gguf
    import torch
    from transformers import modeling_gguf_pytorch_utils as hf_gguf

    parsed = hf_gguf.load_gguf_checkpoint(str(path), return_tensors=False)
    reader = gguf.GGUFReader(str(path))
    architecture = hf_gguf.read_field(reader, "general.architecture")[0]
    if _newer_loader(architecture):
        raise Unstreamable(f"transformers loads {architecture} GGUFs through its own dequantising loader")
    processor = hf_gguf.TENSOR_PROCESSORS.get(architecture, hf_gguf.TensorProcessor)(config=parsed["config"])
    mapping = hf_gguf.get_gguf_hf_weights_map(model, processor)
    parsed["tensors"] = {}
    for tensor in reader.tensors:
        weights = gguf.dequantize(tensor.data, tensor.tensor_type)
        result = processor.process(
            weights=weights, name=tensor.name, tensor_key_mapping=mapping, parsed_parameters=parsed
        )
        if parsed["tensors"]:
            raise Unstreamable(f"{architecture}'s tensor processor builds tensors of its own")
        if result.name in mapping:
            yield mapping[result.name], torch.from_numpy(hf_gguf.np.copy(result.weights))
        _forget(tensor.data)


def _forget(data: Any) -> None:
    """Drops the whole pages of a tensor's bytes in the GGUF's map from the resident set (`madvise`):
    each is read once, and the map is shared and read-only, so the page cache keeps them and a later
    read faults them in again. Without this the first load held every page of the GGUF to its end."""
    if not sys.platform.startswith("linux"):
        return
    page = mmap.PAGESIZE
    start = data.ctypes.data
    first, last = -(-start // page) * page, (start + data.nbytes) // page * page
    if last > first:
        ctypes.CDLL(None).madvise(ctypes.c_void_p(first), ctypes.c_size_t(last - first), _MADV_DONTNEED)


def _newer_loader(architecture: str) -> bool:
    """Whether transformers loads this architecture's GGUFs through its newer loader (its own
    dequantising weight conversions), not the loop `_gguf_tensors` runs."""
    try:
        from transformers.integrations.gguf.utils import is_gguf_arch_supported
    except ImportError:  # a transformers with the one GGUF loader
        return False
    return bool(is_gguf_arch_supported(architecture))
