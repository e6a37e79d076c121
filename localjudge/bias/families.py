"""Model families of a bias study's judges and generators, settled before any model loads.

Self-preference compares a judge's family with each generator's. A registry entry names its
family; a model loaded by path or hub id has none ("unknown") unless the user gives one with
`--family NAME=FAMILY` (or registers the model in a models.yaml passed with `--registry`). A
study with an unknown family is refused: "unknown" would be compared with "unknown" as if it
were one family.

Examples:
    >>> given = parse_families(["./my-model=llama"])
    >>> given
    {'./my-model': 'llama'}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from localjudge.errors import ConfigError, DataError, clip
from localjudge.judges.registry import UNKNOWN_FAMILY, Registry, model_family

HINT = "pass --family {name}=FAMILY, or register it in a models.yaml given with --registry"


def parse_families(specs: Iterable[str]) -> dict[str, str]:
    """`--family NAME=FAMILY` options as a name → family mapping.

    Raises:
        ConfigError: An option without "=", an empty name or family, the family "unknown",
            or a name given twice.
    """
    out: dict[str, str] = {}
    for spec in specs:
        name, sep, family = spec.rpartition("=")  # a path may hold "=", a family does not
        name, family = name.strip(), family.strip()
        if not sep or not name or not family:
            raise ConfigError(f"--family {clip(spec)}: write MODEL=FAMILY, e.g. --family ./my-model=llama")
        if family == UNKNOWN_FAMILY:
            raise ConfigError(f"--family {clip(spec)}: {UNKNOWN_FAMILY!r} is not a family; name the real one")
        if name in out:
            raise ConfigError(f"--family gives {clip(name)} twice; give each model's family once")
        out[name] = family
    return out


def check_names(given: Mapping[str, str], known: Iterable[str], what: str) -> None:
    """Refuses a --family for a model the command does not use (a typo would go unnoticed)."""
    known = set(known)
    for name in given:
        if name not in known:
            raise ConfigError(
                f"--family {clip(name)}=...: no {what} of that name; use the name exactly as given to the command"
            )


def model_families(names: Sequence[str], given: Mapping[str, str], registry: Registry, what: str) -> dict[str, str]:
    """The family of each model named on the command line; refuses any left unknown.

    Args:
        names: Registry names, model folders, GGUF files or hub ids.
        given: From `parse_families`.
        registry: The registry in use.
        what: "judge" or "model", for messages.

    Raises:
        ConfigError: A family contradicts the registry, or a model has no known family.
    """
    families = {name: model_family(name, registry, given.get(name)) for name in names}
    for name, family in families.items():
        if family == UNKNOWN_FAMILY:
            raise ConfigError(
                f"{what} {clip(name)} has no model family (it is not in the registry); " + HINT.format(name=name)
            )
    return families


def fill_families(recorded: Mapping[str, str], given: Mapping[str, str], what: str) -> dict[str, str]:
    """The family of each model of a responses or judgments file, with --family filling gaps.

    Args:
        recorded: Model name → family as recorded (may be "unknown").
        given: From `parse_families`; may set an unknown family, never change a recorded one.
        what: "generator" or "judge", for messages.

    Raises:
        DataError: A --family contradicts a recorded family, or a family stays unknown.
    """
    out = {}
    for name, was in recorded.items():
        family = given.get(name, was)
        if was not in (UNKNOWN_FAMILY, family):
            raise DataError(
                f"{what} {clip(name)} is recorded with family {clip(was)}, not {clip(family)}; drop its --family"
            )
        if family == UNKNOWN_FAMILY:
            raise DataError(
                f"{what} {clip(name)} has no model family (recorded as {UNKNOWN_FAMILY!r}); " + HINT.format(name=name)
            )
        out[name] = family
    return out
