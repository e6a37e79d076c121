"""What the kinds that compare two outputs share: the output a record prefers, and output 1's win rate.

Examples:
    >>> preference({"output_1": 0.7, "output_2": 0.3}, ("output_1", "output_2"))
    1.0
    >>> preference({"output_1": 0.3, "output_2": 0.2, "tie": 0.5}, ("output_1", "output_2"))
    0.5
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from localjudge.kinds.records import PairwiseDetail, ResultRecord


class ComparisonSummary(BaseModel):
    """What a comparison's summary adds: output 1's win rate and how much the presentation order mattered."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    win_rate: float | None = Field(
        default=None,
        description="Share of scored cases where output 1 is the most probable answer, ties (and exact draws) "
        "counting half.",
    )
    mean_disagreement: float | None = Field(
        default=None,
        description="Pairwise: mean |P(output 1 better) shown first - shown second| over scored cases; null for "
        "a comparison read in one order.",
    )
    flipped: int | None = Field(
        default=None, description="Scored cases whose preferred output changes with the presentation order."
    )


def preference(distribution: dict[str, float], outputs: Sequence[str]) -> float:
    """1 when output 1 is the most probable answer, 0 when output 2 is, 0.5 for a tie or an exact draw."""
    first, second = distribution[outputs[0]], distribution[outputs[1]]
    tie = distribution.get("tie", 0.0)
    if first > max(second, tie):
        return 1.0
    if second > max(first, tie):
        return 0.0
    return 0.5


def preferred(record: ResultRecord) -> str:
    """The output a scored comparison prefers, in words: "output_1 better", "output_2 better" or "tie"."""
    assert record.distribution  # a scored comparison has its answer's probabilities
    first, second = record.metric_spec["output_fields"]
    return {1.0: f"{first} better", 0.0: f"{second} better"}.get(
        preference(record.distribution, (first, second)), "tie"
    )


def comparison_summary(records: Sequence[ResultRecord]) -> ComparisonSummary:
    """Win rate of output 1, mean order disagreement and flips over a comparison's scored records."""
    scored = [r for r in records if r.score is not None]
    details = [r.detail for r in scored if isinstance(r.detail, PairwiseDetail)]
    gaps = [d.disagreement for d in details if d.disagreement is not None]
    wins = [preference(r.distribution, r.metric_spec["output_fields"]) for r in scored if r.distribution]
    return ComparisonSummary(
        win_rate=sum(wins) / len(wins) if wins else None,
        mean_disagreement=sum(gaps) / len(gaps) if gaps else None,
        flipped=sum(bool(d.flipped) for d in details),
    )
