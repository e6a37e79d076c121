"""Result records: one JSON line per (case, metric), carrying everything needed to reproduce it."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class PairwiseDetail(BaseModel):
    """How a pairwise verdict came about, order by order (also kept when the case is unscored)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    p_first_better_shown_first: float | None = Field(
        description="P(output 1 better) with output 1 shown as A; null when that order put no mass on the labels."
    )
    p_first_better_shown_second: float | None = Field(
        description="P(output 1 better) with output 1 shown as B; null when that order put no mass on the labels."
    )
    p_tie: float | None = Field(default=None, description="Mean probability of a tie over both orders.")
    disagreement: float | None = Field(
        description="|difference| between the two orders' P(output 1 better); null when an order has no reading."
    )
    flipped: bool | None = Field(
        description="Whether the preferred output changes with the order shown; null when an order has no reading."
    )
    valid_mass_shown_first: float | None = Field(
        default=None, description="Probability on the labels with output 1 shown as A (null in older records)."
    )
    valid_mass_shown_second: float | None = Field(
        default=None, description="Probability on the labels with output 1 shown as B (null in older records)."
    )


class TokenStats(BaseModel):
    """Log-probabilities of the target's tokens under one condition."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sum: float | None = Field(description="Log-likelihood of the whole target; null when not finite.")
    mean: float | None = Field(description="Mean log-probability per token; null when not finite.")
    min: float | None = Field(description="Log-probability of the least likely token; null when not finite.")


class LikelihoodDetail(BaseModel):
    """How a likelihood score came about; the token counts say what the judge read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_tokens: int = Field(
        description="Target tokens: the scored text alone (the `target` field after the boundary rule), the very "
        "same tokens under both conditions."
    )
    condition_tokens: int | None = Field(
        default=None,
        description="Tokens of the prompt the target follows (condition fields, instruction, target heading, chat "
        "template), the target excluded; null in records written before it was recorded.",
    )
    contrast_tokens: int | None = Field(
        default=None,
        description="Tokens of the PMI contrast prompt (the same prompt without the source fields), the target "
        "excluded; null without PMI and in records written before it was recorded.",
    )
    aggregation: Literal["mean", "sum"] = Field(description="What raw_score aggregates: per-token mean or sum.")
    given_source: TokenStats | None = Field(
        description="Under the metric's prompt, with every condition field; null when the target was not read "
        "(it is blank)."
    )
    without_source: TokenStats | None = Field(
        default=None, description="Under the PMI contrast prompt; null without PMI."
    )
    pmi_min: float | None = Field(
        default=None, description="Smallest per-token PMI (the token the source helps least); null without PMI."
    )


class ResultRecord(BaseModel):
    """The judgment of one case by one metric."""

    model_config = ConfigDict(extra="forbid")

    case_id: str = Field(description="Id of the test case.")
    metric: str = Field(description="Metric name.")
    kind: Literal["geval", "pairwise", "likelihood", "reference", "hybrid"] = Field(description="Metric kind.")
    score: float | None = Field(
        description="Score in [0, 1]: normalised expected score, P(output 1 better) for pairwise, "
        "exp(raw_score) for likelihood, sigmoid(raw_score) for PMI, ROUGE-L F1 for "
        "reference; null when unscored."
    )
    raw_score: float | None = Field(
        description="Expected score on the metric's scale; likelihood: mean (or summed) "
        "log-probability, PMI: its difference; reference: ROUGE-L F1; "
        "hybrid: the predicted human score; null when unscored or pairwise."
    )
    passed: bool | None = Field(description="score >= threshold; null when unscored or the metric has no threshold.")
    threshold: float | None = Field(description="Pass threshold on the score; null when the metric has none.")
    distribution: dict[str, float] | None = Field(description="Score (or label) -> probability, normalised.")
    valid_mass: float | None = Field(
        description="Probability on valid scores before normalising (pairwise: the lower of the two orders'); "
        "kept when unscored."
    )
    min_valid_mass: float | None = Field(
        default=None,
        description="Valid mass below which the case is unscored, as the run set it (G-Eval, pairwise); null for "
        "kinds that read no score distribution, and in records written before it was recorded (then 0.1).",
    )
    mode: str | None = Field(default=None, description="Most probable score or label.")
    std: float | None = Field(default=None, description="Standard deviation of the score distribution.")
    unscored_reason: str | None = Field(default=None, description="Why there is no score, or null.")
    reasoning: str | None = Field(default=None, description="The judge's analysis (before) or explanation (after).")
    pairwise: PairwiseDetail | None = Field(default=None, description="Order-by-order detail of a pairwise verdict.")
    likelihood: LikelihoodDetail | None = Field(
        default=None, description="Token log-probabilities of a likelihood metric."
    )
    hybrid: dict[str, float] | None = Field(default=None, description="Hybrid: each component's score that went in.")
    prompt_tokens: int | None = Field(
        default=None,
        description="Tokens of the prompt the judge read before the score (pairwise: the first order's); "
        "likelihood: the condition prompt, the scored text excluded (older records counted it in).",
    )
    truncated: str | None = Field(default=None, description="What --truncate cut, or null.")
    extra: dict[str, Any] = Field(default_factory=dict, description="Extra fields of the case (human scores...).")
    judge: dict[str, Any] = Field(description="Judge name, family, source, file hash or revision, dtype, device.")
    metric_spec: dict[str, Any] = Field(description="The full metric definition used, steps included.")
    steps_source: str | None = Field(default=None, description="pinned, cache or generated.")
    template_version: str = Field(description="Version of the prompt template.")
    localjudge_version: str = Field(description="Version of localjudge that produced the record.")


def unscored(base: dict[str, Any], reason: str, **detail: Any) -> ResultRecord:
    """A record with no score and the reason why (never 0, never a guess).

    Args:
        base: the record's identity and provenance fields (case, metric, judge, spec, versions).
        reason: why it could not be scored, in words a user can act on.
        **detail: every diagnostic that was computed and still holds (valid mass, distribution,
            prompt tokens, the pairwise orders, the likelihood's token counts).
    """
    return ResultRecord(
        **base,
        **{"distribution": None, "valid_mass": None, **detail},
        score=None,
        raw_score=None,
        passed=None,
        unscored_reason=reason,
    )


def clean_float(x: float | None) -> float | None:
    """NaN and None both become None, so JSON stays valid."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)
