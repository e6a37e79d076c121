"""Result records: one JSON line per (case, metric), carrying everything needed to reproduce it.

The schema of results files. Every kind fills the common fields; a kind that reads more than a
score keeps it in the record's one `detail` slot, a pydantic model the kind declares
(`MetricKind.detail`), written under the kind's key (`MetricKind.detail_key`: `pairwise`,
`likelihood`, `hybrid`, `entailment`, `verdict`, `pair`, or a new kind's name; registering a kind records
that layout in `DETAIL_LAYOUTS`). The detail models of the built-in kinds are defined here, with
the record.

Files keep the layout they had before kinds owned their detail: the keys `pairwise`,
`likelihood` and `hybrid` are in every record (null unless the record's kind is theirs), other
kinds' keys only in their own records; reading maps the kind's key back into `detail`.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)


class PairwiseDetail(BaseModel):
    """How a pairwise judgment came about, order by order (also kept when the case is unscored)."""

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


class SentenceValue(BaseModel):
    """One sentence of the target read alone after the prompt, and its value."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(description="The sentence.")
    value: float | None = Field(
        description="Its mean (or summed) token log-probability, less the same without the source under PMI; "
        "null when not finite."
    )
    tokens: int = Field(description="Number of its tokens.")


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
    sentences: list[SentenceValue] | None = Field(
        default=None,
        description="Metrics with `sentences` only: each sentence read alone, in order (given_source then covers "
        "their tokens together).",
    )

    @model_serializer(mode="wrap")
    def _omit_tokens(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # records of mean/sum metrics stay byte for byte as they were before token-level and sentence readings
        out = handler(self)
        for key in ("tokens", "sentences"):
            if out.get(key, 0) is None:
                del out[key]
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


class ComponentScores(RootModel[dict[str, float]]):
    """Hybrid, verdict, pairwise likelihood: each component's (output's) score that went in, by name."""

    model_config = ConfigDict(frozen=True)


class DetailLayout(NamedTuple):
    """Where a kind's records keep their detail in a results file, and the model that reads it."""

    key: str
    model: type[BaseModel]


DETAIL_LAYOUTS: dict[str, DetailLayout] = {}
"""Kind name -> its records' detail layout; filled by `kinds.registry.register_kind`."""

WRITTEN_IN_EVERY_RECORD = ("pairwise", "likelihood", "hybrid")
"""Detail keys every record carries (null unless the record's kind is theirs), as records had them
before kinds owned their detail; other kinds' keys appear only in their own records."""


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
    detail: SerializeAsAny[BaseModel] | None = Field(
        default=None,
        description="What the kind read besides the score (its `MetricKind.detail` model), kept when unscored; "
        "written under the kind's key (`pairwise`, `likelihood`, `hybrid`, `entailment`, `verdict`, `pair`).",
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

    @model_validator(mode="before")
    @classmethod
    def _detail_from_kind_key(cls, data: Any) -> Any:
        # a record read from a file: its kind's key holds the detail, the other kinds' keys are null
        if not isinstance(data, dict):
            return data
        layout = DETAIL_LAYOUTS.get(data.get("kind", ""))
        own = layout.key if layout is not None else None
        keys = {*WRITTEN_IN_EVERY_RECORD, *(d.key for d in DETAIL_LAYOUTS.values())}
        found = {k: data[k] for k in keys if k in data}
        detail = data.get("detail")
        if not found and not isinstance(detail, dict):
            return data
        data = {k: v for k, v in data.items() if k not in found}
        if own is not None and found.get(own) is not None:
            detail = found.pop(own)
        stray = sorted(k for k, v in found.items() if v is not None)
        if stray:
            raise ValueError(f"{', '.join(stray)}: not the detail of a {data.get('kind')} record")
        if isinstance(detail, dict | list) and layout is not None:
            detail = layout.model.model_validate(detail)
        if detail is not None:
            data["detail"] = detail
        return data

    @model_serializer(mode="wrap")
    def _detail_under_kind_key(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        layout = DETAIL_LAYOUTS.get(self.kind)
        key = layout.key if layout is not None else None
        out: dict[str, Any] = {}
        for name, value in handler(self).items():
            if name != "detail":
                out[name] = value
                continue
            for always in WRITTEN_IN_EVERY_RECORD:
                out[always] = value if always == key else None
            if key is not None and key not in WRITTEN_IN_EVERY_RECORD and value is not None:
                out[key] = value
        return out
