"""The versions of transformers and gguf localjudge is tested with, checked when a judge loads.

The engine relies on transformers' internals (its GGUF reader, attention interface and cache) and
on gguf's reader, which change between releases. The ranges are written once, in pyproject.toml's
dependencies, so pip keeps them; this module reads them back from the installed distribution's
metadata, and a version forced outside them gets a warning at load naming the fix
(`tests/judges/test_versions.py` checks the installed metadata is today's pyproject.toml and that the
installed versions lie inside).

Examples:
    >>> outside_tested("transformers", "9.0.0").split(";")[0]
    'transformers 9.0.0 is installed'
    >>> outside_tested("transformers", "5.24.0") is None
    True
"""

from __future__ import annotations

import importlib.metadata
import logging
from functools import lru_cache

log = logging.getLogger("localjudge")

DISTRIBUTION = "localjudge-offline"
"""localjudge's distribution name (pyproject.toml's `name`), whose metadata holds the ranges."""
CHECKED = ("transformers", "gguf")
"""The distributions whose internals the engine relies on: checked at load."""


@lru_cache(maxsize=1)
def required_ranges() -> dict[str, str]:
    """Distribution name -> the range pyproject.toml requires, read from the installed metadata.

    Empty when localjudge runs from a folder that was never installed: there is nothing to read the
    ranges from, so nothing is checked (`make install` installs the checkout).
    """
    from packaging.requirements import Requirement

    try:
        required = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        log.debug("%s is not installed: the tested versions of %s are not checked", DISTRIBUTION, CHECKED)
        return {}
    ranges = {}
    for line in required:
        req = Requirement(line)
        if req.name in CHECKED and req.marker is None:
            ranges[req.name] = ",".join(sorted((str(s) for s in req.specifier), reverse=True))
    return ranges


def outside_tested(distribution: str, version: str) -> str | None:
    """The message for `version` of `distribution` when it lies outside its tested range, else None."""
    from packaging.specifiers import SpecifierSet

    tested = required_ranges().get(distribution)
    if tested is None:
        return None
    if SpecifierSet(tested).contains(version, prereleases=True):
        return None
    return (
        f"{distribution} {version} is installed; localjudge is tested with {distribution}{tested} "
        f"(its engine relies on that version's internals): pip install '{distribution}{tested}'"
    )


@lru_cache(maxsize=1)
def warn_untested_versions() -> tuple[str, ...]:
    """Logs one warning per installed package outside its tested range (once per process); returns them."""
    found = []
    for distribution in required_ranges():
        try:
            version = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            continue  # transformers is required and imported right after; gguf only by GGUF judges, which say so
        message = outside_tested(distribution, version)
        if message:
            log.warning(message)
            found.append(message)
    return tuple(found)


__all__ = ["CHECKED", "DISTRIBUTION", "outside_tested", "required_ranges", "warn_untested_versions"]
