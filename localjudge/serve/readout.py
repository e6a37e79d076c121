"""The OpenAI endpoints' log-probabilities: a greedy continuation read by the engine, as positions.

A request with log-probabilities is one `GenerateLogprobs` job: the engine decodes the prompt
greedily and reads each step's top tokens from the full softmax (`Backend.generate_logprobs`),
and the prompt's own tokens too when the client asks for them back (`echo`). Jobs are gathered
like any other, so concurrent requests decode in the same engine calls. This module only turns
the readings into the positions the endpoints print.

Without log-probabilities the endpoints use `Judge.generate` (the engine's cached decoding) instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from starlette.requests import Request

from localjudge.engine.backend import GenerationRequest
from localjudge.serve.http import run
from localjudge.serve.operations import GenerateLogprobs
from localjudge.serve.state import Served


@dataclass
class Position:
    """One token and what the judge gave it there."""

    token: int
    logprob: float | None
    """log P(token | the text before it); None for a prompt's first token (nothing before it)."""
    top: list[tuple[int, float]] = field(default_factory=list)
    """The most likely tokens at that position, most likely first (the full softmax's top k)."""


@dataclass
class Readout:
    """What a completion returns: the echoed prompt's positions (if asked) and the generated ones."""

    prompt: list[Position]
    generated: list[Position]
    finish_reason: str


def _positions(tokens: list[int], rows: np.ndarray, read: int, top: int) -> list[Position]:
    """Positions from a (n, 1 + 2 * read) reading (`Backend.token_logprobs` with `top`), `top` alternatives kept."""
    out = []
    for token, row in zip(tokens, rows):
        pairs = [(int(row[1 + read + k]), float(row[1 + k])) for k in range(read)]
        kept = [(t, lp) for t, lp in pairs if t >= 0 and lp > -np.inf]
        out.append(Position(token, float(row[0]), kept[:top]))
    return out


async def read_tokens(
    served: Served,
    request: Request,
    ids: list[int],
    *,
    max_tokens: int,
    top: int,
    echo: bool,
    stop: list[str],
) -> Readout:
    """Greedy continuation of `ids` with log-probabilities (see the module docstring).

    `top` is how many alternatives each position lists (0: none); the greedy token needs one, so
    at least one is read. Generation ends at `max_tokens`, an end-of-sequence token (not
    returned) or a stop string (the text is cut before it by the caller).
    """
    read = max(top, 1)
    asked = GenerationRequest(ids, max_tokens, tuple(stop), echo)
    got = (await run(served.worker, GenerateLogprobs(read), [asked], request))[0]
    prompt = [Position(ids[0], None)] + _positions(ids[1:], got.prompt, read, top) if echo else []
    return Readout(prompt, _positions(got.tokens, got.readings, read, top), got.finish_reason)
