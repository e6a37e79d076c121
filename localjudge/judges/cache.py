"""Prepared copies of GGUF judges in the user's cache folder: verified on every load, rebuilt when damaged.

Parsing and dequantising a GGUF takes tens of seconds; the same weights as safetensors (with the
config and tokenizer files `save_pretrained` writes) load in about a second. A copy is keyed by
the GGUF's sha256, the transformers version and the dtype, and carries a manifest with the size
and sha256 of every file. A copy is used only when the manifest matches the key and every file
hashes to it, and the folder holds nothing else; anything less is moved aside and rebuilt.

Hashing is the whole price of that trust: about 1 GB/s here (SHA-NI), so 0.5 s for SmolLM2 in
fp32 and 1.1 s for Gemma 3 270M in fp32 (benchmarks/load_results.md). Size and mtime checks would
be free, but they miss a flipped byte, and a copy that is wrong without a sign would give wrong
scores. Because every load verifies, a write needs no fsync: a torn copy left by a crash fails
its hashes and is rebuilt.

Copies are built in a temporary folder next to the final one and renamed into place, so a
reader sees a whole copy or none; of concurrent builders the first rename wins and the others
drop theirs.

Examples:
    >>> cache_root("/tmp/lj")
    PosixPath('/tmp/lj')

Listing and clearing them: `localjudge.judges.cache_list`.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localjudge.errors import CacheError, cut

log = logging.getLogger("localjudge")

FORMAT = 1
"""Layout of a prepared copy; a change makes older copies unusable (they are rebuilt)."""
MANIFEST = "manifest.json"
TMP_PREFIX, TRASH_PREFIX = ".tmp-", ".trash-"
_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


def cache_root(folder: str | Path | None = None) -> Path:
    """The localjudge cache folder: `folder`, else $LOCALJUDGE_CACHE, else $XDG_CACHE_HOME/localjudge.

    Without either variable it is ~/.cache/localjudge; a relative $XDG_CACHE_HOME is ignored, as
    the XDG base directory spec says. Prepared weights live in its `weights/`, generated
    evaluation steps in its `steps/`.
    """
    if folder is not None:
        return Path(folder).expanduser()
    if os.environ.get("LOCALJUDGE_CACHE"):
        return Path(os.environ["LOCALJUDGE_CACHE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache") / "localjudge"


def sha256_file(path: Path) -> str:
    """SHA-256 of a file's bytes, read in 4 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class CacheKey:
    """What a prepared copy depends on."""

    gguf_sha256: str
    transformers: str
    dtype: str

    @property
    def name(self) -> str:
        """The copy's folder name (the manifest holds the full hash)."""
        version = re.sub(r"[^A-Za-z0-9.]+", "_", self.transformers)
        return f"{self.gguf_sha256[:16]}-{self.dtype}-transformers{version}"


class FileEntry(BaseModel):
    """One file of a prepared copy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    size: int = Field(ge=0, description="Size in bytes.")
    sha256: str = Field(description="SHA-256 of the file's bytes.")


class Manifest(BaseModel):
    """What a prepared copy is and what its files must hash to; written last, inside the copy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: int = Field(description="Layout version (`FORMAT`).")
    gguf_sha256: str = Field(description="SHA-256 of the GGUF the copy was prepared from.")
    gguf_file: str = Field(description="Name of that GGUF file, for listings.")
    transformers: str = Field(description="transformers version that parsed the GGUF and wrote the copy.")
    dtype: str = Field(description="dtype of the weights.")
    created: str = Field(description="When the copy was written (ISO 8601, UTC).")
    files: dict[str, FileEntry] = Field(description="Every other file of the copy by name.")

    def key(self) -> CacheKey:
        return CacheKey(self.gguf_sha256, self.transformers, self.dtype)


def weights_dir(root: Path) -> Path:
    return root / "weights"


def find_prepared(key: CacheKey, root: Path) -> Path | None:
    """The verified copy for `key`, or None; a damaged copy is logged and moved aside."""
    folder = weights_dir(root) / key.name
    if not folder.exists():
        return None
    problem = _problem(folder, key)
    if problem is None:
        return folder
    log.warning("prepared copy %s is damaged (%s); rebuilding it from the GGUF", folder, problem)
    discard(folder)
    return None


def _problem(folder: Path, key: CacheKey) -> str | None:
    """Why the copy in `folder` cannot be used for `key`, or None when every byte checks out."""
    try:
        manifest = Manifest.model_validate_json((folder / MANIFEST).read_bytes())
    except FileNotFoundError:
        return "no manifest: an interrupted or foreign copy"
    except (OSError, ValueError, ValidationError) as exc:
        return f"unreadable manifest: {cut(exc)}"
    if manifest.format != FORMAT or manifest.key() != key:
        return "its manifest describes another GGUF, transformers version, dtype or layout"
    try:
        present = {p.name for p in folder.iterdir()} - {MANIFEST}
        if present != set(manifest.files):
            return f"files {sorted(present ^ set(manifest.files))} differ from the manifest"
        for name, entry in manifest.files.items():
            path = folder / name
            if path.stat().st_size != entry.size:
                return f"{name} has {path.stat().st_size} bytes, the manifest {entry.size}"
            if sha256_file(path) != entry.sha256:
                return f"{name} does not match its sha256"
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    return None


def store_prepared(
    key: CacheKey, gguf_file: str, write: Callable[[Path], None], root: Path, size_hint: int = 0
) -> Path:
    """Writes a copy with `write(folder)`, adds its manifest and renames it into place.

    Args:
        key: What the copy is of.
        gguf_file: The GGUF's file name, recorded for listings.
        write: Writes the copy's files into the folder it is given.
        root: The cache folder (`cache_root`).
        size_hint: Bytes the copy takes, for the message when the disk is full.

    Returns:
        The folder of the copy: this one, or a complete one a concurrent loader renamed first.

    Raises:
        CacheError: The folder cannot hold the copy (disk full, read-only, not a folder); nothing
            is left behind.
    """
    parent = weights_dir(root)
    try:
        parent.mkdir(parents=True, exist_ok=True)
        _remove_stale(parent)
        tmp = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{key.name}.{socket.gethostname()}.{os.getpid()}.", dir=parent))
    except OSError as exc:
        raise cache_error(exc, parent, size_hint) from None
    try:
        write(tmp)
        files = {p.name: FileEntry(size=p.stat().st_size, sha256=sha256_file(p)) for p in sorted(tmp.iterdir())}
        manifest = Manifest(
            format=FORMAT,
            gguf_sha256=key.gguf_sha256,
            gguf_file=gguf_file,
            transformers=key.transformers,
            dtype=key.dtype,
            created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            files=files,
        )
        (tmp / MANIFEST).write_text(manifest.model_dump_json(indent=1), encoding="utf-8")
        return _rename_into_place(tmp, parent / key.name, key)
    except Exception as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        code = _errno(exc)
        if code is None:
            raise
        raise cache_error(OSError(code, os.strerror(code)), parent, size_hint) from None
    except BaseException:  # interrupted: leave no partial copy
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _rename_into_place(tmp: Path, final: Path, key: CacheKey) -> Path:
    for _ in range(2):
        try:
            os.rename(tmp, final)
            return final
        except OSError as exc:
            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
        if _problem(final, key) is None:  # another loader finished first: keep its copy
            shutil.rmtree(tmp, ignore_errors=True)
            return final
        discard(final)
    raise OSError(errno.EEXIST, f"{final} keeps reappearing damaged")


def _errno(exc: BaseException) -> int | None:
    """The OS error behind a failed write; safetensors reports one only in its message."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return exc.errno
    found = re.search(r"os error (\d+)", str(exc))
    return int(found.group(1)) if found else None


def cache_error(exc: OSError, folder: Path, size_hint: int) -> CacheError:
    where = cut(folder, 160)
    if exc.errno in _FULL:
        need = f" (the copy takes {size_hint / 2**20:.0f} MiB)" if size_hint else ""
        return CacheError(
            f"no space for a prepared copy of the judge in {where}{need}; free some space, run "
            "`localjudge cache clear`, or point LOCALJUDGE_CACHE at a disk with room"
        )
    if exc.errno in _READ_ONLY:
        return CacheError(
            f"cannot write a prepared copy of the judge in {where}: it is read-only or not yours; "
            "point LOCALJUDGE_CACHE at a writable folder"
        )
    return CacheError(
        f"cannot write a prepared copy of the judge in {where}: {exc.strerror or exc}; "
        "point LOCALJUDGE_CACHE at another folder"
    )


def discard(folder: Path) -> None:
    """Removes a folder under `weights/`; renamed aside first, so no reader meets it half removed."""
    trash = folder.with_name(f"{TRASH_PREFIX}{folder.name}.{os.getpid()}.{os.urandom(4).hex()}")
    try:
        os.rename(folder, trash)
    except FileNotFoundError:
        return  # another process removed it
    except OSError as exc:
        log.warning("cannot remove %s: %s", folder, exc.strerror or exc)
        return
    shutil.rmtree(trash, ignore_errors=True)


def _remove_stale(parent: Path) -> None:
    """Removes copies left half-built by a killed loader on this host, and trash left by a killed remover."""
    host = socket.gethostname()
    for path in parent.iterdir():
        if path.name.startswith(TRASH_PREFIX):
            shutil.rmtree(path, ignore_errors=True)
        elif path.name.startswith(TMP_PREFIX):
            parts = path.name.split(".")
            # .tmp-<key>.<host>.<pid>.<random>; the key holds dots too, so read from the end
            if len(parts) >= 4 and parts[-3] == host and parts[-2].isdigit() and not _alive(int(parts[-2])):
                shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True
