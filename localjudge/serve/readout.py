"""Greedy decoding with log-probabilities read from the full softmax, for the OpenAI endpoints.

Each step is one `TokenReadings` job: the prompt's ids (and the tokens generated so far) followed by
one placeholder token, whose position's reading is the distribution after the text, so its top
token is the greedy next token and its log P the one reported. The first step also reads every
prompt token when the client asks for the prompt's log-probabilities back (`echo`), in the same
engine call. Steps are jobs like any other, so concurrent requests' steps share engine calls.

Without log-probabilities the endpoints use `Judge.generate` (the engine's cached decoding) instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from starlette.requests import Request

from localjudge.serve.http import run
from localjudge.serve.operations import TokenReadings
from localjudge.serve.state import Served

_PLACEHOLDER = 0
"""Any valid id: only the distribution at its position is read, never its own probability."""


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


def _positions(tokens: list[int], rows: np.ndarray, top: int) -> list[Position]:
    """Positions from a (n, 1 + 2 * top) reading (`Backend.token_logprobs` with `top`)."""
    out = []
    for token, row in zip(tokens, rows):
        pairs = [(int(row[1 + top + k]), float(row[1 + k])) for k in range(top)]
        out.append(Position(token, float(row[0]), [(t, lp) for t, lp in pairs if t >= 0 and lp > -np.inf]))
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
    op = TokenReadings(read)
    eos = served.judge.backend.eos_ids()
    prompt: list[Position] = []
    if echo:
        prompt.append(Position(ids[0], None))
        if max_tokens == 0 and len(ids) > 1:
            rows = (await run(served.worker, op, [(ids[:1], ids[1:])], request))[0]
            prompt += _trim(_positions(ids[1:], rows, read), top)
    generated: list[Position] = []
    text = ""
    for step in range(max_tokens):
        if step == 0 and echo and len(ids) > 1:  # the prompt's readings and the first step in one call
            rows = (await run(served.worker, op, [(ids[:1], ids[1:] + [_PLACEHOLDER])], request))[0]
            prompt += _trim(_positions(ids[1:], rows[:-1], read), top)
            last = rows[-1]
        else:
            context = ids + [p.token for p in generated]
            last = (await run(served.worker, op, [(context, [_PLACEHOLDER])], request))[0][-1]
        options = _positions([_PLACEHOLDER], last[None, :], read)[0].top
        token, logprob = options[0]
        if token in eos:
            return Readout(prompt, generated, "stop")
        generated.append(Position(token, logprob, options[:top]))
        text += served.surfaces[token] if token < len(served.surfaces) else ""
        if any(s in text for s in stop):
            return Readout(prompt, generated, "stop")
    return Readout(prompt, generated, "length")


def _trim(positions: list[Position], top: int) -> list[Position]:
    for p in positions:
        p.top = p.top[:top]
    return positions
