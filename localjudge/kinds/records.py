"""Result records: one JSON line per (case, metric), carrying everything needed to reproduce it.

The schema of results files. Every kind fills the common fields; the kinds that read more than a
score keep it in a detail field of their own (`pairwise`, `likelihood`, `hybrid`, `entailment`,
`verdict`, `pair`), null for the others.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer


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


class TokenSpan(BaseModel):
    """A token, word or sentence of the scored text, and its value."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(description="The text it spells (as the judge's tokens spell it).")
    value: float = Field(
        description="Its log-probability (a word: summed over its tokens; a sentence: the mean per token), or "
        "its PMI with the source under a PMI metric."
    )
    start: int = Field(description="Index of its first token in the target.")
    tokens: int = Field(description="Number of tokens.")
    word: str = Field(description="The word it lies in (a token's word, so a changed digit shows its number).")


class TokenReading(BaseModel):
    """What a token-level aggregation read, and the claims that drove the score down."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    values: Literal["logprob", "pmi"] = Field(description="Per-token log-probabilities, or per-token PMI.")
    aggregation: str = Field(description="The metric's aggregation.")
    unit: str = Field(description="token or word.")
    focus: str = Field(description="all, or salient (words with a digit or a capital past a sentence's start).")
    units: int = Field(description="Units aggregated (sentences for sentence_min).")
    worst: list[TokenSpan] = Field(description="The lowest units, lowest first (at most 3): the suspect claims.")
    worst_sentence: TokenSpan | None = Field(description="The sentence with the lowest mean token value.")


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
    aggregation: Literal["mean", "sum", "min", "quantile", "count_below", "sentence_min"] = Field(
        description="What raw_score aggregates: per-token mean or sum, or a token-level reading (see `tokens`)."
    )
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
    tokens: TokenReading | None = Field(
        default=None, description="Token-level aggregations only: what was read and the lowest units."
    )

    @model_serializer(mode="wrap")
    def _omit_tokens(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # records of mean/sum metrics stay byte for byte as they were before token-level readings
        out = handler(self)
        if out.get("tokens", 0) is None:
            del out["tokens"]
        return out


class SentenceSupport(BaseModel):
    """One yes/no question of an entailment metric and its answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(description="What was asked about: the whole target, or one of its sentences.")
    p_yes: float | None = Field(description="P(yes) over the two answers; null when none had any probability.")
    valid_mass: float = Field(description="Probability the judge put on the two answers before normalising.")


class EntailmentDetail(BaseModel):
    """Every question an entailment metric asked of one case (kept when the case is unscored)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    unit: Literal["response", "sentence"] = Field(description="Asked about the whole target, or per sentence.")
    sentences: list[SentenceSupport] = Field(
        description="The questions, in the target's order; the score is the lowest P(yes)."
    )


OPTIONAL_DETAILS = ("entailment", "verdict", "pair")
"""Record fields of newer metric kinds, left out when null: other kinds' records keep their bytes."""


class ResultRecord(BaseModel):
    """The judgment of one case by one metric."""

    model_config = ConfigDict(extra="forbid")

    case_id: str = Field(description="Id of the test case.")
    metric: str = Field(description="Metric name.")
    kind: str = Field(description="Metric kind (a name of the `localjudge.kinds` registry; checked on reading a file).")
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
    entailment: EntailmentDetail | None = Field(
        default=None, description="Entailment: each question asked and P(yes); absent for other kinds."
    )
    verdict: dict[str, float] | None = Field(
        default=None, description="Verdict: each component's score that went in; absent for other kinds."
    )
    pair: dict[str, float] | None = Field(
        default=None, description="Pairwise likelihood: each output's reading; absent for other kinds."
    )
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

    @model_serializer(mode="wrap")
    def _omit_newer(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = handler(self)
        for key in OPTIONAL_DETAILS:
            if out.get(key, 0) is None:
                del out[key]
        return out


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
