"""`RunOptions` and `ScoringOptions`: how a run writes and reads, and how each of its cases is scored.

`RunOptions` holds the settings of the run itself: where the output goes and what to do when it
exists (new, --resume, --overwrite), whether malformed input rows are skipped (--skip-invalid),
and progress bars. `ScoringOptions` holds what decides a case's record: the prompt template
(hardened), cutting over-long content (--truncate), the valid-mass floor (--min-valid-mass), the
evaluation-steps cache and the cases per scoring call. The command line builds each once from its
flags and passes them whole. The top-level entry points (`evaluate`, `evaluate_panel`,
`rank_outputs`) also take their fields as keywords, typed (`EvaluateKeywords`, so mypy checks
the names), either the objects or the keywords, never both (`options_of`); every other function
takes the objects only.

Examples:
    >>> RunOptions(out="r.jsonl", resume=True).mode
    'resume'
    >>> RunOptions().mode
    'new'
    >>> ScoringOptions(truncate=True).min_valid_mass
    0.1
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, TypedDict

from pydantic import Field, model_validator

from localjudge.errors import ConfigError
from localjudge.io.jsonl import Mode, check_output_mode
from localjudge.kinds.options import ScoringOptions
from localjudge.options import Options, check_keywords

__all__ = ["CallOptions", "EvaluateKeywords", "RunOptions", "ScoringOptions", "options_of"]


class RunOptions(Options):
    """How a run writes its output and reads its input (see the module docstring)."""

    label: ClassVar[str] = "run option"

    out: Path | None = Field(default=None, description="The file the run writes; None: nothing written.")
    resume: bool = Field(default=False, description="Continue `out`, skipping what it already holds.")
    overwrite: bool = Field(default=False, description="Replace `out` if it exists.")
    skip_invalid: bool = Field(default=False, description="Skip malformed input rows, listing each one.")
    progress: bool = Field(default=True, description="Show progress bars (only when stderr is a terminal).")

    @model_validator(mode="after")
    def _check(self) -> RunOptions:
        if self.resume and self.overwrite:
            raise ConfigError("--resume and --overwrite exclude each other")
        return self

    @property
    def mode(self) -> Mode:
        """How `out` is opened: "resume", "overwrite" or "new" (must not hold anything yet)."""
        return "resume" if self.resume else ("overwrite" if self.overwrite else "new")

    def check_output(self, resumable: bool = True) -> None:
        """Refuses, before any work, a resume without an output or a new output over an existing file.

        Raises:
            ConfigError: --resume without --out, or `out` holds something and neither --resume
                nor --overwrite is given.
        """
        if self.resume and self.out is None:
            raise ConfigError("--resume needs --out")
        if self.out is not None:
            check_output_mode(self.out, self.mode, resumable)


class CallOptions(NamedTuple):
    """The run and scoring settings of one call."""

    run: RunOptions
    scoring: ScoringOptions


class EvaluateKeywords(TypedDict, total=False):
    """The fields of `RunOptions` (what a run writes) and `ScoringOptions` as keywords of an entry point."""

    out: str | Path | None
    resume: bool
    overwrite: bool
    progress: bool
    hardened: bool
    truncate: bool
    min_valid_mass: float
    steps_cache: str | Path | None
    chunk_size: int | None


def options_of(
    run: RunOptions | None, scoring: ScoringOptions | None, keywords: Mapping[str, Any], caller: str
) -> CallOptions:
    """The settings of an entry point called with `run` and `scoring`, or with their fields as keywords.

    Raises:
        TypeError: A keyword that is no field of `EvaluateKeywords` (mypy says so before it runs).
        ConfigError: Objects and keywords together (one call has one value of each setting), or a
            value the options refuse.
    """
    check_keywords(keywords, EvaluateKeywords, "run= and scoring=,", run is not None or scoring is not None, caller)
    return CallOptions(
        run or RunOptions(**{k: v for k, v in keywords.items() if k in RunOptions.model_fields}),
        scoring or ScoringOptions(**{k: v for k, v in keywords.items() if k in ScoringOptions.model_fields}),
    )
