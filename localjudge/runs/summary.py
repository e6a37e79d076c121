"""A run's summary per metric: scores, pass rate or (pairwise) win rate, and why cases went unscored.

Examples:
    >>> from localjudge.runs.summary import preference
    >>> preference({"output_1": 0.7, "output_2": 0.3}, ("output_1", "output_2"))
    1.0
    >>> preference({"output_1": 0.3, "output_2": 0.2, "tie": 0.5}, ("output_1", "output_2"))
    0.5
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from localjudge.runs.records import ResultRecord
from localjudge.scoring.distribution import DEFAULT_MIN_VALID_MASS

NARROW_SPREAD = 0.15
"""Scores of a bounded metric spanning less than this share of the 0-1 scale do not separate cases."""

LOW_VALID_MASS = 0.5
"""Below this mean valid mass the judge is mostly not answering with a score at all."""

READS_DISTRIBUTION = ("geval", "pairwise", "entailment")
"""Kinds whose score is read from a distribution, to which a valid-mass threshold applies."""

COMPARISONS = ("pairwise", "pairwise_likelihood")
"""Kinds that compare two outputs: summarised by output 1's win rate."""


class MetricSummary(BaseModel):
    """Aggregate of one metric over a run."""

    model_config = ConfigDict(extra="forbid")

    metric: str = Field(description="Metric name.")
    kind: str = Field(description="Metric kind: geval, pairwise, likelihood, reference or hybrid.")
    n: int = Field(description="Cases judged.")
    scored: int = Field(description="Cases with a score.")
    unscored: int = Field(description="Cases without a score (missing fields, too little valid mass).")
    unscored_reasons: dict[str, int] = Field(
        default_factory=dict, description="Why cases are unscored: reason -> number of cases, most frequent first."
    )
    mean_score: float | None = Field(
        description="Mean score over scored cases; pairwise: mean P(output 1 better), the preference for output 1."
    )
    pass_rate: float | None = Field(
        description="Share of scored cases that passed; null when the metric has no threshold."
    )
    win_rate: float | None = Field(
        default=None,
        description="Pairwise: share of scored cases where output 1 is the most probable verdict, ties (and "
        "exact draws) counting half; null for other kinds.",
    )
    mean_disagreement: float | None = Field(
        default=None,
        description="Pairwise: mean |P(output 1 better) shown first - shown second| over scored cases; null for "
        "other kinds.",
    )
    flipped: int | None = Field(
        default=None,
        description="Pairwise: scored cases whose preferred output changes with the presentation order.",
    )
    mean_valid_mass: float | None = Field(description="Mean probability on valid scores (unscored cases included).")
    min_valid_mass: float | None = Field(
        default=None, description="Valid mass below which a case was unscored (G-Eval, pairwise); null otherwise."
    )
    score_min: float | None = Field(default=None, description="Lowest score over scored cases.")
    score_max: float | None = Field(default=None, description="Highest score over scored cases.")
    notes: list[str] = Field(
        default_factory=list, description="Warnings on what the scores can tell (see `reading_notes`)."
    )
    expected_accuracy: float | None = Field(
        default=None,
        description="Verdict: its accuracy on held-back labelled cases when it was fitted; absent for other kinds.",
    )

    @model_serializer(mode="wrap")
    def _omit_expected(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = handler(self)
        if out.get("expected_accuracy", 0) is None:
            del out["expected_accuracy"]
        return out


def verdict_note(spec: dict) -> str:
    """What a verdict's pass/fail is worth, from the fit its metric file keeps."""
    held = spec.get("fit", {}).get("held_out", {})
    bal, ece = held.get("balanced_accuracy"), held.get("ece")
    extra = ", ".join(
        x
        for x in (
            f"balanced accuracy {bal:.2f}" if bal is not None else "",
            f"ECE {ece:.3f}" if ece is not None else "",
        )
        if x
    )
    return (
        f"pass means P(acceptable) >= {spec['threshold']:.3f} (acceptable: {spec['acceptable']} of "
        f"{spec['human_field']}); on {held.get('items', '?')} held-back labelled cases this verdict was right "
        f"{spec['expected_accuracy']:.0%} of the time ({extra}): expect that on cases like the ones it was fitted on, "
        "not on other kinds"
    )


def reading_notes(
    kind: str, scores: Sequence[float], mean_valid_mass: float | None, has_threshold: bool, flipped: int = 0
) -> list[str]:
    """What a reader must know before taking a metric's scores as verdicts, in plain words."""
    notes = []
    if kind in ("geval", "pairwise", "hybrid") and len(scores) >= 3:
        lo, hi = min(scores), max(scores)
        if hi - lo < NARROW_SPREAD:
            notes.append(
                f"scores span only {lo:.2f}-{hi:.2f} ({hi - lo:.0%} of the 0-1 scale) over {len(scores)} cases: "
                "the judge does not separate these cases, so do not read them as verdicts; check it on "
                "labelled cases with `localjudge calibrate`"
            )
    if kind == "geval" and mean_valid_mass is not None and mean_valid_mass < LOW_VALID_MASS:
        notes.append(
            f"only {mean_valid_mass:.0%} of the judge's probability went to valid scores on average: "
            "it is mostly not answering with a score"
        )
    if kind == "pairwise" and len(scores) >= 3 and 2 * flipped >= len(scores):
        notes.append(
            f"the preferred output changes with the presentation order in {flipped} of {len(scores)} cases: "
            "the judge follows position more than content there"
        )
    if kind == "likelihood" and not has_threshold:
        notes.append(
            "likelihood scores rank cases against each other (higher: likelier given the source); "
            "they are not verdicts and have no pass mark"
        )
    return notes


def preference(distribution: dict[str, float], outputs: Sequence[str]) -> float:
    """1 when output 1 is the most probable verdict, 0 when output 2 is, 0.5 for a tie or an exact draw."""
    first, second = distribution[outputs[0]], distribution[outputs[1]]
    tie = distribution.get("tie", 0.0)
    if first > max(second, tie):
        return 1.0
    if second > max(first, tie):
        return 0.0
    return 0.5


def summarize(records: Sequence[ResultRecord], metrics: Sequence[str]) -> list[MetricSummary]:
    """Per-metric means, pass (or win) rates, and unscored counts with their reasons."""
    out = []
    for name in metrics:
        rs = [r for r in records if r.metric == name]
        scored = [r for r in rs if r.score is not None]
        masses = [r.valid_mass for r in rs if r.valid_mass is not None]
        values = [r.score for r in rs if r.score is not None]  # the scores of `scored`
        judged = [r for r in scored if r.passed is not None]
        mass = sum(masses) / len(masses) if masses else None
        kind = rs[0].kind if rs else "geval"
        pairwise = _pairwise(scored) if kind in COMPARISONS else {}
        out.append(
            MetricSummary(
                metric=name,
                kind=kind,
                n=len(rs),
                scored=len(scored),
                unscored=len(rs) - len(scored),
                unscored_reasons=dict(Counter(r.unscored_reason or "" for r in rs if r.score is None).most_common()),
                mean_score=sum(values) / len(values) if values else None,
                pass_rate=sum(bool(r.passed) for r in judged) / len(judged) if judged else None,
                **pairwise,
                mean_valid_mass=mass,
                min_valid_mass=_threshold(rs) if kind in READS_DISTRIBUTION else None,
                score_min=min(values, default=None),
                score_max=max(values, default=None),
                notes=reading_notes(
                    kind, values, mass, any(r.threshold is not None for r in rs), pairwise.get("flipped") or 0
                )
                + ([verdict_note(rs[0].metric_spec)] if kind == "verdict" else []),
                expected_accuracy=rs[0].metric_spec.get("expected_accuracy") if kind == "verdict" else None,
            )
        )
    return out


def valid_mass_threshold(record: ResultRecord) -> float | None:
    """The valid-mass threshold a record was judged under (records from before it was recorded: the default)."""
    if record.kind not in READS_DISTRIBUTION:
        return None
    return DEFAULT_MIN_VALID_MASS if record.min_valid_mass is None else record.min_valid_mass


def _threshold(records: Sequence[ResultRecord]) -> float:
    # every record of a metric in one run shares it (a resume with another one is refused)
    return next((t for r in records if (t := valid_mass_threshold(r)) is not None), DEFAULT_MIN_VALID_MASS)


def _pairwise(scored: Sequence[ResultRecord]) -> dict:
    """Win rate of output 1, mean order disagreement and flips over scored pairwise records."""
    details = [r.pairwise for r in scored if r.pairwise is not None]
    gaps = [d.disagreement for d in details if d.disagreement is not None]
    wins = [preference(r.distribution, r.metric_spec["output_fields"]) for r in scored if r.distribution]
    return dict(
        win_rate=sum(wins) / len(wins) if wins else None,
        mean_disagreement=sum(gaps) / len(gaps) if gaps else None,
        flipped=sum(bool(d.flipped) for d in details),
    )
