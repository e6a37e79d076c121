"""`RankOptions`: how outputs are grouped and ranked, and how many comparisons each may take.

Examples:
    >>> RankOptions(group="doc_id", budget=8).output_field
    'actual_output'
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from localjudge.options import Options


class RankOptions(Options):
    """The settings of a ranking run (the run's file and the scoring are `RunOptions`, `ScoringOptions`)."""

    label: ClassVar[str] = "rank option"

    group: str = Field(min_length=1, description="Case field whose value groups the outputs ranked together.")
    budget: int = Field(
        default=4,
        ge=1,
        description="Comparisons per output: a group of n gets ⌈budget·n/2⌉ pairs, each judged in both orders, "
        "at most every pair once.",
    )
    output_field: str = Field(default="actual_output", min_length=1, description="Case field holding the output.")
    system: str | None = Field(
        default=None, description="Case field naming the system of each output, for the system-level ranking."
    )
    level: float = Field(default=0.95, gt=0, lt=1, description="Coverage of every interval.")
    seed: int = Field(default=0, description="Seed of the first round's order, the intervals' draws, the bootstrap.")
