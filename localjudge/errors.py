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


class ModelUnavailableError(LocalJudgeError):
    """A judge is registered but cannot be loaded here (package missing, not cached offline…)."""


class UnsafeModelError(LocalJudgeError):
    """Loading would run untrusted code or unpickle untrusted weights without an opt-in."""


class ContextLengthError(LocalJudgeError):
    """A prompt is longer than the judge's context window."""


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
    msg = f"unknown {kind} {name!r}"
    if close:
        msg += f"; did you mean {', '.join(repr(c) for c in close)}?"
    else:
        msg += f"; known: {', '.join(known)}" if len(known) <= 20 else ""
    if hint:
        msg += f" ({hint})"
    return UnknownNameError(msg)
