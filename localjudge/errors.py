"""The one exception family of localjudge.

Every error a user can cause derives from `LocalJudgeError` and says what is wrong and what to
do next. The CLI turns these into a one-line message and exit code 2; anything else is a runtime
failure (exit code 1).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class LocalJudgeError(Exception):
    """Base class of every error localjudge raises on purpose."""


class ConfigError(LocalJudgeError):
    """A configuration file (models.yaml, a metric file) or an argument is invalid."""


class DataError(LocalJudgeError):
    """A data file or a test case is malformed; the message names file, line and field."""


class UnknownNameError(LocalJudgeError):
    """A judge, metric or other named thing does not exist; the message lists close matches."""


DISTRIBUTION = "localjudge-offline"
"""The name localjudge is installed by: an optional feature's packages come with `DISTRIBUTION[extra]`."""


def install_command(extra: str) -> str:
    """The pip command that installs localjudge with one of its extras."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


class MissingExtraError(LocalJudgeError, ImportError):
    """An optional feature's packages (an extra of localjudge) are not installed; the message says how to.

    It lives here, not in the feature's module, so that code can catch it without importing that module.
    """

    @classmethod
    def of(cls, feature: str, packages: str, exc: ImportError, install: str) -> MissingExtraError:
        """The error for `feature` (e.g. "the DeepEval adapter") whose import of `packages` failed with `exc`."""
        return cls(f"{feature} needs {packages} ({exc}); install: {install}")


class ModelUnavailableError(LocalJudgeError):
    """A judge is registered but cannot be loaded here (package missing, not cached offline…)."""


class UnsafeModelError(LocalJudgeError):
    """Loading would run untrusted code or unpickle untrusted weights without an opt-in."""


class ContextLengthError(LocalJudgeError):
    """A prompt is longer than the judge's context window."""


class NumericalError(LocalJudgeError):
    """A judge's forward overflowed its dtype (inf or NaN in its states): the item gets no score."""


class CacheError(LocalJudgeError):
    """The cache folder cannot hold a prepared copy of a judge (disk full, read-only, not a folder)."""


CLIP = 80
"""Characters of a user's value that a message quotes; longer values are cut with an ellipsis."""


def clip(value: object, limit: int = CLIP) -> str:
    """A value as a message quotes it: its repr, cut to about `limit` characters.

    Examples:
        >>> clip("short")
        "'short'"
        >>> clip("x" * 500)[-4:]
        "xx'…"
    """
    if isinstance(value, str) and len(value) > limit:
        return repr(value[:limit]) + "…"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def cut(text: object, limit: int = CLIP) -> str:
    """Text shown as it is (a name, a path), cut to about `limit` characters like `clip`."""
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "…"


def repeated(names: Iterable[object], most: int = 5) -> str:
    """The names that occur more than once, each quoted with `clip`, at most `most` of them.

    Examples:
        >>> repeated(["a", "b", "a"])
        "'a'"
    """
    names = list(names)
    twice = [n for k, n in enumerate(names) if names.count(n) > 1 and names.index(n) == k]
    return ", ".join(clip(n) for n in twice[:most]) + (", …" if len(twice) > most else "")


def field_path(loc: Iterable[object]) -> str:
    """A pydantic error location as "judges.0.source", each part cut like `clip` cuts values."""
    return ".".join(cut(part) for part in loc)


def unknown_name(kind: str, name: str, known: Iterable[str], hint: str = "") -> UnknownNameError:
    """Builds an `UnknownNameError` that lists the closest known names.

    Args:
        kind: What was looked up, e.g. "judge" or "metric".
        name: The name the user gave.
        known: All valid names.
        hint: The next step, appended to the message.
    """
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    msg = f"unknown {kind} {clip(name)}"
    if close:
        msg += f"; did you mean {', '.join(clip(c) for c in close)}?"
    else:
        listed = ", ".join(clip(k, 40) for k in known)
        # a long list would break the one-short-line rule: the hint says where to see them all
        msg += f"; known: {listed}" if len(listed) <= 200 else ""
    if hint:
        msg += f" ({hint})"
    return UnknownNameError(msg)
