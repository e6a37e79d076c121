"""Prepared copies of GGUF judges in the user's cache folder: verified on every load, rebuilt when damaged.

Parsing and dequantising a GGUF takes tens of seconds (96 s for the 1.5B Qwen judge); the same
weights as safetensors (with the config and tokenizer files `save_pretrained` writes) load in
about a second. A copy is keyed by the GGUF's sha256, the transformers version and its layout,
the dtypes its weights are stored in (`LAYOUTS`): the layout of the run that reads it, so a load
reads the weights as they run and makes no fp32 model on the way. fp32 holds the values
transformers dequantises GGUF blocks to; bf16 and fp16 hold them cast as a load from the GGUF
casts them; "bfloat16-mixed" (and fp16's) holds the weights of the linear layers that mixed
precision lowers (`engine.mixed`) cast, and every other tensor in fp32. A copy carries a
manifest with the size and hash of every file, and is used only when the manifest matches the
key, every file hashes to it, and the folder holds nothing else; anything less is moved aside
and rebuilt. A copy is hashed in full when it is written and on the first
load that finds it unseen; later loads trust files whose device, inode, size, mtime and ctime are
those of the version that hashed right (`verified`), so a warm load reads no byte before the
model does.

The hash is xxh3-128 (xxhash), over a memory map: 8 GB/s here against sha256's 1.5 GB/s, so the
1.5B judge's 7.1 GB copy verifies in 0.9 s instead of 4.8 s (benchmarks/speed/load_results.md). The
trade: xxh3 is not cryptographic. It catches any accidental change (a flipped bit, a torn or
truncated write, a file swapped for another) except with probability about 2^-128, which is
what the check is for; it would not stop someone who can write to the cache folder from
crafting a collision, but neither did sha256, since the manifest beside the files can be
rewritten too. Sizes and mtimes alone would be blind to a flipped byte that still parses as
safetensors, and a copy that is wrong without a sign would give wrong scores: hence the hash of
every byte of every version of a file. A copy is synced to the disk before it is renamed into
place, so that no crash leaves metadata that outlived its data. Copies of the first layout
(sha256 manifests) are verified by sha256 once and their manifest rewritten with xxh3, not rebuilt.

Copies are built in a temporary folder next to the final one and renamed into place, so a
reader sees a whole copy or none; of concurrent builders the first rename wins and the others
drop theirs. A loader holds a shared lock on the copy (`held`) while it verifies and reads it,
and records its last use in the manifest's mtime; eviction (`cache_list.evict`) passes over held
copies.

Examples:
    >>> cache_root("/tmp/lj")
    PosixPath('/tmp/lj')

Listing, evicting and clearing them: `localjudge.weights.cache_list`.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localjudge.errors import cut
from localjudge.io.files import write_atomically
from localjudge.weights.cache_fs import TMP_PREFIX, cache_error, discard, held, remove_stale
from localjudge.weights.hashes import hash_file, xxh3_file
from localjudge.weights.verified import (
    VerifiedFile,
    remember_verified,
    signature,
    sync_folder,
    unchanged_since_verified,
)

log = logging.getLogger("localjudge")

FORMAT = 2
"""Layout of a prepared copy: 2 hashes files with xxh3-128; 1 (sha256) is upgraded on its next load."""
LAYOUTS = ("float32", "bfloat16", "float16", "bfloat16-mixed", "float16-mixed")
"""How a copy's weights are stored: all in one dtype, or "<dtype>-mixed": the linear layers mixed
precision lowers in that dtype, every other tensor in fp32."""
FIRST_LAYOUT_DTYPE = "float32"
"""The one layout of copies of the first format (sha256 manifests) that this version reads."""
MANIFEST = "manifest.json"


def cache_root(folder: str | Path | None = None) -> Path:
    """The localjudge cache folder: `folder`, else $LOCALJUDGE_CACHE, else $XDG_CACHE_HOME/localjudge.

    Without either variable it is ~/.cache/localjudge; a relative $XDG_CACHE_HOME is ignored, as
    the XDG base directory spec says. Prepared weights live in its `weights/`, joined GGUFs in
    its `gguf/`, remembered GGUF hashes in its `hashes/`, generated evaluation steps in its `steps/`.
    """
    if folder is not None:
        return Path(folder).expanduser()
    if os.environ.get("LOCALJUDGE_CACHE"):
        return Path(os.environ["LOCALJUDGE_CACHE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache") / "localjudge"


@dataclass(frozen=True)
class CacheKey:
    """What a prepared copy depends on, and how its weights are stored (one of `LAYOUTS`)."""

    gguf_sha256: str
    transformers: str
    layout: str = "float32"

    @property
    def name(self) -> str:
        """The copy's folder name (the manifest holds the full hash)."""
        version = re.sub(r"[^A-Za-z0-9.]+", "_", self.transformers)
        return f"{self.gguf_sha256[:16]}-{self.layout}-transformers{version}"


class FileEntry(BaseModel):
    """One file of a prepared copy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    size: int = Field(ge=0, description="Size in bytes.")
    xxh3_128: str | None = Field(default=None, description="xxh3-128 of the file's bytes (layout 2).")
    sha256: str | None = Field(default=None, description="SHA-256 of the file's bytes (layout 1 only).")


class Manifest(BaseModel):
    """What a prepared copy is and what its files must hash to; written last, inside the copy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: int = Field(description="Layout version (`FORMAT`).")
    gguf_sha256: str = Field(description="SHA-256 of the GGUF the copy was prepared from.")
    gguf_file: str = Field(description="Name of that GGUF file, for listings.")
    transformers: str = Field(description="transformers version that parsed the GGUF and wrote the copy.")
    dtype: str = Field(description="How the weights are stored (`LAYOUTS`); of layout 1, fp32 copies only are read.")
    created: str = Field(description="When the copy was written (ISO 8601, UTC).")
    files: dict[str, FileEntry] = Field(description="Every other file of the copy by name.")

    def describes(self, key: CacheKey) -> bool:
        """Whether this is a copy for `key` that this version of localjudge loads."""
        return (
            readable_layout(self)
            and self.dtype == key.layout
            and (self.gguf_sha256, self.transformers) == (key.gguf_sha256, key.transformers)
        )


def readable_layout(manifest: Manifest) -> bool:
    """Whether this version of localjudge reads a copy of this format and layout.

    Copies of the first format held one copy per dtype, and only their fp32 ones were read since.
    """
    if manifest.format == FORMAT:
        return manifest.dtype in LAYOUTS
    return manifest.format == 1 and manifest.dtype == FIRST_LAYOUT_DTYPE


def read_manifest(folder: Path) -> Manifest:
    """The manifest of a copy; raises OSError, ValueError or ValidationError when it cannot be read."""
    return Manifest.model_validate_json((folder / MANIFEST).read_bytes())


def weights_dir(root: Path) -> Path:
    return root / "weights"


@contextmanager
def prepared(key: CacheKey, root: Path) -> Iterator[Path | None]:
    """The verified copy for `key`, held for the block and its use recorded; or None.

    A damaged copy is logged and moved aside (None).
    """
    folder = weights_dir(root) / key.name
    if not folder.exists():
        yield None
        return
    with held(folder) as there:
        problem = _problem(folder, key) if there else None
        if there and problem is None:
            record_use(folder)
            yield folder
            return
    if there:
        log.warning("prepared copy %s is damaged (%s); rebuilding it from the GGUF", folder, problem)
        discard(folder)
    yield None


def find_prepared(key: CacheKey, root: Path) -> Path | None:
    """The verified copy for `key`, or None; a damaged copy is logged and moved aside."""
    with prepared(key, root) as folder:
        return folder


def record_use(folder: Path) -> None:
    """Sets the manifest's mtime to now: the copy's last use, for least-recently-used eviction."""
    try:
        os.utime(folder / MANIFEST)
    except OSError:  # a read-only cache: nothing is evicted from it either
        pass


def verify_copy(folder: Path) -> str | None:
    """Why the copy in `folder` is damaged, from every byte of it whatever was remembered; None when whole.

    Examples:
        >>> verify_copy(Path("/nonexistent"))  # doctest: +ELLIPSIS
        'no manifest...'
    """
    try:
        manifest = read_manifest(folder)
    except (OSError, ValueError, ValidationError):
        return _problem(folder, CacheKey("", ""))  # names what is wrong with the manifest
    return _problem(folder, CacheKey(manifest.gguf_sha256, manifest.transformers), rehash=True)


def _problem(folder: Path, key: CacheKey, rehash: bool = False) -> str | None:
    """Why the copy in `folder` cannot be used for `key`, or None when every byte checks out.

    Files unchanged since they last hashed right are not hashed again unless `rehash`.
    """
    try:
        manifest = read_manifest(folder)
    except FileNotFoundError:
        return "no manifest: an interrupted or foreign copy"
    except (OSError, ValueError, ValidationError) as exc:
        return f"unreadable manifest: {cut(exc)}"
    if not manifest.describes(key):
        return "its manifest describes another GGUF, transformers version, dtype or layout"
    upgraded, hashed = {}, {}
    try:
        present = {p.name for p in folder.iterdir()} - {MANIFEST}
        if present != set(manifest.files):
            return f"files {sorted(present ^ set(manifest.files))} differ from the manifest"
        if (
            not rehash
            and manifest.format == FORMAT
            and unchanged_since_verified(folder, {n: e.xxh3_128 or "" for n, e in manifest.files.items()})
        ):
            return None
        for name, entry in manifest.files.items():
            path = folder / name
            seen = signature(path)  # before the hash: a write while it runs changes the next load's
            if seen.size != entry.size:
                return f"{name} has {seen.size} bytes, the manifest {entry.size}"
            if manifest.format == FORMAT:
                if xxh3_file(path) != entry.xxh3_128:
                    return f"{name} does not match its xxh3_128"
                hashed[name] = VerifiedFile(signature=seen, xxh3_128=entry.xxh3_128)
            else:  # layout 1: checked by its sha256, then given the xxh3 of the same pass
                sha, xxh = hash_file(path, "sha256", "xxh3_128")
                if sha != entry.sha256:
                    return f"{name} does not match its sha256"
                upgraded[name] = FileEntry(size=entry.size, xxh3_128=xxh)
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    if upgraded:
        _write_manifest(folder, manifest.model_copy(update={"format": FORMAT, "files": upgraded}))
    if hashed:
        remember_verified(folder, hashed)
    return None


def _write_manifest(folder: Path, manifest: Manifest) -> None:
    """Replaces a copy's manifest atomically (written beside the copy, renamed in); a read-only cache keeps the old."""
    prefix = f"{TMP_PREFIX}{folder.name}.{socket.gethostname()}.{os.getpid()}."
    try:
        write_atomically(folder / MANIFEST, manifest.model_dump_json(indent=1), prefix=prefix, tmp_dir=folder.parent)
    except OSError as exc:
        log.info("cannot upgrade the manifest of %s (%s); it is checked by sha256 again next time", folder, exc)


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
        remove_stale(parent)
        tmp = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{key.name}.{socket.gethostname()}.{os.getpid()}.", dir=parent))
    except OSError as exc:
        raise cache_error(exc, parent, size_hint) from None
    try:
        write(tmp)
        files = {p.name: FileEntry(size=p.stat().st_size, xxh3_128=xxh3_file(p)) for p in sorted(tmp.iterdir())}
        manifest = Manifest(
            format=FORMAT,
            gguf_sha256=key.gguf_sha256,
            gguf_file=gguf_file,
            transformers=key.transformers,
            dtype=key.layout,
            created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            files=files,
        )
        (tmp / MANIFEST).write_text(manifest.model_dump_json(indent=1), encoding="utf-8")
        sync_folder(tmp)
        ours = {n: VerifiedFile(signature=signature(tmp / n), xxh3_128=e.xxh3_128 or "") for n, e in files.items()}
        mine = os.stat(tmp).st_ino
        final = _rename_into_place(tmp, parent / key.name, key)
        if os.stat(final).st_ino == mine:  # this copy, not a concurrent builder's: hashed as it was written
            remember_verified(final, ours)
        return final
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
