"""Input records of the bias lab: one judge's judgment on one response (or one pair of responses).

The scoring pipeline writes these; the analysis modules only read them. An unscored judgment is
`None` and is skipped and counted by every analysis, never treated as 0. `LogpplRecord` and
`RecognitionRecord` are the judging step's own files in a records folder, kept so a run resumes.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from localjudge.io.jsonl import RecordFile


class PointwiseRecord(BaseModel):
    """The score one judge gave one generator's response to one item."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    item_id: str
    """Identifier of the item (prompt); the bootstrap resamples items."""
    judge: str
    """Name of the judge model that scored the response."""
    judge_family: str
    """Model family of the judge, e.g. "smollm"; compared with `generator_family`."""
    generator: str
    """Name of the model that wrote the response; one response per (item, generator)."""
    generator_family: str
    """Model family of the generator."""
    score: float | None
    """Score on the metric's scale; None when the judge's score could not be read (unscored)."""
    response_length: int = Field(ge=0)
    """Length of the response, in characters or in the judge's tokens (one unit per run)."""
    judge_logppl: float | None = None
    """The judge's mean negative log-likelihood per token of the response (log perplexity)."""
    human_score: float | None = None
    """A human's score of the response, on any scale; the same for every judge of the response."""


class PairwiseRecord(BaseModel):
    """One judge's preference between two responses to one item, asked in both orders."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    item_id: str
    """Identifier of the item (prompt); the bootstrap resamples items."""
    judge: str
    """Name of the judge model."""
    judge_family: str
    """Model family of the judge."""
    generator_a: str
    """Name of the model that wrote response A."""
    family_a: str
    """Model family of response A's generator."""
    generator_b: str
    """Name of the model that wrote response B."""
    family_b: str
    """Model family of response B's generator."""
    p_a_first: float | None = Field(ge=0.0, le=1.0)
    """P(judge prefers A) with A shown first; None when unscored."""
    p_a_second: float | None = Field(ge=0.0, le=1.0)
    """P(judge prefers A) with A shown second (order swapped); None when unscored."""
    human_preferred: Literal["a", "b"] | None = None
    """The response a human preferred, if labelled."""
    length_a: int | None = Field(default=None, ge=0)
    """Length of response A (characters or tokens), if known."""
    length_b: int | None = Field(default=None, ge=0)
    """Length of response B, in the same unit as `length_a`."""


class LogpplRecord(BaseModel):
    """A judge's mean NLL per token of one response, given the prompt it would itself answer (kept to resume)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    item_id: str
    generator: str
    logppl: float | None
    """None when not finite (an empty response)."""
    judge: dict[str, Any]


class RecognitionRecord(BaseModel):
    """One judge's answer to "which one did you write?" on one pair, both orders (`bias.recognition`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    item_id: str
    generator_a: str
    generator_b: str
    p_a_first: float | None
    """P(the judge says it wrote A) with A shown first; None when unscored."""
    p_a_second: float | None
    """P(the judge says it wrote A) with A shown second."""
    valid_mass_first: float
    valid_mass_second: float
    unscored_reason: str | None
    min_valid_mass: float
    prompt_version: str
    judge: dict[str, Any]


LOGPPL = RecordFile(LogpplRecord, "log-perplexity record", "log-perplexity file")
RECOGNITION = RecordFile(RecognitionRecord, "recognition record", "recognition file")
