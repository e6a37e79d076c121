"""Giving a dropped weight's memory back where freeing the tensor does not.

A model loaded from safetensors (a prepared copy, a hub model) holds its weights in a memory map
of the file: one mapping per file, kept while any tensor read from it lives. Dropping one weight
(a batch-invariant layer that holds its packed copy instead, `invariant.InvariantLinear`) then
frees nothing; its pages stay resident in the process. `drop_pages` tells the kernel they are not
needed (`madvise(MADV_DONTNEED)` on the whole pages inside the tensor): the mapping stays, the
pages leave the resident set, and a read would fetch them from the file again.

Only for a tensor nothing else reads: the caller's last reference, no view of its storage, in a
private mapping of a `.safetensors` file (pages it changed since, e.g. a merged adapter, go back to
the file's values, which no one reads). Elsewhere (anonymous memory, which the allocator frees;
other systems) it does nothing.
"""

from __future__ import annotations

import ctypes
import mmap
import sys
from pathlib import Path

import torch

MADV_DONTNEED = 4
"""Linux's `madvise` advice: the range's pages may be dropped (file-backed ones are read again)."""


def drop_pages(tensor: torch.Tensor) -> int:
    """Drops from the resident set the whole pages of `tensor`'s memory, if it is file-mapped and unshared.

    Returns:
        The bytes advised (0 where nothing was done).
    """
    if not sys.platform.startswith("linux") or tensor.device.type != "cpu" or tensor.layout != torch.strided:
        return 0
    use_count = getattr(torch._C, "_storage_Use_Count", None)
    storage = tensor.untyped_storage()
    # this tensor and the `storage` object just made: no other tensor or view reads the memory
    if use_count is None or use_count(storage._cdata) != 2:
        return 0
    page = mmap.PAGESIZE
    start, end = storage.data_ptr(), storage.data_ptr() + storage.nbytes()
    first, last = -(-start // page) * page, end // page * page  # whole pages inside [start, end)
    if last <= first or not _in_safetensors_map(start, end):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.madvise(ctypes.c_void_p(first), ctypes.c_size_t(last - first), MADV_DONTNEED) != 0:
        return 0
    return last - first


def _in_safetensors_map(start: int, end: int) -> bool:
    """Whether [start, end) lies in one private mapping of a `.safetensors` file (/proc/self/maps)."""
    try:
        lines = Path("/proc/self/maps").read_text().splitlines()
    except OSError:
        return False
    for line in lines:
        fields = line.split(maxsplit=5)
        low, high = (int(x, 16) for x in fields[0].split("-"))
        if low <= start and end <= high:
            return fields[1].endswith("p") and len(fields) == 6 and fields[5].endswith(".safetensors")
    return False
