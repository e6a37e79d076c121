"""One judge per name and process, shared by every framework metric or scorer that names it.

Examples:
    >>> shared_judge.cache_info().maxsize is None
    True
"""

from __future__ import annotations

import functools

from localjudge.judges.judge import Judge

__all__ = ["shared_judge"]


@functools.cache
def shared_judge(name: str | None = None, device: str | None = None, dtype: str | None = None) -> Judge:
    """The judge of that name, loaded once per process and shared by every metric that names it.

    Args:
        name: a registry name, model directory, .gguf file or hub id; None: the registry default.
        device: "cpu", "cuda"...; default CUDA when available.
        dtype: "float32", "bfloat16"...; default the registry entry's, else per device.
    """
    from localjudge.judges import loading

    return loading.load_judge(name, device=device, dtype=dtype, progress=False)
