"""The rank file: one record per output, with its score, rank, intervals and the comparisons it took part in.

A record has the keys `calibrate` looks for in a results file (`case_id`, `metric`, `extra`,
`score`, `raw_score`), so `localjudge calibrate agreement ranks.jsonl --human FIELD` reads it as it reads
`eval`'s. Every judged comparison itself, with the judge and both orders' readings, is a record
of the comparisons file beside it (an `eval` results file of the pairwise metric).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from localjudge.io.jsonl import RecordFile


class ComparisonReading(BaseModel):
    """One comparison an output took part in, as this output's record sees it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    other: str = Field(description="Case id of the output it was compared with.")
    comparison: str = Field(description="Case id of the comparison in the comparisons file.")
    p_better: float | None = Field(
        description="P(this output better), both presentation orders averaged (a tie counts half); null when "
        "the comparison is unscored."
    )


class RankRecord(BaseModel):
    """One output ranked within its group."""

    model_config = ConfigDict(extra="forbid")

    case_id: str = Field(description="Id of the case holding the output.")
    metric: str = Field(description="The pairwise metric that compared the outputs.")
    kind: Literal["rank"] = Field(default="rank", description="Marks a rank record.")
    group: str = Field(description="The group it was ranked in (the value of the group field).")
    score: float | None = Field(
        description="Mean P(beats another output of the group) under the fitted Bradley–Terry model, 0–1; null "
        "when unscored."
    )
    raw_score: float | None = Field(
        description="Bradley–Terry log-strength, centred within the group; null when unscored."
    )
    rank: int | None = Field(description="1 for the best output of the group; null when unscored.")
    group_size: int = Field(description="Outputs ranked in the group (the scored ones).")
    score_low: float | None = Field(description="Lower end of the score's interval (see `level`).")
    score_high: float | None = Field(description="Upper end of the score's interval.")
    rank_low: int | None = Field(description="Best rank in the rank's interval.")
    rank_high: int | None = Field(description="Worst rank in the rank's interval.")
    level: float = Field(
        description="Coverage of the intervals: Laplace draws from the fit's information, scaled by how far the "
        "judge's readings stray from the fitted model (docs/rank.md)."
    )
    comparisons: list[ComparisonReading] = Field(description="The comparisons it took part in, in the order made.")
    unscored_reason: str | None = Field(default=None, description="Why there is no score, or null.")
    budget: int = Field(description="Comparisons per output the run allowed.")
    extra: dict[str, Any] = Field(default_factory=dict, description="Extra fields of the case (human scores...).")
    judge: dict[str, Any] = Field(description="Judge name, family, source, file hash or revision, dtype, device.")
    metric_spec: dict[str, Any] = Field(description="The pairwise metric's full definition.")
    localjudge_version: str = Field(description="Version of localjudge that produced the record.")


RANKS = RecordFile(RankRecord, "localjudge rank record", "rank file")
"""Rank files: `RANKS.read(path)`, `RANKS.replace(path, records)`."""


def read_ranks(path: str) -> list[RankRecord]:
    """The records of a rank file."""
    return RANKS.read(path)
