"""`CalibrationOptions`: how a calibration run computes its estimates, recorded in its report.

Examples:
    >>> CalibrationOptions().target
    0.8
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypedDict

from pydantic import ConfigDict, model_validator

from localjudge.options import Options, check_keywords


class CalibrationOptions(Options):
    """Options of one calibration run; recorded in the report so it can be reproduced."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    label: ClassVar[str] = "calibration option"

    target: float = 0.8
    """Spearman ρ the judge must reach to be READY to gate releases."""
    n_bootstrap: int = 1000
    """Number of bootstrap resamples behind each interval; 0 disables intervals."""
    seed: int = 0
    """Seed of the bootstrap and of the calibration split."""
    ci_level: float = 0.95
    """Coverage of the bootstrap percentile intervals."""
    judge_scale: tuple[float, float] | None = None
    """(low, high) of the judge's score scale, when known."""
    human_scale: tuple[float, float] | None = None
    """(low, high) of the human score scale, when known."""
    fit: Literal["isotonic"] | None = None
    """Monotone mapping to fit on a calibration split, or None."""
    split: float = 0.5
    """Share of items (or groups) in the calibration split of `fit`."""

    @model_validator(mode="after")
    def _check(self) -> CalibrationOptions:
        if not -1 <= self.target <= 1:
            raise ValueError(f"target must be a correlation in [-1, 1], got {self.target}")
        if self.n_bootstrap < 0:
            raise ValueError("n_bootstrap must be 0 or more")
        if not 0 < self.ci_level < 1:
            raise ValueError(f"ci_level must be strictly between 0 and 1, got {self.ci_level}")
        if not 0 < self.split < 1:
            raise ValueError(f"split must be strictly between 0 and 1, got {self.split}")
        for name, scale in (("judge_scale", self.judge_scale), ("human_scale", self.human_scale)):
            if scale is not None and not scale[0] < scale[1]:
                raise ValueError(f"{name} needs LOW < HIGH, got {scale[0]} {scale[1]}")
        return self


class CalibrationKeywords(TypedDict, total=False):
    """The fields of `CalibrationOptions` as keywords of `calibrate` (typed: mypy checks the names)."""

    target: float
    n_bootstrap: int
    seed: int
    ci_level: float
    judge_scale: tuple[float, float] | None
    human_scale: tuple[float, float] | None
    fit: Literal["isotonic"] | None
    split: float


def calibration_options_of(
    settings: CalibrationOptions | None, keywords: Mapping[str, Any], caller: str
) -> CalibrationOptions:
    """The settings of a call given `settings`, or its fields as keywords; never both.

    Raises:
        TypeError: A keyword that is no field of `CalibrationKeywords` (mypy says so before it runs).
        ConfigError: `settings` and keywords together, or a value the settings refuse.
    """
    check_keywords(keywords, CalibrationKeywords, "settings=", settings is not None, caller)
    return settings or CalibrationOptions(**keywords)
