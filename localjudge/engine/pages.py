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
import os
import sys
from pathlib import Path

import torch

MADV_DONTNEED = 4
"""Linux's `madvise` advice: the range's pages may be dropped (file-backed ones are read again)."""


class SafetensorsMaps:
    """The private `.safetensors` mappings of this process, read once from /proc/self/maps (about
    1.4 ms with torch loaded; every layer of a model asks): a remembered range is trusted only while
    its `/proc/self/map_files` entry still names a `.safetensors` file, and the list is read again
    when a tensor lies in none of them. One per model (`invariant.make_invariant`)."""

    def __init__(self) -> None:
        self._ranges: list[tuple[int, int]] | None = None

    def hold(self, start: int, end: int) -> bool:
        """Whether [start, end) lies in one private mapping of a `.safetensors` file."""
        if self._ranges is not None and self._remembered(start, end):
            return True
        self._ranges = _read_maps()
        return any(low <= start and end <= high for low, high in self._ranges)

    def _remembered(self, start: int, end: int) -> bool:
        assert self._ranges is not None
        for low, high in self._ranges:
            if low <= start and end <= high:
                try:  # the same range mapped now, from a safetensors file (a few microseconds)
                    return os.readlink(f"/proc/self/map_files/{low:x}-{high:x}").endswith(".safetensors")
                except OSError:
                    return False
        return False


def drop_pages(tensor: torch.Tensor, maps: SafetensorsMaps | None = None) -> int:
    """Drops from the resident set the whole pages of `tensor`'s memory, if it is file-mapped and unshared.

    Args:
        tensor: the caller's last reference to a weight it lets go.
        maps: the model's `SafetensorsMaps` (a new one reads /proc/self/maps).

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
    if last <= first or not (maps or SafetensorsMaps()).hold(start, end):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.madvise(ctypes.c_void_p(first), ctypes.c_size_t(last - first), MADV_DONTNEED) != 0:
        return 0
    return last - first


def _read_maps() -> list[tuple[int, int]]:
    """The ranges of this process's private mappings of `.safetensors` files (/proc/self/maps)."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return []
    ranges = []
    tail = ".safetensors\n"  # only those lines are split: a process with torch loaded has ~900
    at = maps.find(tail)
    while at >= 0:
        fields = maps[maps.rfind("\n", 0, at) + 1 : at + len(tail) - 1].split(maxsplit=5)
        at = maps.find(tail, at + len(tail))
        if len(fields) == 6 and fields[1].endswith("p"):
            low, high = (int(x, 16) for x in fields[0].split("-"))
            ranges.append((low, high))
    return ranges
