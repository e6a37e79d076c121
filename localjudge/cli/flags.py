"""Command-line flags generated from a settings model's fields, so that a field added is a flag.

`settings_flags(Model, "name")` gives a command one flag per field of `Model` (an `Options`):
`token_budget` is `--token-budget N`, a bool `reuse_prefix` is `--reuse-prefix/--no-reuse-prefix`,
a Literal lists its values, a pair `(float, float)` takes two numbers, a list repeats its flag, the
field's description is the flag's help and its default is shown. Where a command's flag has stood
differently for a while (another name, a metavar, a file path, a one-way switch), a `Flag` says so.
The command gets one `Model` named `name`, built from the flags the user gave (the others keep
the model's defaults, so `model_fields_set` says which were given). Values are validated by the
model itself, so that a bad one exits 2 naming its flag.

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
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, get_args, get_origin

import click
from pydantic.fields import FieldInfo


class Flag(NamedTuple):
    """How one field's flag differs from the one generated from the field."""

    name: str | None = None
    """The flag, e.g. `--source-field` for `source_fields`; default `--` and the field's name, dashed."""
    metavar: str | None = None
    """What --help shows for the value, e.g. `LOW HIGH`, `FILE`."""
    type: Any = None
    """A click type in place of the field's, e.g. `click.Path(dir_okay=False)`."""
    required: bool = False
    """The command needs the flag though the field has a default (e.g. a command that always writes --out)."""
    switch: bool = False
    """A bool's flag is one switch to the value that is not the default (`--resume`; `--no-progress` given as
    the name), not a `--x/--no-x` pair."""
    envvar: str | None = None
    """An environment variable read when the flag is not given."""


def settings_flags(
    model: Any,
    name: str,
    fields: Sequence[str] | None = None,
    help_text: Mapping[str, str] | None = None,
    flags: Mapping[str, Flag] | None = None,
):
    """One flag per field of the settings model `model`, passed to the command as one `model` named `name`.

    Args:
        model: An `Options` class; each field's type is one of bool, int, float, str, a Path, a Literal, a
            tuple or a list of them, or one of them or None.
        name: The command's parameter the object is passed as; its flags' parameters are `name_FIELD`.
        fields: The fields that get a flag, in --help's order; default every field. A field left out keeps
            its default (so it must have one).
        help_text: A flag's help where the field's description (written for the Python API) reads badly on
            the command line. A default other than None is appended ([default: X]); help for a field whose
            default is None says what it means itself.
        flags: A field's flag where it differs from the generated one (`Flag`).
    """
    names = list(model.model_fields if fields is None else fields)
    unknown = set(names) - set(model.model_fields) | (set(help_text or {}) | set(flags or {})) - set(names)
    assert not unknown, f"{model.__name__} has no field {unknown}"
    specs = {n: (flags or {}).get(n, Flag()) for n in names}
    prefix = name + "_"
    # a required field is checked with every other: the model cannot be built without it
    required = [n for n in names if model.model_fields[n].is_required()]

    def decorate(fn):
        @functools.wraps(fn)
        def command(*args, **kwargs):
            given = {n: kwargs.pop(prefix + n) for n in names}
            given = {n: list(v) if isinstance(v, tuple) and _is_list(n) else v for n, v in given.items()}
            given = {n: v for n, v in given.items() if v is not None and v != []}
            kwargs[name] = _build(model, given, required, specs)
            return fn(*args, **kwargs)

        for n in reversed(names):
            text = (help_text or {}).get(n)
            command = _flag(prefix + n, n, model.model_fields[n], text, specs[n])(command)
        return command

    def _is_list(n: str) -> bool:
        return _plain(model.model_fields[n].annotation)[0] is list

    return decorate


def _build(model: Any, given: dict[str, Any], required: list[str], specs: Mapping[str, Flag]) -> Any:
    """The model of the values given; a value it refuses exits 2 naming its flag.

    The flag named is the one whose value alone (with the required ones) draws the same complaint: a
    complaint about a combination (--resume with --overwrite; --host without --api-key) names its flags itself.
    """
    from localjudge.errors import ConfigError

    try:
        return model(**given)
    except ConfigError as exc:
        complaint = str(exc)
        base = {n: given[n] for n in required if n in given}
        for n in sorted(given, key=lambda n: n not in required):
            try:
                model(**{**base, n: given[n]})
            except ConfigError as alone:
                flag = specs[n].name or flag_of(n)
                if str(alone) == complaint and not complaint.startswith(flag):
                    raise ConfigError(f"{flag}: {complaint}") from None
        raise


def flag_of(field: str) -> str:
    """The flag of a settings field: `token_budget` -> `--token-budget`."""
    return "--" + field.replace("_", "-")


def _flag(param: str, name: str, field: FieldInfo, text: str | None, spec: Flag):
    """The click option of one field, its value None (a list's: empty) when not given."""
    flag = spec.name or flag_of(name)
    origin, kind = _plain(field.annotation)
    required = field.is_required() or spec.required
    empty = field.default is None or field.default == [] or spec.switch
    shown = "" if field.is_required() or empty else f" [default: {_shown(field.default)}]"
    # the field docs speak of the Python API, where an omitted option is None
    text = (text if text is not None else (field.description or "").replace("None: ", "default: ")) + shown
    # no default given to click but a bool's None: click 8.3+ takes an explicit None as given, --x required or not
    common: dict[str, Any] = {"help": text, "envvar": spec.envvar, "metavar": spec.metavar}
    if kind is bool and spec.switch:
        return click.option(flag, param, is_flag=True, flag_value=not field.default, default=None, **common)
    if kind is bool:
        return click.option(f"{flag}/--no-{flag[2:]}", param, default=None, **common)
    if isinstance(kind, tuple) and origin is Literal:  # the model checks it (and takes its aliases, e.g. bf16)
        common["metavar"] = spec.metavar or f"[{'|'.join(kind)}]"
        return click.option(flag, param, required=required, **common)
    if origin is tuple:
        common["metavar"] = spec.metavar or " ".join(k.name.upper() for k in kind)
    click_type = spec.type or kind
    return click.option(flag, param, type=click_type, required=required, multiple=origin is list, **common)


def _plain(annotation: Any) -> tuple[Any, Any]:
    """(tuple, list, Literal or None; the click type) of a field's annotation, None dropped from optional ones.

    A Literal's type is its values as strings; a tuple's, the click types of its items; a list's, its item's.
    """
    origin = get_origin(annotation)
    if origin is Annotated:
        return _plain(get_args(annotation)[0])
    if origin is Literal:
        return Literal, tuple(str(v) for v in get_args(annotation))
    if origin in (tuple, list):
        items = tuple(_plain(a)[1] for a in get_args(annotation))
        return origin, items if origin is tuple else items[0]
    args = [a for a in get_args(annotation) if a is not type(None)]
    if args:  # X | None, Optional[X]
        assert len(args) == 1, f"settings field type {annotation} has no command-line form"
        return _plain(args[0])
    kinds = {bool: bool, int: click.INT, float: click.FLOAT, str: click.STRING, Path: click.Path()}
    assert annotation in kinds, f"settings field type {annotation} has no command-line form; extend _plain"
    return None, kinds[annotation]


def _shown(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return " ".join(str(v) for v in value)
    return ("on" if value else "off") if isinstance(value, bool) else str(value)
