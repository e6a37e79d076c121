"""The cache folder's file mechanics: locks loaders hold, folders moved aside before removal, leftovers of killed
processes, and the messages of a folder that cannot be written.

A loader holds a shared `flock` on what it reads (a copy's folder, a GGUF) for as long as it reads
it; removal takes an exclusive one without waiting and passes over what it cannot lock. A folder
is renamed aside before it is removed, so no reader meets it half removed, and a process that has
a file open still reads it after it is unlinked.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from localjudge.errors import CacheError, cut

try:
    import fcntl
except ImportError:  # Windows: no advisory locks, so eviction may meet a copy in use (and fail to remove it)
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("localjudge")

TMP_PREFIX, TRASH_PREFIX = ".tmp-", ".trash-"
_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


@contextmanager
def held(path: Path) -> Iterator[bool]:
    """Holds a shared lock on a copy's folder or a GGUF for the block; False when `path` is gone.

    Eviction takes an exclusive lock without waiting and passes over what it cannot lock, so a
    copy or joined GGUF being loaded by any process is never removed under it.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        yield False
        return
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_SH)
        try:  # removed (renamed aside) while this process waited for the lock?
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        yield same
    finally:
        os.close(fd)


def remove_unheld(path: Path) -> bool:
    """Removes a copy's folder or a joined GGUF unless a loader holds it; True when it is gone."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return True
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
        if path.is_dir():
            discard(path)
        else:
            path.unlink(missing_ok=True)  # a process that has it open still reads it
        return not path.exists()
    finally:
        os.close(fd)


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


def remove_stale(parent: Path) -> None:
    """Removes copies left half-built by a killed loader on this host, and trash left by a killed remover."""
    host = socket.gethostname()
    for path in parent.iterdir():
        if path.name.startswith(TRASH_PREFIX):
            shutil.rmtree(path, ignore_errors=True)
        elif path.name.startswith(TMP_PREFIX):
            parts = path.name.split(".")
            # .tmp-<key>.<host>.<pid>.<random>; the key holds dots too, so read from the end
            if len(parts) >= 4 and parts[-3] == host and parts[-2].isdigit() and not _alive(int(parts[-2])):
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:  # a manifest being upgraded
                    path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True
