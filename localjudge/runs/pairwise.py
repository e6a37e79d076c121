"""Scores one chunk of cases with a pairwise metric: both presentation orders, combined.

Each case is judged twice, output 1 shown as A and then as B; P(output 1 better) is the mean of
the two orders' readings, and how far they disagree is recorded. A case where an order puts too
little probability on the labels is unscored, and keeps every reading that was taken (each
order's valid mass and P(output 1 better), the prompt size), so the reason can be checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from localjudge.errors import ContextLengthError, clip
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.metrics import prompts as P
from localjudge.metrics.spec import PairwiseMetric
from localjudge.runs.records import PairwiseDetail, ResultRecord, clean_float, unscored
from localjudge.scoring.distribution import LabelDistribution

if TYPE_CHECKING:
    from localjudge.runs.chunk import MetricContext


class _Reading(NamedTuple):
    """Both orders of one case combined."""

    detail: PairwiseDetail
    distribution: dict[str, float] | None  # output field (or "tie") -> probability; None without both orders


def score_pairwise(
    judge: Judge, ctx: MetricContext, cases: Sequence[TestCase], base: Callable[[TestCase], dict]
) -> list[ResultRecord]:
    """Records of cases that have both outputs, in input order; `base(case)` gives provenance fields."""
    m = ctx.metric
    assert isinstance(m, PairwiseMetric)  # score_chunk's dispatch
    labels = ["A", "B", "Tie"] if m.allow_tie else ["A", "B"]
    f1, f2 = m.output_fields

    def prompt(case: TestCase, first: str, second: str) -> str:
        user = P.pairwise_message(m, case, str(case.get(first)), str(case.get(second)), ctx.hardened)
        return judge.render(P.SYSTEM, user, P.PAIRWISE_PREFILL)

    texts = [prompt(c, f1, f2) for c in cases] + [prompt(c, f2, f1) for c in cases]
    for c, t in zip(list(cases) * 2, texts):
        if judge.count_tokens(t) > judge.info.context_length:
            raise ContextLengthError(f"case {clip(c.id)}: the pairwise prompt is longer than the judge's context")
    dists = judge.score_labels(texts, labels, min_valid_mass=ctx.min_valid_mass)
    n = len(cases)
    out = []
    for i, case in enumerate(cases):
        d1, d2 = dists[i], dists[n + i]  # output 1 shown first, shown second
        reading = _combine(d1, d2, f1, f2, m.allow_tie)
        fields: dict[str, Any] = dict(
            valid_mass=min(d1.valid_mass, d2.valid_mass),
            distribution=reading.distribution,
            pairwise=reading.detail,
            prompt_tokens=judge.count_tokens(texts[i]),
        )
        if not (d1.scored and d2.scored):
            out.append(unscored(base(case), _reason(d1, d2), **fields))
            continue
        dist = reading.distribution
        assert dist is not None  # both orders scored, so both have probabilities
        win = dist[f1]
        out.append(
            ResultRecord(
                **base(case),
                score=win,
                raw_score=None,
                passed=None if m.threshold is None else win >= m.threshold,
                mode=max(dist, key=dist.__getitem__),
                **fields,
            )
        )
    return out


def _combine(d1: LabelDistribution, d2: LabelDistribution, f1: str, f2: str, allow_tie: bool) -> _Reading:
    """The two orders' readings; an order with no probability on the labels reads as null."""
    p1, p2 = clean_float(d1.probs["A"]), clean_float(d2.probs["B"])  # P(output 1 better) shown first / second
    q1, q2 = d1.probs["B"], d2.probs["A"]  # P(output 2 better), same orders
    tie = clean_float((d1.probs["Tie"] + d2.probs["Tie"]) / 2) if allow_tie else None
    orders = dict(
        p_first_better_shown_first=p1,
        p_first_better_shown_second=p2,
        p_tie=tie,
        valid_mass_shown_first=d1.valid_mass,
        valid_mass_shown_second=d2.valid_mass,
    )
    if p1 is None or p2 is None:
        return _Reading(PairwiseDetail(**orders, disagreement=None, flipped=None), None)
    detail = PairwiseDetail(**orders, disagreement=abs(p1 - p2), flipped=(p1 > q1) != (p2 > q2))
    dist = {f1: (p1 + p2) / 2, f2: (q1 + q2) / 2} | ({"tie": tie} if tie is not None else {})
    return _Reading(detail, dist)


def _reason(d1: LabelDistribution, d2: LabelDistribution) -> str:
    """Why a pair is unscored, naming the order(s) that failed, in the same words for every case."""
    if not (d1.scored or d2.scored):
        where = "both orders"
    else:
        where = "output 1 shown first" if not d1.scored else "output 1 shown second"
    return f"pairwise ({where}): {d1.unscored_reason or d2.unscored_reason}"
