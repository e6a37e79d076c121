"""`RunOptions` and `ScoringOptions`: how a run writes and reads, and how each of its cases is scored.

`RunOptions` holds the settings of the run itself: where the output goes and what to do when it
exists (new, --resume, --overwrite), whether malformed input rows are skipped (--skip-invalid),
and progress bars. `ScoringOptions` holds what decides a case's record: the prompt template
(hardened), cutting over-long content (--truncate), the valid-mass floor (--min-valid-mass), the
evaluation-steps cache and the cases per scoring call. The command line builds each once from its
flags; `evaluate`, `evaluate_distributed`, the Ray actors, `generate_responses` and the bias lab
take them as they are, and build them from their keywords when called without them
(`split_settings`), so the rules and the messages are the same everywhere.

Examples:
    >>> RunOptions(out="r.jsonl", resume=True).mode
    'resume'
    >>> RunOptions().mode
    'new'
    >>> ScoringOptions(truncate=True).min_valid_mass
    0.1
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from pydantic import Field, model_validator

from localjudge.errors import ConfigError
from localjudge.io.jsonl import Mode, check_output_mode
from localjudge.kinds.settings import ScoringOptions
from localjudge.options import Options

__all__ = ["RunOptions", "ScoringOptions", "Settings", "split_settings"]


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


class Settings(NamedTuple):
    """The run and scoring settings of one call."""

    run: RunOptions
    scoring: ScoringOptions


def split_settings(
    run: RunOptions | None,
    scoring: ScoringOptions | None,
    keywords: Mapping[str, Any],
    run_keywords: Collection[str],
    caller: str,
) -> Settings:
    """The settings of a call that takes `run`, `scoring` and their fields as keywords.

    `run_keywords` are the `RunOptions` fields the caller takes as keywords; every
    `ScoringOptions` field is one. A keyword is refused next to its object when their values
    differ: one call has one value of each setting.

    Raises:
        TypeError: a keyword the caller does not take (as Python raises it).
        ConfigError: a keyword given with a different value in `run` or `scoring`, or a value
            the options refuse.
    """
    unknown = set(keywords) - set(run_keywords) - set(ScoringOptions.model_fields)
    if unknown:
        raise TypeError(f"{caller}() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    run = _merged(RunOptions, run, {k: v for k, v in keywords.items() if k in run_keywords}, caller, "run")
    scoring = _merged(
        ScoringOptions, scoring, {k: v for k, v in keywords.items() if k not in run_keywords}, caller, "scoring"
    )
    return Settings(run, scoring)


def _merged(model: Any, given: Any, keywords: dict[str, Any], caller: str, name: str) -> Any:
    if given is None:
        return model(**keywords)
    parsed = model(**{**given.model_dump(), **keywords})  # the keywords as the model reads them ("r.jsonl": a Path)
    for key, value in keywords.items():
        if getattr(parsed, key) != getattr(given, key):
            raise ConfigError(
                f"{caller}: {key}={value!r} differs from {name}.{key}={getattr(given, key)!r}; give it once"
            )
    return given
