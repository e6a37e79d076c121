"""The registry of metric kinds: every kind, built-in or from another package, registered the same way.

A kind is a `MetricKind` object (`kinds.base`) with a `name`. Packages declare their kinds as
entry points in the group `localjudge.kinds` (localjudge's own in its `pyproject.toml`, a third
party's in theirs), each naming the object:

    [project.entry-points."localjudge.kinds"]
    brevity = "my_package.brevity:BREVITY"

`KINDS` is filled from that group when `localjudge.kinds` is first imported; `register_kind`
adds one in a running process (what the entry points go through, and what a test or a notebook
calls). Registering a kind registers its records' detail too: the record (`kinds.records`) reads
and writes a kind's detail by the layout registered here.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from localjudge.errors import ConfigError, DataError, clip
from localjudge.kinds.base import MetricKind
from localjudge.kinds.records import DETAIL_LAYOUTS, DetailLayout

GROUP = "localjudge.kinds"
"""The entry-point group kinds are declared in."""

KINDS: dict[str, MetricKind[Any]] = {}
"""Kind name (a spec's `kind` field, a record's `kind`) -> kind, in registration order."""


def register_kind(kind: MetricKind[Any]) -> MetricKind[Any]:
    """Adds a kind to the registry under its `name`; its definitions then load, run and summarise.

    Raises:
        ConfigError: another kind is registered under that name, or its detail key is taken.
    """
    if not kind.name:
        raise ConfigError(f"{type(kind).__name__} has no name; set `name` to the kind its specs declare")
    held = KINDS.get(kind.name)
    if held is not None and held is not kind:
        raise ConfigError(f"metric kind {clip(kind.name)} is registered twice ({type(held).__name__} first)")
    key = kind.detail_key
    taken = next((k for k in KINDS.values() if k is not kind and k.detail is not None and k.detail_key == key), None)
    if kind.detail is not None and taken is not None:
        raise ConfigError(f"detail key {clip(key)} of kind {kind.name} is that of kind {taken.name}; choose another")
    KINDS[kind.name] = kind
    if kind.detail is not None:
        DETAIL_LAYOUTS[kind.name] = DetailLayout(key, kind.detail)
    return kind


def unregister_kind(name: str) -> None:
    """Removes a kind registered in this process (a test's toy kind)."""
    KINDS.pop(name, None)
    DETAIL_LAYOUTS.pop(name, None)


def load_entry_points() -> None:
    """Registers every kind the installed packages declare (group `localjudge.kinds`).

    Raises:
        ConfigError: an entry point does not load, or does not name a `MetricKind` of its name;
            the message names the package to fix or uninstall.
    """
    for point in entry_points(group=GROUP):
        package = point.dist.name if point.dist is not None else "an unknown package"
        try:
            kind = point.load()
        except Exception as exc:
            raise ConfigError(
                f"metric kind {point.name} of {package} does not load ({type(exc).__name__}: {exc}); "
                f"reinstall or uninstall {package}"
            ) from exc
        if not isinstance(kind, MetricKind) or kind.name != point.name:
            raise ConfigError(
                f"entry point {point.name} of {package} ({point.value}) is not a MetricKind named {point.name}; "
                f"fix or uninstall {package}"
            )
        register_kind(kind)
    if not KINDS:
        raise ConfigError(
            "no metric kinds are registered: localjudge's package metadata is missing "
            "(install it: pip install localjudge, or pip install -e . in a clone)"
        )


def kind_of(metric: Any) -> MetricKind[Any]:
    """The kind of a metric, or of a record's `kind` name.

    Raises:
        DataError: the name is not a registered kind (e.g. a record written by a newer localjudge).
    """
    name = metric if isinstance(metric, str) else metric.kind
    kind = KINDS.get(name)
    if kind is None:
        raise DataError(f"unknown metric kind {clip(name)}; localjudge knows {', '.join(KINDS)}")
    return kind
