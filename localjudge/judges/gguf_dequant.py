"""GGUF dequantisation, bitwise the same as gguf-py's and 2-3x as fast.

transformers dequantises each GGUF tensor with `gguf.dequantize`, which runs the quantisation
type's block formula (`dequantize_blocks`) over groups of 16 rows of a `numpy.memmap`: thousands of
small calls, each paying the memmap subclass's bookkeeping. `dequantize` here runs the same
`dequantize_rows` of the same gguf-py class on plain-array views of about four million values at a
time, on a few threads (numpy releases the GIL inside its loops). The formula is elementwise per
block, so the grouping cannot change a value: every tensor of the four embedded judges comes out
bit for bit as gguf-py's (`tests/test_gguf_dequant.py` checks every tensor of SmolLM2's GGUF;
`benchmarks/load.py` records the check and the time on all four). Types gguf-py handles
differently (F32, F16, grid-based IQ types) and lazy tensors go to gguf-py itself.

Measured on the 0.5B Qwen judge's 291 tensors (2 cores): 7.9 s with gguf-py, 3.3 s here.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

GROUP_VALUES = 1 << 22
"""Dequantised values per call of `dequantize_rows` (16 MiB of fp32): large enough that numpy's
per-call overhead vanishes, small enough that the temporaries stay in memory bandwidth's reach."""


def dequantize(data: Any, qtype: Any) -> Any:
    """The fp32 values of one GGUF tensor's bytes, as `gguf.dequantize(data, qtype)` gives them.

    Examples:
        >>> import gguf
        >>> import numpy as np
        >>> q8 = gguf.GGMLQuantizationType.Q8_0
        >>> packed = gguf.quantize(np.linspace(-1, 1, 64, dtype=np.float32).reshape(2, 32), q8)
        >>> np.array_equal(dequantize(packed, q8), gguf.dequantize(packed, q8))
        True
    """
    import numpy as np
    from gguf import quants

    kind = quants._type_traits.get(qtype)
    if kind is None or kind.grid_hex is not None or not isinstance(data, np.ndarray) or data.ndim == 0:
        return quants.dequantize(data, qtype)
    raw = np.asarray(data)  # a plain view: no memmap subclass on every slice
    rows = raw.reshape(-1, raw.shape[-1])
    shape = quants.quant_shape_from_byte_shape(raw.shape, qtype)
    out = np.empty((rows.shape[0], shape[-1]), dtype=np.float32)
    step = max(1, GROUP_VALUES // shape[-1])

    def rows_from(start: int) -> None:
        out[start : start + step] = kind.dequantize_rows(rows[start : start + step])

    starts = range(0, rows.shape[0], step)
    workers = min(len(starts), os.cpu_count() or 1, 4)
    if workers <= 1:
        for start in starts:
            rows_from(start)
    else:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(rows_from, starts))
    return out.reshape(shape)
