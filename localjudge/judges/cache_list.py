"""What the cache folder holds, and clearing it: `localjudge cache list` and `localjudge cache clear`.

Listing reads manifests and sizes only (a load verifies every byte); clearing removes every
folder under `weights/`, complete or not.

Examples:
    >>> [(e.manifest.gguf_file, e.state) for e in list_prepared()]  # doctest: +SKIP
    [('SmolLM2-135M-Instruct.Q4_1.gguf', 'ok')]
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from localjudge.judges.cache import MANIFEST, TMP_PREFIX, TRASH_PREFIX, Manifest, cache_error, cache_root, weights_dir


@dataclass(frozen=True)
class CacheEntry:
    """A folder under `weights/`, as `list_prepared` sees it without hashing (loads verify in full)."""

    path: Path
    state: Literal["ok", "incomplete", "damaged"]
    size: int
    manifest: Manifest | None


def list_prepared(root: str | Path | None = None) -> list[CacheEntry]:
    """Every folder under the cache's `weights/`, with its state (sizes checked, not hashes).

    Args:
        root: The cache folder; default `cache_root()`.

    Examples:
        >>> for e in list_prepared():  # doctest: +SKIP
        ...     print(e.manifest.gguf_file, e.manifest.dtype, e.size, e.state)
    """
    parent = weights_dir(cache_root(root))
    if not parent.is_dir():
        return []
    entries = []
    for path in sorted(parent.iterdir()):
        if not path.is_dir():
            continue
        size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
        try:
            manifest: Manifest | None = Manifest.model_validate_json((path / MANIFEST).read_bytes())
        except (OSError, ValueError):
            manifest = None
        if path.name.startswith((TMP_PREFIX, TRASH_PREFIX)) or manifest is None:
            entries.append(CacheEntry(path, "incomplete", size, None))
            continue
        sizes_ok = all((path / n).is_file() and (path / n).stat().st_size == e.size for n, e in manifest.files.items())
        entries.append(CacheEntry(path, "ok" if sizes_ok else "damaged", size, manifest))
    return entries


def clear_prepared(root: str | Path | None = None) -> tuple[int, int]:
    """Removes every prepared copy (generated evaluation steps stay); returns (folders, bytes) removed.

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
            shutil.rmtree(entry.path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise cache_error(exc, entry.path.parent, 0) from None
        removed += entry.size
    return len(entries), removed
