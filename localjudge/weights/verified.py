"""Copies whose bytes were hashed, remembered by what identifies each file's version, so a warm load reads none.

Hashing the 1.5B Qwen judge's 7.1 GB prepared copy took 1.7 s of a warm load with the page cache
holding it, and 14 s where it did not (the bytes come from disk first); the same load without the
hash reads the weights once, as the model needs them. So a copy is hashed in full when it is
written and on the first load that finds it unseen; `hashes/copy-<name>.json` then remembers each
file's device, inode, size, mtime and ctime (to the nanosecond) with its digest, and a later load
that finds all five unchanged for every file, and the digests equal to the manifest's, trusts the
bytes. Any write, truncation, replacement or `touch` changes at least one of them, and no process
can set a ctime back. This is the trust the GGUF's remembered SHA-256 already has (`hashes`),
and git's index and make have: a change that keeps all five (a disk fault under an unchanged
file) goes unseen; `localjudge cache verify` hashes every byte on demand. Because that trust holds
only for bytes that reached the disk, a copy is synced (`fsync`) before it is renamed into place:
a crash can then leave a copy whole or absent, never one whose metadata outlived its data.

Examples:
    >>> import tempfile
    >>> from pathlib import Path
    >>> f = Path(tempfile.mkdtemp()) / "x"; _ = f.write_bytes(b"w")
    >>> signature(f) == signature(f)
    True
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localjudge.io.files import write_atomically

HASHES_DIR = "hashes"
"""The cache folder's remembered digests: GGUF SHA-256s (`hashes`) and verified copies (here)."""


class Signature(BaseModel):
    """What identifies one version of a file without reading it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    device: int = Field(description="st_dev.")
    inode: int = Field(description="st_ino.")
    size: int = Field(description="st_size in bytes.")
    mtime_ns: int = Field(description="st_mtime_ns.")
    ctime_ns: int = Field(description="st_ctime_ns, which no process can set back.")


class VerifiedFile(BaseModel):
    """A file of a copy as it was when its bytes hashed to `xxh3_128`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    signature: Signature = Field(description="The file's version when it was hashed.")
    xxh3_128: str = Field(description="The digest its bytes had then (the manifest's).")


class VerifiedCopy(BaseModel):
    """Every file of one copy folder, as last hashed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    folder: str = Field(description="The copy's folder, resolved.")
    files: dict[str, VerifiedFile] = Field(description="Each file of the copy by name.")


def signature(path: Path) -> Signature:
    st = path.stat()
    return Signature(
        device=st.st_dev, inode=st.st_ino, size=st.st_size, mtime_ns=st.st_mtime_ns, ctime_ns=st.st_ctime_ns
    )


def _memo(folder: Path) -> Path:
    root = folder.parent.parent  # <cache>/weights/<copy>
    return root / HASHES_DIR / f"copy-{folder.name}.json"


def unchanged_since_verified(folder: Path, digests: dict[str, str]) -> bool:
    """Whether every file of `folder` is the version that hashed to `digests` (name -> xxh3-128) before.

    False when nothing is remembered, a file's version changed, or the remembered digests are not
    `digests` (the manifest's); then the caller hashes the bytes.
    """
    try:
        memo = VerifiedCopy.model_validate_json(_memo(folder).read_bytes())
    except (OSError, ValueError, ValidationError):
        return False
    if memo.folder != str(folder.resolve()) or set(memo.files) != set(digests):
        return False
    try:
        return all(
            memo.files[name].xxh3_128 == digest and memo.files[name].signature == signature(folder / name)
            for name, digest in digests.items()
        )
    except OSError:
        return False


def remember_verified(folder: Path, files: dict[str, VerifiedFile]) -> None:
    """Remembers `files` (as hashed) for `folder`, atomically; a cache that cannot be written costs only hashing."""
    memo = _memo(folder)
    entry = VerifiedCopy(folder=str(folder.resolve()), files=files)
    with contextlib.suppress(OSError):  # a cache that cannot be written costs only hashing again
        write_atomically(memo, entry.model_dump_json(), prefix=".tmp-")


def sync_folder(folder: Path) -> None:
    """Flushes every file of `folder`, and the folder's own entries, to the disk."""
    for path in folder.iterdir():
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
