"""`Options`: the base of every settings model, with pydantic's errors turned into `ConfigError` in one place.

A settings model (`EngineOptions`, `RunOptions`, `ScoringOptions`) is frozen and refuses unknown
fields; a value it refuses raises `ConfigError` naming the field, the value and the valid
fields, so the command line reports it as a user error (exit 2) with the same wording for all.

Examples:
    >>> class Demo(Options):
    ...     label: ClassVar[str] = "demo option"
    ...     n: int = 1
    >>> Demo(m=2)
    Traceback (most recent call last):
    ...
    localjudge.errors.ConfigError: demo option m: Extra inputs are not permitted (got 2); valid options: n
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from localjudge.errors import ConfigError, clip


class Options(BaseModel):
    """A frozen settings model whose invalid values raise `ConfigError` (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: ClassVar[str] = "option"
    """How messages name one of the model's fields, e.g. "run option"."""

    def __init__(self, **data: Any):
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise config_error(exc, self.label, type(self).model_fields) from None


def check_keywords(keywords: Mapping[str, Any], typed: Any, objects: str, given: bool, caller: str) -> None:
    """Refuses what an entry point's typed keyword sugar cannot take, before any object is built.

    Args:
        keywords: The keywords the call got.
        typed: The `TypedDict` of the keywords it takes (mypy checks the names; this, callers mypy never saw).
        objects: The settings objects the keywords stand for, as the message names them ("settings=").
        given: Whether one of those objects was given too.
        caller: The function's name, for the messages.

    Raises:
        TypeError: A keyword `typed` does not name (as Python raises it).
        ConfigError: Objects and keywords together: one call has one place for each setting.
    """
    unknown = set(keywords) - typed.__optional_keys__
    if unknown:
        raise TypeError(f"{caller}() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    if keywords and given:
        raise ConfigError(f"{caller}: give {objects} or their fields as keywords, not both")


def config_error(exc: ValidationError, label: str, fields: Any) -> ConfigError:
    """The `ConfigError` of pydantic's first complaint: the field, the complaint, the value, the valid fields."""
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or "options"
    return ConfigError(
        f"{label} {field}: {err['msg']} (got {clip(err.get('input'))}); valid options: {', '.join(fields)}"
    )
