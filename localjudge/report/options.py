"""`ReportOptions`: what a report page shows and how its statistics are computed, built once at the boundary."""

from __future__ import annotations

from typing import ClassVar

from pydantic import ConfigDict, Field

from localjudge.options import Options


class ReportOptions(Options):
    """Options of one report page; the page records them beside its sources."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    label: ClassVar[str] = "report option"

    title: str | None = None
    """Page title; None: the results files' names."""
    human: str | None = None
    """Human score field of the cases (their `extra`); None: a field named `human_<dimension>` matching the
    metric, or `human`, where the cases have one."""
    group: str | None = None
    """Group id field (e.g. `doc_id`) for the agreement's summary level and its bootstrap; None: no groups."""
    n_bootstrap: int = Field(default=1000, ge=0)
    """Bootstrap resamples behind every interval (means and agreement); 0 leaves intervals out."""
    seed: int = 0
    """Seed of the bootstrap."""
    ci_level: float = Field(default=0.95, gt=0, lt=1)
    """Coverage of the intervals."""
    bins: int = Field(default=20, ge=2, le=200)
    """Bars of each score histogram."""
    top_differences: int = Field(default=50, ge=1)
    """Cases listed per pair of judges compared: those where their scores differ most."""
