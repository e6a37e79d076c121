"""Result records: one JSON line per (case, metric), carrying everything needed to reproduce it."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class PairwiseDetail(BaseModel):
    """How a pairwise verdict came about, order by order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    p_first_better_shown_first: float = Field(description="P(output 1 better) with output 1 shown as A.")
    p_first_better_shown_second: float = Field(description="P(output 1 better) with output 1 shown as B.")
    p_tie: float | None = Field(default=None, description="Mean probability of a tie over both orders.")
    disagreement: float = Field(description="|difference| between the two orders' P(output 1 better).")
    flipped: bool = Field(description="Whether the preferred output changes with the presentation order.")


class TokenStats(BaseModel):
    """Log-probabilities of the target's tokens under one condition."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sum: float = Field(description="Log-likelihood of the whole target.")
    mean: float = Field(description="Mean log-probability per token.")
    min: float = Field(description="Log-probability of the least likely token.")


class LikelihoodDetail(BaseModel):
    """How a likelihood score came about."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_tokens: int = Field(description="Tokens of the target (the same tokens under both conditions).")
    aggregation: Literal["mean", "sum"] = Field(description="What raw_score aggregates: per-token mean or sum.")
    given_source: TokenStats = Field(description="Under the metric's prompt, with every condition field.")
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
    valid_mass: float | None = Field(description="Probability on valid scores before normalising.")
    mode: str | None = Field(default=None, description="Most probable score or label.")
    std: float | None = Field(default=None, description="Standard deviation of the score distribution.")
    unscored_reason: str | None = Field(default=None, description="Why there is no score, or null.")
    reasoning: str | None = Field(default=None, description="The judge's analysis (before) or explanation (after).")
    pairwise: PairwiseDetail | None = Field(default=None, description="Order-by-order detail of a pairwise verdict.")
    likelihood: LikelihoodDetail | None = Field(
        default=None, description="Token log-probabilities of a likelihood metric."
    )
    hybrid: dict[str, float] | None = Field(default=None, description="Hybrid: each component's score that went in.")
    prompt_tokens: int | None = Field(default=None, description="Tokens of the scoring prompt.")
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
        **detail: kind-specific fields that still hold (e.g. the likelihood's token counts).
    """
    return ResultRecord(
        **base,
        score=None,
        raw_score=None,
        passed=None,
        distribution=None,
        valid_mass=None,
        unscored_reason=reason,
        **detail,
    )


def clean_float(x: float | None) -> float | None:
    """NaN and None both become None, so JSON stays valid."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)
