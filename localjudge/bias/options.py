"""`BiasOptions`: how the bias lab's estimates, intervals and tests are computed.

Examples:
    >>> DEFAULT_OPTIONS.n_bootstrap
    1000
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import ConfigDict, Field

from localjudge.options import Options


class BiasOptions(Options):
    """How estimates, intervals and tests of a bias analysis are computed."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, use_attribute_docstrings=True)
    label: ClassVar[str] = "bias option"

    n_bootstrap: int = Field(default=1000, ge=1)
    """Bootstrap resamples of items for the confidence intervals (as `CalibrationOptions`)."""
    n_permutations: int = Field(default=9999, ge=1)
    """Random sign flips or permutations per test (small samples are enumerated exactly)."""
    seed: int = Field(default=0, ge=0)
    """Seed of every random draw; the same seed and records give the same report."""
    ci_level: float = Field(default=0.95, gt=0.0, lt=1.0)
    """Coverage of the percentile bootstrap intervals (as `CalibrationOptions`)."""
    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    """Family-wise error rate of the Holm-corrected findings."""
    length_unit: int = Field(default=100, ge=1)
    """Length slopes are reported per this many characters or tokens."""


DEFAULT_OPTIONS = BiasOptions()
"""The options of an analysis given none (frozen, so one instance serves as every default)."""
