"""What the cache folder holds, its size limit, least-recently-used eviction, and clearing it.

Two kinds of entry count against the limit: prepared copies (`weights/`, 7.1 GB for the 1.5B
Qwen judge) and GGUFs joined from chunk packages (`gguf/`, 1.1 GB for it). Both are rebuilt
when missing, a copy by a cold load (96 s for that judge), a joined GGUF by joining its
installed chunks again (seconds), so both may be evicted. Generated evaluation steps (`steps/`)
are not weights and are never evicted.

The limit is $LOCALJUDGE_CACHE_LIMIT ("20GiB", "500MB", "0", "none"), by default 20 GiB: the 1.5B
judge's copy and joined GGUF, with room for the smaller judges beside them. A load records its
copy's last use (the manifest's mtime) and then evicts the least recently used entries until the
folder is within the limit, never one that any process is loading (`cache_fs.held`) or writing
(temporary folders), and never what it has just loaded. A joined GGUF was last used when a copy
prepared from it last was. A copy larger than the limit is not written at all (the judge loads
from its GGUF, with a warning).

Listing reads manifests and sizes only (loads hash what changed; `cache verify` hashes every byte).

Examples:
    >>> parse_size("20GiB") == 20 * 2**30
    True
    >>> [(e.name, e.state) for e in list_prepared()]  # doctest: +SKIP
    [('SmolLM2-135M-Instruct.Q4_1.gguf', 'ok')]
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from localjudge.errors import CacheError, ConfigError, clip
from localjudge.weights.cache import (
    Manifest,
    cache_error,
    cache_root,
    read_manifest,
    readable_layout,
    weights_dir,
)
from localjudge.weights.cache_fs import TMP_PREFIX, TRASH_PREFIX, remove_unheld
from localjudge.weights.hashes import HASHES_DIR

LIMIT_ENV = "LOCALJUDGE_CACHE_LIMIT"
GGUF_DIR = "gguf"
"""Where `chunks` joins GGUFs (its `GGUF_DIR`; not imported, as `chunks` loads judges, which evict)."""
DEFAULT_LIMIT = 20 * 2**30
"""Bytes of copies and joined GGUFs a cache folder keeps when $LOCALJUDGE_CACHE_LIMIT is unset."""
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
_UNITS |= {"k": 2**10, "kib": 2**10, "m": 2**20, "mib": 2**20, "g": 2**30, "gib": 2**30, "t": 2**40, "tib": 2**40}


@dataclass(frozen=True)
class CacheEntry:
    """A copy under `weights/` or a joined GGUF under `gguf/`, as seen without hashing."""

    path: Path
    kind: Literal["copy", "gguf"]
    state: Literal["ok", "incomplete", "damaged", "unused"]
    """ok; incomplete (being written, or left by a killed writer); damaged (sizes off, rebuilt at the
    next load); unused (a per-dtype copy of an older localjudge, never loaded again)."""
    size: int
    last_used: float
    """When a load last read it (seconds since the epoch)."""
    manifest: Manifest | None

    @property
    def name(self) -> str:
        """The GGUF file the entry is of."""
        if self.manifest is not None:
            return self.manifest.gguf_file
        return self.path.name.split("-", 1)[-1] if self.kind == "gguf" else self.path.name


@dataclass(frozen=True)
class CacheLimit:
    """The size limit in force and where it came from."""

    bytes: int | None
    """None: no limit."""
    source: str


def parse_size(text: str, given_as: str = LIMIT_ENV) -> int | None:
    """Bytes in "20GiB", "500MB", "1.5G" (binary), "0"; None for "none"/"off"/"unlimited".

    `given_as` names where the text came from in the error: the variable, or an option.

    Raises:
        ConfigError: Not a size.
    """
    value = text.strip().lower().replace(" ", "")
    if value in ("none", "off", "unlimited"):
        return None
    found = re.fullmatch(r"(\d+(?:\.\d+)?)([a-z]*)", value)
    if not found or found.group(2) not in _UNITS:
        raise ConfigError(
            f"{given_as}={clip(text)} is not a size; give bytes with a unit, e.g. 20GiB, 500MB or 0, or none"
        )
    return int(float(found.group(1)) * _UNITS[found.group(2)])


def cache_limit() -> CacheLimit:
    """The limit from $LOCALJUDGE_CACHE_LIMIT, else `DEFAULT_LIMIT`.

    Raises:
        ConfigError: The variable is not a size.
    """
    text = os.environ.get(LIMIT_ENV, "").strip()
    if not text:
        return CacheLimit(DEFAULT_LIMIT, f"the default; set {LIMIT_ENV} to change it")
    return CacheLimit(parse_size(text), LIMIT_ENV)


def list_prepared(root: str | Path | None = None) -> list[CacheEntry]:
    """Every copy under the cache's `weights/` and joined GGUF under its `gguf/`, with its state.

    Args:
        root: The cache folder; default `cache_root()`.

    Examples:
        >>> for e in list_prepared():  # doctest: +SKIP
        ...     print(e.kind, e.name, e.size, e.state)
    """
    folder = cache_root(root)
    # another process may rename or remove an entry while it is listed (a copy renamed into place, one
    # evicted): what vanishes is left out, as a listing a moment later would
    copies = [c for c in map(_copy_entry, _children(weights_dir(folder))) if c is not None]
    used: dict[str, float] = {}
    for c in copies:
        if c.manifest is not None:
            prefix = c.manifest.gguf_sha256[:16]
            used[prefix] = max(used.get(prefix, 0.0), c.last_used)
    ggufs = []
    for path in _children(folder / GGUF_DIR):
        try:
            st = path.stat()
        except FileNotFoundError:
            continue
        if path.is_file():
            state: Literal["ok", "incomplete"] = "incomplete" if path.name.startswith(".") else "ok"
            last = max(st.st_mtime, used.get(path.name.split("-", 1)[0], 0.0))
            ggufs.append(CacheEntry(path, "gguf", state, st.st_size, last, None))
    return copies + ggufs


def _children(folder: Path) -> list[Path]:
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _copy_entry(path: Path) -> CacheEntry | None:
    """The entry of a folder under `weights/`; None when it is not a folder or vanishes while it is read."""
    try:
        return _read_copy_entry(path) if path.is_dir() else None
    except FileNotFoundError:
        return None


def _read_copy_entry(path: Path) -> CacheEntry:
    files = [p for p in path.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    try:
        manifest: Manifest | None = read_manifest(path)
    except (OSError, ValueError):
        manifest = None
    if path.name.startswith((TMP_PREFIX, TRASH_PREFIX)) or manifest is None:
        last = max((p.stat().st_mtime for p in files), default=path.stat().st_mtime)
        return CacheEntry(path, "copy", "incomplete", size, last, None)
    last = (path / "manifest.json").stat().st_mtime
    if not readable_layout(manifest):
        return CacheEntry(path, "copy", "unused", size, last, manifest)
    sizes_ok = all((path / n).is_file() and (path / n).stat().st_size == e.size for n, e in manifest.files.items())
    return CacheEntry(path, "copy", "ok" if sizes_ok else "damaged", size, last, manifest)


def evict(
    root: str | Path | None = None,
    limit: int | None = DEFAULT_LIMIT,
    keep: Collection[Path] = (),
    incoming: int = 0,
) -> list[CacheEntry]:
    """Removes entries, least recently used first, until the folder holds at most `limit - incoming` bytes.

    Unused and damaged copies go first. Never removed: `keep`, entries being written, and entries
    a loader holds; when only those are left the folder stays over the limit.

    Args:
        root: The cache folder; default `cache_root()`.
        limit: The limit in bytes; None: no limit, nothing is removed.
        keep: Entries not to remove (what this load reads).
        incoming: Bytes about to be written (a new copy), to make room for.

    Returns:
        The entries removed.

    Examples:
        >>> [e.name for e in evict(limit=cache_limit().bytes)]  # doctest: +SKIP
        ['gemma-3-270m-it-Q4_K_M.gguf']
    """
    if limit is None:
        return []
    entries = list_prepared(root)
    total = sum(e.size for e in entries) + incoming
    kept = {Path(p) for p in keep}
    candidates = [e for e in entries if e.state != "incomplete" and e.path not in kept]
    # stale kinds first, then the oldest use; a copy before the GGUF it was made from
    candidates.sort(key=lambda e: (e.state == "ok", e.last_used, e.kind == "gguf"))
    removed = []
    for entry in candidates:
        if total <= limit:
            break
        if remove_unheld(entry.path):
            total -= entry.size
            removed.append(entry)
    return removed


def clear_prepared(root: str | Path | None = None) -> tuple[int, int]:
    """Removes every copy and joined GGUF, and the remembered GGUF hashes; returns (entries, bytes) removed.

    Generated evaluation steps stay.

    Raises:
        CacheError: The folder is read-only.

    Examples:
        >>> clear_prepared()  # doctest: +SKIP
        (2, 1620000000)
    """
    entries = list_prepared(root)
    removed = 0
    for entry in entries:
        try:
            if entry.kind == "copy":
                shutil.rmtree(entry.path)
            else:
                entry.path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise cache_error(exc, entry.path.parent, 0) from None
        removed += entry.size
    shutil.rmtree(cache_root(root) / HASHES_DIR, ignore_errors=True)
    return len(entries), removed


def too_big(size: int, limit: CacheLimit) -> CacheError | None:
    """The error for a copy of `size` bytes that the limit cannot hold, else None."""
    if limit.bytes is None or size <= limit.bytes:
        return None
    return CacheError(
        f"a prepared copy of the judge takes {size_text(size)}, more than the cache limit of "
        f"{size_text(limit.bytes)} ({limit.source}); set {LIMIT_ENV} higher to keep one"
    )


def size_text(size: int) -> str:
    """Bytes as GiB from 1 GiB up, else MiB."""
    return f"{size / 2**30:.1f} GiB" if size >= 2**30 else f"{size / 2**20:.1f} MiB"
