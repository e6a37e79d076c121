"""Command-line flags generated from a settings model's fields, so that a field added is a flag.

`settings_flags(Model, "name")` gives a command one flag per field of `Model` (an `Options`):
`token_budget` is `--token-budget N`, a bool `reuse_prefix` is `--reuse-prefix/--no-reuse-prefix`,
a Literal lists its values, the field's description is the flag's help and its default is shown.
The command gets one `Model` named `name`, built from the flags the user gave (the others keep
the model's defaults, so `model_fields_set` says which were given). Values are validated by the
model itself, one flag at a time, so that a bad one exits 2 naming its flag.

Examples:
    >>> from localjudge.tune.options import TuneOptions
    >>> @click.command()
    ... @settings_flags(TuneOptions, "settings")
    ... def cmd(settings):
    ...     click.echo(settings.epochs)
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args, get_origin

import click
from pydantic.fields import FieldInfo


def settings_flags(
    model: Any, name: str, fields: Sequence[str] | None = None, help_text: Mapping[str, str] | None = None
):
    """One flag per field of the settings model `model`, passed to the command as one `model` named `name`.

    Args:
        model: An `Options` class; each field's type is one of bool, int, float, str, a Literal, or one of
            them or None.
        name: The command's parameter the object is passed as; its flags' parameters are `name_FIELD`.
        fields: The fields that get a flag, in --help's order; default every field. A field left out keeps
            its default (so it must have one).
        help_text: A flag's help where the field's description (written for the Python API) reads badly on
            the command line. A default other than None is appended ([default: X]); help for a field whose
            default is None says what it means itself.
    """
    names = list(model.model_fields if fields is None else fields)
    unknown = set(names) - set(model.model_fields) | set(help_text or {}) - set(names)
    assert not unknown, f"{model.__name__} has no field {unknown}"
    prefix = name + "_"
    # a required field is checked first, alone: the other flags are checked with it
    required = [n for n in names if model.model_fields[n].is_required()]

    def decorate(fn):
        @functools.wraps(fn)
        def command(*args, **kwargs):
            from localjudge.errors import ConfigError

            given = {n: kwargs.pop(prefix + n) for n in names}
            given = {n: v for n, v in given.items() if v is not None}
            base = {n: given[n] for n in required if n in given}
            for n in sorted(given, key=lambda n: n not in required):  # one at a time: an error names its flag
                try:
                    model(**{**base, n: given[n]})
                except ConfigError as exc:
                    raise ConfigError(f"{flag_of(n)}: {exc}") from None
            kwargs[name] = model(**given)
            return fn(*args, **kwargs)

        for n in reversed(names):
            text = (help_text or {}).get(n)
            command = _flag(prefix + n, n, model.model_fields[n], text)(command)
        return command

    return decorate


def flag_of(field: str) -> str:
    """The flag of a settings field: `token_budget` -> `--token-budget`."""
    return "--" + field.replace("_", "-")


def _flag(param: str, name: str, field: FieldInfo, text: str | None):
    """The click option of one field, its value None when not given."""
    flag = flag_of(name)
    kind = _flag_type(field.annotation)
    required = field.is_required()
    shown = "" if required or field.default is None else f" [default: {_shown(field.default)}]"
    # the field docs speak of the Python API, where an omitted option is None
    text = (text if text is not None else (field.description or "").replace("None: ", "default: ")) + shown
    if kind is bool:
        return click.option(f"{flag}/--no-{flag[2:]}", param, default=None, help=text)
    if isinstance(kind, tuple):  # a Literal: the model checks it (and takes its aliases, e.g. bf16)
        return click.option(flag, param, metavar=f"[{'|'.join(kind)}]", default=None, required=required, help=text)
    return click.option(flag, param, type=kind, default=None, required=required, help=text)


def _flag_type(annotation: Any) -> Any:
    """bool, a Literal's values, or the click type of a field's annotation (None dropped from optional ones)."""
    args = [a for a in get_args(annotation) if a is not type(None)] if get_origin(annotation) is not Literal else []
    if args:  # X | None, Optional[X]
        assert len(args) == 1, f"settings field type {annotation} has no command-line form"
        return _flag_type(args[0])
    if get_origin(annotation) is Literal:
        return tuple(str(v) for v in get_args(annotation))
    kinds = {bool: bool, int: click.INT, float: click.FLOAT, str: click.STRING}
    assert annotation in kinds, f"settings field type {annotation} has no command-line form; extend _flag_type"
    return kinds[annotation]


def _shown(value: Any) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else str(value)
