"""`RunOptions`: how a run writes its output and treats its input, shared by eval, bias and generate.

The settings a run of any command has in common, validated once: where the output goes and what
to do when it exists (new, --resume, --overwrite), whether over-long content is cut
(--truncate), whether malformed input rows are skipped (--skip-invalid), and progress bars.
The command line builds one from its flags (`cli.options.run_options`); `evaluate`,
`generate_responses` and the bias lab check their own keywords through it, so the rules and the
messages are the same everywhere.

Examples:
    >>> RunOptions(out="r.jsonl", resume=True).mode
    'resume'
    >>> RunOptions().mode
    'new'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from localjudge.errors import ConfigError, clip
from localjudge.io.jsonl import Mode, check_output_mode


class RunOptions(BaseModel):
    """The settings a run shares with every other run (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    out: Path | None = Field(default=None, description="The file the run writes; None: nothing written.")
    resume: bool = Field(default=False, description="Continue `out`, skipping what it already holds.")
    overwrite: bool = Field(default=False, description="Replace `out` if it exists.")
    truncate: bool = Field(default=False, description="Cut content longer than the judge's context (recorded).")
    skip_invalid: bool = Field(default=False, description="Skip malformed input rows, listing each one.")
    progress: bool = Field(default=True, description="Show progress bars (only when stderr is a terminal).")

    def __init__(self, **data: Any):
        try:
            super().__init__(**data)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "options"
            raise ConfigError(
                f"run option {field}: {err['msg']} (got {clip(err.get('input'))}); "
                f"valid options: {', '.join(type(self).model_fields)}"
            ) from None

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
