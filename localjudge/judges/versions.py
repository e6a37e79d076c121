"""The versions of transformers and gguf localjudge is tested with, checked when a judge loads.

The engine relies on transformers' internals (its GGUF reader, attention interface and cache) and
on gguf's reader, which change between releases. pyproject.toml requires the same ranges
(`tests/judges/test_versions.py` checks both places agree, and that the installed versions lie inside),
so pip keeps them; a version forced outside them gets a warning at load naming the fix.

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

TESTED = {"transformers": ">=5.24,<5.25", "gguf": ">=0.19,<0.20"}
"""Distribution name -> the version range the test suite passes on (the same as in pyproject.toml)."""


def outside_tested(distribution: str, version: str) -> str | None:
    """The message for `version` of `distribution` when it lies outside `TESTED`, else None."""
    from packaging.specifiers import SpecifierSet

    tested = TESTED[distribution]
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
    for distribution in TESTED:
        try:
            version = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            continue  # transformers is required and imported right after; gguf only by GGUF judges, which say so
        message = outside_tested(distribution, version)
        if message:
            log.warning(message)
            found.append(message)
    return tuple(found)


__all__ = ["TESTED", "outside_tested", "warn_untested_versions"]
