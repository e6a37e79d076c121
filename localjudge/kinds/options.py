"""`ScoringOptions`: how every case of a run is scored, one object from the command line to each kind.

Built once (the command line from its flags, `evaluate` from its keywords) and passed unchanged
through `evaluate`, the distributed and Ray paths and the bias lab to each metric's
`MetricContext`, where the kinds read it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, field_validator

from localjudge.errors import ConfigError
from localjudge.options import Options
from localjudge.scoring.distribution import DEFAULT_MIN_VALID_MASS


class ScoringOptions(Options):
    """How every case of a run is scored: what a record depends on besides the case, metric and judge."""

    label: ClassVar[str] = "scoring option"

    hardened: bool = Field(default=True, description="Fence content and restate the instructions after it.")
    truncate: bool = Field(default=False, description="Cut content longer than the judge's context (recorded).")
    min_valid_mass: float = Field(
        default=DEFAULT_MIN_VALID_MASS,
        description="Below this probability on the valid scores (labels) a case is unscored; 0..1, recorded.",
    )
    steps_cache: Path | None = Field(
        default=None, description="Folder of generated evaluation steps; None: ~/.cache/localjudge."
    )
    chunk_size: int | None = Field(
        default=None, ge=1, description="Cases per scoring call; None: 256 on CUDA, 16 on the CPU."
    )

    @field_validator("min_valid_mass", mode="before")
    @classmethod
    def _share(cls, value: Any) -> Any:
        # before pydantic's parsing, so the message quotes the value as given
        if isinstance(value, (int, float)) and not 0 <= value <= 1:  # NaN fails too
            raise ConfigError(f"min_valid_mass {value!r} is not a share of probability; give one in 0..1")
        return value
