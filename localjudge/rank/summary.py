"""A ranking run's summary: what was compared and, given a system field, which system ranks best.

Examples:
    >>> SystemRank(system="a", mean_score=0.6, ci_low=0.5, ci_high=0.7, rank=1, rank_low=1, rank_high=2,
    ...            outputs=10).rank
    1
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from localjudge.kinds.records import PairwiseDetail, ResultRecord
from localjudge.rank.records import RankRecord
from localjudge.rank.systems import system_ranking
from localjudge.stats.numbers import finite


class SystemRank(BaseModel):
    """One system's place over all groups."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system: str = Field(description="The system (the value of the system field).")
    mean_score: float = Field(description="Mean within-group score of its scored outputs.")
    ci_low: float | None = Field(description="Lower end of the mean score's interval (groups resampled).")
    ci_high: float | None = Field(description="Upper end of the mean score's interval.")
    rank: int = Field(description="1 for the best mean score.")
    rank_low: int = Field(description="Best rank in the rank's interval.")
    rank_high: int = Field(description="Worst rank in the rank's interval.")
    outputs: int = Field(description="Its scored outputs.")


class RankSummary(BaseModel):
    """What a ranking run compared and found."""

    model_config = ConfigDict(extra="forbid")

    metric: str = Field(description="The pairwise metric.")
    groups: int = Field(description="Groups ranked.")
    outputs: int = Field(description="Outputs in all groups.")
    scored: int = Field(description="Outputs with a score.")
    unscored_reasons: dict[str, int] = Field(description="Why outputs are unscored: reason -> count.")
    budget: int = Field(description="Comparisons per output allowed.")
    comparisons: int = Field(description="Comparisons made (each judged in both presentation orders).")
    comparisons_unscored: int = Field(description="Comparisons without a reading (too little valid mass...).")
    comparisons_per_output: float | None = Field(description="Mean comparisons each output took part in.")
    mean_disagreement: float | None = Field(
        description="Mean |P(output 1 better) shown first − shown second| over scored comparisons; null when the "
        "metric reads one order."
    )
    flipped_share: float | None = Field(
        description="Share of scored comparisons whose preferred output changed with the order shown (the judge "
        "followed position, not content); null when the metric reads one order."
    )
    system_field: str | None = Field(description="The field naming each output's system; null: no system ranking.")
    systems: list[SystemRank] = Field(description="Systems, best first, with group-bootstrap intervals.")


def summarise_ranks(
    records: Sequence[RankRecord],
    comparisons: Sequence[ResultRecord],
    *,
    metric: str,
    budget: int,
    system: str | None,
    level: float,
    seed: int,
) -> RankSummary:
    """The summary of a ranking run from its output records and its comparisons' records."""
    scored = [r for r in records if r.score is not None]
    both = [
        r.detail
        for r in comparisons
        if isinstance(r.detail, PairwiseDetail) and r.detail.disagreement is not None and r.score is not None
    ]
    gaps = [d.disagreement for d in both if d.disagreement is not None]
    systems: list[SystemRank] = []
    if system is not None and scored:
        named = [r for r in scored if r.extra.get(system) is not None]
        fit = system_ranking(
            np.array([r.group for r in named]),
            np.array([str(r.extra[system]) for r in named]),
            np.array([r.score for r in named], dtype=float),
            level=level,
            seed=seed,
        )
        for k in np.argsort(fit.rank, kind="stable"):
            systems.append(
                SystemRank(
                    system=fit.systems[k],
                    mean_score=float(fit.score[k]),
                    ci_low=finite(fit.score_low[k]),
                    ci_high=finite(fit.score_high[k]),
                    rank=int(fit.rank[k]),
                    rank_low=int(fit.rank_low[k]),
                    rank_high=int(fit.rank_high[k]),
                    outputs=int(fit.outputs[k]),
                )
            )
    return RankSummary(
        metric=metric,
        groups=len({r.group for r in records}),
        outputs=len(records),
        scored=len(scored),
        unscored_reasons=dict(Counter(r.unscored_reason or "" for r in records if r.score is None).most_common()),
        budget=budget,
        comparisons=len(comparisons),
        comparisons_unscored=sum(r.score is None for r in comparisons),
        comparisons_per_output=2 * len(comparisons) / len(records) if records else None,
        mean_disagreement=float(np.mean(gaps)) if gaps else None,
        flipped_share=float(np.mean([bool(d.flipped) for d in both])) if both else None,
        system_field=system,
        systems=systems,
    )
