"""Faster drop-ins for the three slow steps of parsing a GGUF with gguf-py, giving the same values.

Profiled on the 0.5B Qwen judge's cold load (83 s on 2 cores): 35 s dequantising, in numpy, 16
rows at a time; 21 s building the metadata fields, one `np.memmap` view per vocabulary string
(memmap's Python-level `__getitem__` and `__array_finalize__`, four million calls); 6.5 s
decoding those strings one numpy byte at a time in transformers' `_gguf_parse_value`.

- `dequantize`: the block formats of the embedded judges (and their close relatives) unpacked with
  torch, on every core, in chunks of blocks. Each is gguf-py's own arithmetic in the same order and
  dtype (fp16 scales widened to fp32, then the same products and sums), so the weights are
  bitwise the ones gguf-py gives; other formats go to gguf-py.
- `fast_reader`: gguf-py's `GGUFReader` reading through a plain ndarray view of its memmap, and
  an array of strings in one loop, so each field part is an ordinary array (same values, dtypes,
  shapes and offsets).
- `fast_parse_value`: transformers' `_gguf_parse_value`, decoding a string's bytes in one call.
- `fresh_values`: the unpacked weights' array, in 4 KiB pages. numpy asks for transparent huge
  pages on arrays of 4 MiB or more; on the AVX2 Firecracker VMs these tests run on, a fresh huge
  page faults in at ~25 ms (13 ms per MiB, against 0.6 ms per MiB in 4 KiB pages), which made the
  0.5B judge's cold load 40 s instead of 13 s (`benchmarks/speed/gguf_parse_results.md`). Timing
  both ways at run time was tried and dropped: memory a process has just freed comes back already
  faulted in, huge pages included, so the first arrays' timings said huge pages were cheap and the
  rest of the parse paid for it. An earlier note that huge pages halved the 1.5B judge's parse on
  another VM type rests on a run its own notes call unreliable.

`gguf._parse_once` swaps them in for one load. `tests/judges/test_gguf_fast.py` checks all three
against gguf-py and transformers, on made-up blocks of every format and on the real files;
`benchmarks/speed/gguf_parse.py` on every tensor of the four embedded judges.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

QK_K = 256
_STRING, _ARRAY = 8, 9  # gguf value types
# values unpacked per step: the temporaries (8 MiB of fp32 each) stay below glibc's 32 MiB mmap threshold, so
# each step reuses the heap's pages where larger ones would map, and first-touch, fresh ones (page faults
# cost ~20 us each on a shared VM: 10 s for the 0.5B judge's temporaries)
_CHUNK_VALUES = 1 << 21


def _field(blocks, start: int, width: int, dtype):
    """The `width` bytes at `start` of each block read as one `dtype` value: (n_blocks, 1).

    Copied first: a view of a chunk starts at any byte, and a wider dtype needs aligned storage.
    """
    import torch

    return blocks[:, start : start + width].clone(memory_format=torch.contiguous_format).view(dtype)


def _half(blocks, start: int):
    """The fp16 scalar at byte `start` of each block, widened to fp32: (n_blocks, 1)."""
    import torch

    return _field(blocks, start, 2, torch.float16).to(torch.float32)


def _shifted(grouped, shifts: tuple[int, ...]):
    """Bytes `grouped` (n, g, 1, w) shifted right by each of `shifts`: (n, g, len(shifts), w), as gguf-py does."""
    import torch

    return grouped >> torch.tensor(shifts, dtype=grouped.dtype).reshape(1, 1, -1, 1)


def _nibbles(qs, width: int):
    """Low then high nibbles of each group of `width` bytes: (n_blocks, n_groups, 2 * width) uint8."""
    n = qs.shape[0]
    return (_shifted(qs.reshape(n, -1, 1, width), (0, 4)) & 0x0F).reshape(n, -1, 2 * width)


def _q4_0(blocks):
    import torch

    d = _half(blocks, 0)
    q = _nibbles(blocks[:, 2:], 16).reshape(blocks.shape[0], -1).to(torch.int8) - 8
    return d * q.to(torch.float32)


def _q4_1(blocks):
    import torch

    d, m = _half(blocks, 0), _half(blocks, 2)
    q = _nibbles(blocks[:, 4:], 16).reshape(blocks.shape[0], -1).to(torch.float32)
    return (d * q) + m


def _q5_bits(blocks, start: int):
    """Q5_0/Q5_1 quants before the offset: four low bits from the nibbles, the fifth from a uint32."""
    import torch

    n = blocks.shape[0]
    qh = _field(blocks, start, 4, torch.int32)  # the bits of gguf-py's uint32
    high = ((qh >> torch.arange(32, dtype=torch.int32).reshape(1, 32)) & 1).to(torch.uint8)
    low = _nibbles(blocks[:, start + 4 :], 16).reshape(n, -1)
    return low | (high << 4)


def _q5_0(blocks):
    import torch

    d = _half(blocks, 0)
    q = _q5_bits(blocks, 2).to(torch.int8) - 16
    return d * q.to(torch.float32)


def _q5_1(blocks):
    import torch

    d, m = _half(blocks, 0), _half(blocks, 2)
    return (d * _q5_bits(blocks, 4).to(torch.float32)) + m


def _q8_0(blocks):
    import torch

    d = _half(blocks, 0)
    x = blocks[:, 2:].contiguous().view(torch.int8).to(torch.float32)
    return x * d


def _k_scale_min(scales):
    """Q4_K/Q5_K's 12 bytes of 6-bit scales and mins per block: two (n_blocks, 8) uint8."""
    import torch

    d, m, m_d = scales[:, 0:4], scales[:, 4:8], scales[:, 8:12]
    sc = torch.cat([d & 0x3F, (m_d & 0x0F) | ((d >> 2) & 0x30)], dim=-1)
    mn = torch.cat([m & 0x3F, (m_d >> 4) | ((m >> 2) & 0x30)], dim=-1)
    return sc, mn


def _k_scaled(blocks):
    """Q4_K/Q5_K's per-sub-block scale and offset, (n_blocks, 8, 1) each, as gguf-py forms them."""
    import torch

    n = blocks.shape[0]
    d, dmin = _half(blocks, 0), _half(blocks, 2)
    sc, mn = _k_scale_min(blocks[:, 4:16])
    return (d * sc.to(torch.float32)).reshape(n, -1, 1), (dmin * mn.to(torch.float32)).reshape(n, -1, 1)


def _q4_k(blocks):
    import torch

    n = blocks.shape[0]
    d, dm = _k_scaled(blocks)
    q = _nibbles(blocks[:, 16:], 32).to(torch.float32)  # (n, 4, 64) -> (n, 8, 32)
    return (d * q.reshape(n, -1, 32) - dm).reshape(n, QK_K)


def _q5_k(blocks):
    import torch

    n = blocks.shape[0]
    d, dm = _k_scaled(blocks)
    low = _nibbles(blocks[:, 48:], 32).reshape(n, -1, 32)
    high = (_shifted(blocks[:, 16:48].reshape(n, -1, 1, 32), tuple(range(8))) & 1).reshape(n, -1, 32)
    q = (low | (high << 4)).to(torch.float32)
    return (d * q - dm).reshape(n, QK_K)


def _q6_k(blocks):
    import torch

    n = blocks.shape[0]
    ql, qh, scales = blocks[:, :128], blocks[:, 128:192], blocks[:, 192:208]
    d = _half(blocks, 208)
    d = (d * scales.contiguous().view(torch.int8).to(torch.float32)).reshape(n, QK_K // 16, 1)
    low = _nibbles(ql, 64).reshape(n, -1, 32)
    high = (_shifted(qh.reshape(n, -1, 1, 32), (0, 2, 4, 6)) & 0x03).reshape(n, -1, 32)
    q = (low | (high << 4)).to(torch.int8) - 32
    return (d * q.reshape(n, QK_K // 16, -1).to(torch.float32)).reshape(n, QK_K)


# ggml type id -> (values per block, bytes per block, unpacking); ids from ggml's `ggml_type`
BLOCKS: dict[int, tuple[int, int, Callable[[Any], Any]]] = {
    2: (32, 18, _q4_0),
    3: (32, 20, _q4_1),
    6: (32, 22, _q5_0),
    7: (32, 24, _q5_1),
    8: (32, 34, _q8_0),
    12: (QK_K, 144, _q4_k),
    13: (QK_K, 176, _q5_k),
    14: (QK_K, 210, _q6_k),
}


def dequantize_blocks(raw: np.ndarray, ggml_type: int) -> np.ndarray:
    """One tensor's quantised bytes (..., row_bytes) uint8 -> fp32 values (..., row_values).

    Args:
        raw: The tensor's bytes as gguf-py's reader gives them (rows of blocks).
        ggml_type: One of `BLOCKS`.
    """
    import warnings

    import torch

    per_block, block_bytes, unpack = BLOCKS[ggml_type]
    if raw.shape[-1] % block_bytes:
        raise ValueError(f"a row of {raw.shape[-1]} bytes is not whole blocks of {block_bytes} bytes")
    flat = np.ascontiguousarray(raw).reshape(-1, block_bytes)
    with warnings.catch_warnings():  # the file's pages are read-only and are only ever read
        warnings.simplefilter("ignore", UserWarning)
        blocks = torch.from_numpy(flat)
    # the array returned owns its memory; the loop writes through a view
    values = fresh_values((*raw.shape[:-1], raw.shape[-1] // block_bytes * per_block))
    out = torch.from_numpy(values.reshape(flat.shape[0], per_block))
    step = max(1, _CHUNK_VALUES // per_block)
    for start in range(0, flat.shape[0], step):
        out[start : start + step] = unpack(blocks[start : start + step])
    return values


def _madvise_setter() -> Callable[[bool], bool] | None:
    """numpy's switch for its huge-page advice on new arrays (returns the previous setting), if it has one."""
    core = getattr(np, "_core", None) or np.core  # numpy 2 / numpy 1
    return getattr(core.multiarray, "_set_madvise_hugepage", None)


def fresh_values(shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    """An uninitialised array for values about to be written, in 4 KiB pages (see the module docstring).

    A user's NUMPY_MADVISE_HUGEPAGE (numpy's own switch) is obeyed, as numpy obeys it.
    """
    setter = _madvise_setter()
    if setter is None or "NUMPY_MADVISE_HUGEPAGE" in os.environ:
        return np.empty(shape, dtype=dtype)
    before = setter(False)
    try:
        return np.empty(shape, dtype=dtype)
    finally:
        setter(before)


def fast_dequantize(real: Callable[[np.ndarray, Any], np.ndarray]) -> Callable[[np.ndarray, Any], np.ndarray]:
    """gguf-py's `dequantize`, with the formats of `BLOCKS` unpacked by `dequantize_blocks`."""

    def dequantize(data: np.ndarray, qtype) -> np.ndarray:
        if int(qtype) in BLOCKS and sys.byteorder == "little" and data.dtype == np.uint8:
            return dequantize_blocks(data, int(qtype))
        return real(data, qtype)

    return dequantize


def fast_reader(real: type) -> type:
    """gguf-py's `GGUFReader` class, reading its fields through a plain ndarray view of the file."""

    from gguf import GGUFValueType

    _VALUE_TYPES = {int(t) for t in GGUFValueType}

    class FastReader(real):
        def _get(self, offset, dtype, count=1, override_order=None):
            flat = self.__dict__.get("_flat")
            if flat is None:  # a plain view of the same pages: slicing it costs no Python-level memmap hooks
                flat = self.__dict__["_flat"] = self.data.view(np.ndarray)
            count = int(count)
            itemsize = np.dtype(dtype).itemsize
            arr = flat[offset : offset + itemsize * count].view(dtype=dtype)[:count]
            return arr.view(arr.dtype.newbyteorder(self.byte_order if override_order is None else override_order))

        def _get_field_parts(self, orig_offs, raw_type):
            if raw_type != _ARRAY or self.byte_order != "I":
                return super()._get_field_parts(orig_offs, raw_type)
            item_type, count = self._get(orig_offs, np.uint32), self._get(orig_offs + 4, np.uint64)
            if int(item_type[0]) not in _VALUE_TYPES:  # gguf-py's to judge (it checks the type of a first item)
                return super()._get_field_parts(orig_offs, raw_type)
            parts = [item_type, count]
            offs = orig_offs + 12
            # gguf-py names the item type only when there is an item
            types = [GGUFValueType.ARRAY] + ([GGUFValueType(int(item_type[0]))] if count[0] else [])
            scalar = self.gguf_scalar_to_np.get(GGUFValueType(int(item_type[0])))
            if scalar is not None:  # token scores, token types: one 1-item view per element, as gguf-py makes
                values = self._get(offs, scalar, count[0])
                parts += [values[i : i + 1] for i in range(len(values))]
                return 12 + values.nbytes, parts, list(range(2, len(parts))), types
            if item_type[0] != _STRING:
                return super()._get_field_parts(orig_offs, raw_type)
            # an array of strings (a vocabulary, its merges): its length and bytes per string, in one loop
            flat = self.__dict__["_flat"]
            data = []
            for _ in range(int(count[0])):
                length = flat[offs : offs + 8].view(np.uint64)
                end = offs + 8 + int(length[0])
                parts += (length, flat[offs + 8 : end])
                data.append(len(parts) - 1)
                offs = end
            return offs - orig_offs, parts, data, types

    FastReader.__name__ = FastReader.__qualname__ = real.__name__
    return FastReader


def fast_parse_value(real: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """transformers' `_gguf_parse_value`, decoding a string (or an array's string) with one `bytes()`."""

    def parse_value(value, data_type):
        types = data_type if isinstance(data_type, list) else [data_type]
        if isinstance(value, np.ndarray) and types[-1] == 8 and (len(types) == 1 or types[0] == 9):
            return value.tobytes().decode()
        return real(value, data_type)

    return parse_value
