"""Digests of files: hashed from their bytes, remembered for this process, or remembered in the cache folder.

Every way gives the same digest of the same bytes; they differ in when the bytes are read:

- `sha256_file` (and `xxh3_file`, `hash_file` for several digests in one pass): from the bytes,
  every call, over a memory map (tune data, adapters and heads, the copies' files).
- `fresh_sha256`: from the bytes the first time this process sees that version of the file (its
  path, size and mtime), then from memory: a check that trusts nothing in the cache folder (an
  install check, a load that keeps nothing in the cache) hashes a GGUF once per process.
- `remembered_sha256`: from the cache's `hashes/` when it holds this version of the file, else
  from the bytes and remembered there: a warm load reads no byte of its GGUF.

A GGUF's SHA-256 is the provenance every record carries and the key of its prepared copy; hashing
the 1.5B judge's 1.1 GB file took 1.1 s of each warm load. The cache's `hashes/` remembers the
digest of a file together with what identifies that version of it: resolved path, device, inode,
size, mtime and ctime (to the nanosecond). Any write to the file, a replacement, a new install or
a `touch` changes at least one of them, and a process cannot set ctime back, so a remembered
digest is used only for the bytes it was taken from. The trade, as for git's index and make: a
change that keeps all six (a disk fault under an unchanged file) goes unseen until the GGUF is
parsed, and every parse (`gguf`) hashes the file again from its bytes. A judge whose copy
is what loads reads no GGUF byte anyway: its weights are the copy's, whose files are remembered the
same way (`verified`), and the copy's key is the remembered digest.

Examples:
    >>> from pathlib import Path
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp()); f = root / "x.gguf"; _ = f.write_bytes(b"GGUF")
    >>> remembered_sha256(f, root) == remembered_sha256(f, root) == fresh_sha256(f) == sha256_file(f)
    True
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localjudge.io.files import write_atomically
from localjudge.weights.verified import HASHES_DIR, Signature, signature

_SLICE = 64 << 20  # bytes of a memory map hashed per call


def hash_file(path: Path, *algorithms: str) -> list[str]:
    """Hex digests of a file's bytes, "xxh3_128" or "sha256", in one pass over a memory map.

    A map hands the page cache's pages to the hash functions without the copies `read` makes
    (3.4 s of a 7.1 GB file's 10.6 s sha256 here).
    """
    import xxhash

    digests: list[Any] = [xxhash.xxh3_128() if a == "xxh3_128" else hashlib.new(a) for a in algorithms]
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size:
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped, memoryview(mapped) as view:
                for start in range(0, size, _SLICE):
                    block = view[start : start + _SLICE]
                    for d in digests:
                        d.update(block)
                    block.release()
    return [d.hexdigest() for d in digests]


def sha256_file(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    return hash_file(path, "sha256")[0]


def xxh3_file(path: Path) -> str:
    """xxh3-128 of a file's bytes."""
    return hash_file(path, "xxh3_128")[0]


class FileHash(BaseModel):
    """One remembered digest and the version of the file it was taken from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(description="The file's resolved path.")
    version: Signature = Field(description="The version of the file the digest was taken from.")
    sha256: str = Field(description="SHA-256 of the file's bytes.")


def fresh_sha256(path: Path) -> str:
    """SHA-256 of a file from its bytes, remembered per (path, size, mtime) for this process only."""
    st = path.stat()
    return _sha256(str(path.resolve()), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=16)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    return sha256_file(Path(path))


def remembered_sha256(path: Path, root: Path, rehash: bool = False) -> str:
    """SHA-256 of a file: remembered in `root/hashes/` for this version of it, else hashed and remembered.

    `rehash`: hash the file's bytes whatever is remembered (and remember that). A cache folder
    that cannot be written costs only the hashing.
    """
    resolved = path.resolve()
    seen = FileHash(path=str(resolved), version=signature(resolved), sha256="")
    memo = root / HASHES_DIR / f"{hashlib.sha256(str(resolved).encode()).hexdigest()[:32]}.json"
    try:
        known: FileHash | None = FileHash.model_validate_json(memo.read_bytes())
    except (OSError, ValueError, ValidationError):
        known = None
    if known is not None and known.model_copy(update={"sha256": ""}) == seen and not rehash:
        return known.sha256
    sha = fresh_sha256(resolved)
    if known is None or known.sha256 != sha or known.model_copy(update={"sha256": ""}) != seen:
        _remember(memo, seen.model_copy(update={"sha256": sha}))
    return sha


def _remember(memo: Path, entry: FileHash) -> None:
    """Writes a memo atomically (a reader sees the old one or the new one); no error if it cannot."""
    with contextlib.suppress(OSError):  # a cache that cannot be written costs only hashing again
        write_atomically(memo, entry.model_dump_json(), prefix=".tmp-")
