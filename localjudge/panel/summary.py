"""A panel's summary per metric: the pooled scores, each member's weight and agreement, and disagreement.

Members disagree on a case when their scores (on 0–1; a comparison's P(output 1 better)) span
more than `SPREAD`. The summary counts those cases and says so when they are frequent
(`DISAGREEING_SHARE` of the scored cases or more), and names a member whose scores barely follow
the rest of the panel (leave-one-out r below `LOW_AGREEMENT`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from localjudge.panel.records import Method, PanelRecord
from localjudge.panel.weights import Weights
from localjudge.stats.numbers import finite

SPREAD = 0.3
"""Member scores spanning more than this share of the 0–1 scale on a case: the members disagree on it."""
DISAGREEING_SHARE = 0.25
"""Share of scored cases beyond `SPREAD` from which the summary says the panel disagrees."""
LOW_AGREEMENT = 0.2
"""Leave-one-out correlation below which the summary says a member does not follow the panel."""


class MemberSummary(BaseModel):
    """One member of the panel over a metric's cases."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    judge: str = Field(description="The member's judge name.")
    weight: float = Field(description="Its weight in the pooled scores.")
    agreement: float | None = Field(
        description="Pearson r of its scores with the mean of the other members (cases all scored); null when "
        "undefined."
    )
    mean_score: float | None = Field(description="Its mean score over the cases it scored.")
    scored: int = Field(description="Cases it scored.")


class PanelSummary(BaseModel):
    """Aggregate of one metric judged by a panel."""

    model_config = ConfigDict(extra="forbid")

    metric: str = Field(description="Metric name.")
    kind: str = Field(description="Metric kind.")
    method: Method = Field(description="How the members were weighed.")
    n: int = Field(description="Cases judged.")
    scored: int = Field(description="Cases with a pooled score (as many members as the quorum scored them).")
    partial: int = Field(description="Scored cases pooled from fewer than all members (a quorum below all).")
    unscored_reasons: dict[str, int] = Field(description="Why cases have no pooled score: reason -> count.")
    mean_score: float | None = Field(description="Mean pooled score.")
    members: list[MemberSummary] = Field(description="Every member, in the panel's order.")
    spread: float = Field(description="The member spread beyond which a case counts as disagreed on.")
    mean_spread: float | None = Field(description="Mean highest-minus-lowest member score over scored cases.")
    disagreed: int = Field(description="Scored cases whose member scores span more than `spread`.")
    notes: list[str] = Field(default_factory=list, description="What to know before trusting the pooled scores.")


def summarise_panel(records: Sequence[PanelRecord], chosen: Weights, method: Method) -> PanelSummary:
    """The summary of one metric's panel records, with the weights they were pooled with."""
    scored = [r for r in records if r.score is not None]
    spreads = [r.spread for r in scored if r.spread is not None]
    disagreed = sum(s > SPREAD for s in spreads)
    names = [m.judge for m in records[0].members] if records else []
    members = []
    for j, name in enumerate(names):
        own = [s for r in records if (s := r.members[j].score) is not None]
        r_j = chosen.agreement[j]
        members.append(
            MemberSummary(
                judge=name,
                weight=float(chosen.weights[j]),
                agreement=finite(r_j),
                mean_score=float(np.mean(own)) if own else None,
                scored=len(own),
            )
        )
    notes = []
    if scored and disagreed >= DISAGREEING_SHARE * len(scored):
        notes.append(
            f"the members disagree: their scores span more than {SPREAD:g} on {disagreed} of {len(scored)} cases; "
            "read the members' scores before the pooled one"
        )
    for m in members:
        if m.agreement is not None and m.agreement < LOW_AGREEMENT:
            notes.append(f"{m.judge} does not follow the panel (r {m.agreement:.2f} with the other members' mean)")
    partial = sum(r.pooled < len(r.members) for r in scored)
    if partial:
        notes.append(
            f"{partial} of {len(scored)} scored cases were pooled from fewer than all {len(names)} members (the "
            "quorum let the others be missing): those pooled scores come from a smaller panel"
        )
    if chosen.equal_because:
        notes.append(f"{method} weights could not be learned ({chosen.equal_because}); the members count equally")
    return PanelSummary(
        metric=records[0].metric if records else "",
        kind=records[0].kind if records else "",
        method=method,
        n=len(records),
        scored=len(scored),
        partial=partial,
        unscored_reasons=dict(Counter(r.unscored_reason or "" for r in records if r.score is None).most_common()),
        mean_score=float(np.mean([r.score for r in scored if r.score is not None])) if scored else None,
        members=members,
        spread=SPREAD,
        mean_spread=float(np.mean(spreads)) if spreads else None,
        disagreed=disagreed,
        notes=notes,
    )
