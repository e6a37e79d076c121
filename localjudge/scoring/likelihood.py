"""Continuation log-likelihoods: the prompt/continuation boundary and what is read from the tokens.

The boundary rule, the same for every judge:
- spaces and tabs that end the prompt move to the start of the continuation ("Summary: " + "x"
  is scored as "Summary:" + " x"), because word-piece tokenizers attach a space to the word after
  it; newlines stay with the prompt;
- the prompt is tokenised as `tokenizer(prompt)` (with the model's own special tokens, e.g. BOS),
  exactly as for scoring;
- the continuation is tokenised on its own, without special tokens, so that it gets the same
  tokens whatever prompt precedes it: the two terms of a PMI contrast are then sums over the very
  same tokens. A tokenizer that adds a space in front of text on its own (SentencePiece's dummy
  prefix) is undone (`HFBackend.encode_continuation`), so the tokens spell the continuation.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field


def split_boundary(prompt: str, continuation: str) -> tuple[str, str]:
    """(prompt, continuation) with the prompt's trailing spaces and tabs moved to the continuation.

    Examples:
        >>> split_boundary("Summary: ", "It rained.")
        ('Summary:', ' It rained.')
    """
    head = prompt.rstrip(" \t")
    return head, prompt[len(head) :] + continuation


class ContinuationLogprobs(BaseModel):
    """The log-probability the judge gives each token of a continuation after its prompt."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    token_ids: tuple[int, ...] = Field(description="Token ids of the continuation (boundary rule applied).")
    logprobs: tuple[float, ...] = Field(description="log P(token | prompt and the tokens before it), fp32 log-softmax.")

    @property
    def n_tokens(self) -> int:
        """Number of continuation tokens."""
        return len(self.token_ids)

    @property
    def sum(self) -> float:
        """Log-likelihood of the whole continuation (0 for an empty one)."""
        return math.fsum(self.logprobs)

    @property
    def mean(self) -> float:
        """Mean log-probability per token; NaN for an empty continuation."""
        return self.sum / self.n_tokens if self.n_tokens else math.nan

    @property
    def min(self) -> float:
        """Log-probability of the least likely token; NaN for an empty continuation."""
        return min(self.logprobs) if self.logprobs else math.nan
