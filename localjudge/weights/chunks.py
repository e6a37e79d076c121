"""GGUFs split across packages: every chunk found and checked, then joined once into the cache.

Some judges ship on PyPI as numbered chunk packages (`org-model-part1` ... `org-model-part22`),
each holding one slice of the GGUF. Joining them is the first thing that reads those bytes, so it
is where they are checked, in three steps:

1. every part is found before a byte is read: installed, at the pinned version, its chunk file of
   the registered size, and no part installed beyond the last one;
2. the chunks are streamed in order into a temporary file beside the target (a few MiB in memory
   at a time, never the whole file), hashing each chunk and the whole as they go;
3. the file is renamed into place only when every chunk and the whole match their SHA-256;
   otherwise it is removed and the error names the package to reinstall.

The joined file lives in `<cache>/gguf/` and is loaded like any GGUF (its prepared copy in
`weights/` beside it). A later load checks its size and hash, which the records' provenance needs
anyway, and joins it again if either is off.

Examples:
    >>> joined_name("0123456789abcdef" * 4, "model.gguf")
    '0123456789abcdef-model.gguf'
"""

from __future__ import annotations

import errno
import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

from localjudge.errors import ModelUnavailableError
from localjudge.weights.cache import cache_error
from localjudge.weights.sources import PackageChunksSource

log = logging.getLogger("localjudge")

BLOCK = 8 << 20
"""Bytes read and written at a time while joining."""
GGUF_DIR = "gguf"


def joined_name(sha256: str, gguf: str) -> str:
    """The joined file's name in `<cache>/gguf/`: the first 16 hex digits of its hash, then its name."""
    return f"{sha256[:16]}-{gguf}"


def joined_gguf(src: PackageChunksSource, judge: str, root: Path) -> Path:
    """The joined GGUF of `src` under `root/gguf/`, joined and checked now unless a good one is there.

    Args:
        src: The registry source: the parts, their sizes and hashes.
        judge: The judge's registry name, for messages.
        root: The cache folder (`cache.cache_root`).

    Raises:
        ModelUnavailableError: A part is missing, of another version, of the wrong size or
            content, or a part beyond the last is installed; the message names the package.
        CacheError: The cache folder cannot hold the joined file.
    """
    from localjudge.weights.hashes import remembered_sha256

    target = root / GGUF_DIR / joined_name(src.sha256, src.gguf)
    chunks = locate_parts(src, judge)  # checked first, even when the joined file is there
    if target.is_file():
        if _whole(target, src, lambda path: remembered_sha256(path, root)):
            return target
        log.warning("the joined GGUF %s is damaged; joining its %d parts again", target, len(chunks))
    join_parts(src, judge, chunks, target)
    return target


def joined_if_present(src: PackageChunksSource, judge: str, root: Path) -> Path | None:
    """The joined GGUF of `src` under `root/gguf/` if a good one is there, else None; nothing is written.

    For a load that keeps nothing in the cache (`load_judge(..., cache=False)`): the file that
    `localjudge models --install` joined is read where it lies, its size and SHA-256 checked from
    its bytes (no remembered hash), instead of the parts being joined again for the one load.

    Raises:
        ModelUnavailableError: As `joined_gguf`: the installed parts are checked first.
    """
    from localjudge.weights.hashes import fresh_sha256

    target = root / GGUF_DIR / joined_name(src.sha256, src.gguf)
    locate_parts(src, judge)
    return target if target.is_file() and _whole(target, src, fresh_sha256) else None


def _whole(target: Path, src: PackageChunksSource, sha256: Callable[[Path], str]) -> bool:
    """Whether the joined file has the registry's size and SHA-256 (`sha256` hashes it, or remembers)."""
    return target.stat().st_size == src.size and sha256(target) == src.sha256


def locate_parts(src: PackageChunksSource, judge: str) -> list[Path]:
    """Every part's chunk file, in order, checked for presence, version and size (nothing is read).

    Raises:
        ModelUnavailableError: The first problem found, naming the package and the command to fix it.
    """
    found: list[Path | None] = [_chunk_path(src, n) for n in range(1, len(src.parts) + 1)]
    missing = [n for n, p in enumerate(found, 1) if p is None]
    if len(missing) == len(found):
        raise ModelUnavailableError(
            f"the model packages of {judge} are not installed; run: localjudge models --install {judge}"
        )
    if missing:
        n = missing[0]
        more = f" ({len(missing)} of {len(found)} parts are missing)" if len(missing) > 1 else ""
        raise ModelUnavailableError(
            f"part {n} of {judge}, {src.part_package(n)}, is not installed{more}; "
            f"run: localjudge models --install {judge}"
        )
    beyond = len(src.parts) + 1
    if importlib.util.find_spec(src.part_module(beyond)) is not None:
        raise ModelUnavailableError(
            f"{src.part_package(beyond)} is installed, but {judge} has {len(src.parts)} parts at version "
            f"{src.version}: another release of its chunks? run: pip uninstall -y {src.part_package(beyond)}"
        )
    chunks: list[Path] = []
    for n, (path, part) in enumerate(zip(found, src.parts), 1):
        assert path is not None
        version = _installed_version(src.part_package(n))
        if version is not None and version != src.version:
            raise ModelUnavailableError(
                f"{src.part_package(n)} {version} is installed, {judge} needs {src.version}; "
                f"run: {src.reinstall_command(judge, n)}"
            )
        size = path.stat().st_size if path.is_file() else None
        if size != part.size:
            has = "is missing" if size is None else f"has {size} bytes, not {part.size}"
            raise ModelUnavailableError(
                f"the chunk of {src.part_package(n)} ({path.name}) {has}; "
                f"reinstall it: {src.reinstall_command(judge, n)}"
            )
        chunks.append(path)
    return chunks


def join_parts(src: PackageChunksSource, judge: str, chunks: list[Path], target: Path) -> None:
    """Streams `chunks` into `target` through a temporary file, renamed into place only when every hash matches.

    Raises:
        ModelUnavailableError: A chunk's or the whole file's SHA-256 is not the registered one
            (nothing is left behind).
        CacheError: The folder cannot hold the file (nothing is left behind).
    """
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".tmp-{target.name}.", dir=target.parent)
    except OSError as exc:
        raise cache_error(exc, target.parent, src.size) from None
    tmp = Path(name)
    try:
        whole = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for n, (path, part) in enumerate(zip(chunks, src.parts), 1):
                digest = hashlib.sha256()
                with open(path, "rb") as f:
                    for block in iter(partial(f.read, BLOCK), b""):
                        digest.update(block)
                        whole.update(block)
                        out.write(block)
                if digest.hexdigest() != part.sha256:
                    raise ModelUnavailableError(
                        f"the chunk of {src.part_package(n)} does not match its SHA-256 (damaged or replaced); "
                        f"reinstall it: {src.reinstall_command(judge, n)}"
                    )
            out.flush()
            os.fsync(out.fileno())
        if whole.hexdigest() != src.sha256:  # every chunk matched: only a wrong registry entry gets here
            raise ModelUnavailableError(
                f"the joined GGUF of {judge} does not match the registry's SHA-256; check its entry in models.yaml"
            )
        os.replace(tmp, target)
        log.info("joined the %d parts of %s into %s", len(chunks), judge, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM):
            raise cache_error(exc, target.parent, src.size) from None
        raise
    except BaseException:  # a wrong chunk, or interrupted: leave nothing half-written
        tmp.unlink(missing_ok=True)
        raise


def installed_parts(src: PackageChunksSource) -> int:
    """How many of the parts are installed (found, not checked)."""
    return sum(_chunk_path(src, n) is not None for n in range(1, len(src.parts) + 1))


def _chunk_path(src: PackageChunksSource, n: int) -> Path | None:
    """Where part n's chunk file is, located without importing the package; None when it is not installed."""
    spec = importlib.util.find_spec(src.part_module(n))
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / src.part_file(n)


def _installed_version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


__all__ = ["installed_parts", "join_parts", "joined_gguf", "joined_name", "locate_parts"]
