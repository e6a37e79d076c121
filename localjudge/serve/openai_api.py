"""OpenAI-compatible `/v1/completions` and `/v1/chat/completions`, for the clients people already run.

Greedy decoding only (temperature 0 or absent, one choice, no streaming); `max_tokens` 0 included;
`echo`; log-probabilities and `top_logprobs` read from the full softmax (`readout`); prompts as
text or token ids (what lm-eval-harness's `local-completions` sends). The extension field
`localjudge` ({"low": 1, "high": 5} or {"labels": [...]}, optional "min_valid_mass") adds to each
choice the exact distribution over that scale at the end of the prompt: the `/v1/score` reading.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from fastapi import APIRouter
from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse

from localjudge.errors import LocalJudgeError
from localjudge.serve.http import RequestError, run
from localjudge.serve.operations import Generate
from localjudge.serve.readout import Position, Readout, read_tokens
from localjudge.serve.shapes import ChatMessage, ScaleSpec, Strict, render_chat, score_reading
from localjudge.serve.state import Served

MAX_TOP = 20


class Sampling(Strict):
    """The decoding fields both endpoints take; only greedy decoding is served."""

    model: str | None = Field(default=None, description="The served judge's name (GET /v1/models), or absent.")
    max_tokens: int | None = Field(default=None, ge=0, description="Tokens to generate at most; 0: none.")
    temperature: float | None = Field(default=None, description="0 or absent: decoding is greedy.")
    top_p: float | None = Field(default=None, description="1 or absent.")
    n: int = Field(default=1, description="1: greedy decoding has one answer.")
    stream: bool = Field(default=False, description="False: answers come whole.")
    stop: str | list[str] | None = Field(default=None, description="Text is cut before the first of these.")
    seed: int | None = Field(default=None, description="Accepted; greedy decoding needs none.")
    user: str | None = Field(default=None, description="Accepted and ignored.")
    presence_penalty: float | None = Field(default=None, description="0 or absent.")
    frequency_penalty: float | None = Field(default=None, description="0 or absent.")
    localjudge: ScaleSpec | None = Field(
        default=None, description="Extension: the exact distribution over this scale at the end of the prompt."
    )

    def check_greedy(self) -> None:
        refused = {
            "temperature": self.temperature not in (None, 0),
            "top_p": self.top_p not in (None, 1),
            "n": self.n != 1,
            "stream": self.stream,
            "presence_penalty": self.presence_penalty not in (None, 0),
            "frequency_penalty": self.frequency_penalty not in (None, 0),
        }
        for name, bad in refused.items():
            if bad:
                raise RequestError(
                    422,
                    f"{name}: this server decodes greedily, one whole answer per prompt; "
                    "leave it out (or send temperature 0, top_p 1, n 1, stream false, penalties 0)",
                    param=name,
                )

    @property
    def stops(self) -> list[str]:
        return [self.stop] if isinstance(self.stop, str) else list(self.stop or [])


class CompletionRequest(Sampling):
    prompt: str | list[str] | list[int] | list[list[int]] = Field(description="Text(s) or token ids.")
    echo: bool = Field(default=False, description="Return the prompt (and its log-probabilities) too.")
    logprobs: int | None = Field(default=None, ge=0, le=MAX_TOP, description="Alternatives listed per token.")


class ChatRequest(Sampling):
    messages: list[ChatMessage] = Field(min_length=1, description="The conversation.")
    max_completion_tokens: int | None = Field(default=None, ge=0, description="The newer name of max_tokens.")
    logprobs: bool = Field(default=False, description="Return the generated tokens' log-probabilities.")
    top_logprobs: int | None = Field(default=None, ge=0, le=MAX_TOP, description="Alternatives listed per token.")
    response_format: dict[str, Any] | None = Field(default=None, description='{"type": "text"} or absent.')


def openai_routes(served: Served) -> APIRouter:
    """`/v1/completions` and `/v1/chat/completions` over one loaded judge."""
    router = APIRouter()
    judge, opts = served.judge, served.options

    def limit(max_tokens: int | None, default: int) -> int:
        wanted = default if max_tokens is None else max_tokens
        if wanted > opts.max_tokens:
            raise RequestError(422, f"max_tokens: {wanted} is over this server's limit of {opts.max_tokens}")
        return wanted

    async def choice(
        request: Request,
        body: Sampling,
        ids: list[int] | None,
        text: str | None,
        max_tokens: int,
        top: int | None,
        echo: bool,
    ) -> tuple[Readout | None, str]:
        """The readout (with log-probabilities) or, without them, the generated text."""
        if top is None and (text is not None or max_tokens == 0):
            if max_tokens == 0:
                return None, ""
            out = (await run(served.worker, Generate(max_tokens), [text], request))[0]
            return None, _cut(out, body.stops)
        assert ids is not None
        readout = await read_tokens(
            served, request, ids, max_tokens=max_tokens, top=top or 0, echo=echo and top is not None, stop=body.stops
        )
        return readout, _cut(served.spell([p.token for p in readout.generated]), body.stops)

    async def scale_reading(request: Request, spec: ScaleSpec | None, text: str | None) -> dict[str, Any] | None:
        if spec is None:
            return None
        if text is None:
            raise RequestError(422, "localjudge: a scale is read at the end of a text prompt, not of token ids")
        op = spec.operation("localjudge")
        dist = (await run(served.worker, op, [text], request))[0]
        return score_reading(text, dist, op.min_valid_mass)

    @router.post("/v1/completions")
    async def completions(request: Request) -> JSONResponse:
        body = await served.read(request, CompletionRequest)
        served.check_model(body.model)
        body.check_greedy()
        max_tokens = limit(body.max_tokens, 16)
        prompts = _prompts(body.prompt)
        if len(prompts) > opts.max_items:
            raise RequestError(413, f"prompt: {len(prompts)} prompts; this server takes at most {opts.max_items}")
        encoded = [_encode(served, prompt, f"prompt.{index}") for index, prompt in enumerate(prompts)]

        async def one(index: int, prompt: str | list[int], ids: list[int]) -> tuple[dict[str, Any], int]:
            text = prompt if isinstance(prompt, str) else None
            readout, out = await choice(request, body, ids, text, max_tokens, body.logprobs, body.echo)
            shown = (text if text is not None else served.spell(ids)) + out if body.echo else out
            entry: dict[str, Any] = {"index": index, "text": shown, "logprobs": None}
            if readout is not None and body.logprobs is not None:
                entry["logprobs"] = _completion_logprobs(served, readout.prompt + readout.generated)
            entry["finish_reason"] = _finish(served, readout, out, max_tokens)
            reading = await scale_reading(request, body.localjudge, text)
            if reading is not None:
                entry["localjudge"] = reading
            return entry, _count(served, readout, out)

        # every prompt's jobs queue at once, so the worker gathers them into the same engine calls
        done = await asyncio.gather(*(one(k, p, ids) for k, (p, ids) in enumerate(zip(prompts, encoded))))
        choices = [entry for entry, _ in done]
        used, made = sum(len(ids) for ids in encoded), sum(n for _, n in done)
        return JSONResponse(_envelope("text_completion", "cmpl", judge.info.name, choices, used, made))

    @router.post("/v1/chat/completions")
    async def chat(request: Request) -> JSONResponse:
        body = await served.read(request, ChatRequest)
        served.check_model(body.model)
        body.check_greedy()
        if body.response_format not in (None, {"type": "text"}):
            raise RequestError(422, 'response_format: only {"type": "text"}: the judge writes plain text')
        if body.max_tokens is not None and body.max_completion_tokens is not None:
            raise RequestError(422, "give max_tokens or max_completion_tokens, not both")
        max_tokens = limit(body.max_completion_tokens if body.max_tokens is None else body.max_tokens, opts.max_tokens)
        text = render_chat(judge, body.messages)
        ids = judge.backend.encode(text)
        top = (body.top_logprobs or 0) if body.logprobs else None
        readout, out = await choice(request, body, ids, text, max_tokens, top, False)
        entry: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": out}, "logprobs": None}
        if readout is not None:
            entry["logprobs"] = {"content": [_chat_token(served, p) for p in readout.generated]}
        entry["finish_reason"] = _finish(served, readout, out, max_tokens)
        reading = await scale_reading(request, body.localjudge, text)
        if reading is not None:
            entry["localjudge"] = reading
        made = _count(served, readout, out)
        return JSONResponse(_envelope("chat.completion", "chatcmpl", judge.info.name, [entry], len(ids), made))

    return router


def _prompts(prompt: str | list[str] | list[int] | list[list[int]]) -> list[str | list[int]]:
    """One entry per choice: a text, or a prompt's token ids."""
    if isinstance(prompt, str):
        return [prompt]
    if not prompt:
        raise RequestError(422, "prompt: give a prompt (text or token ids)", param="prompt")
    if all(isinstance(p, int) for p in prompt):
        return [list(prompt)]  # type: ignore[arg-type]
    return list(prompt)  # type: ignore[arg-type]


def _encode(served: Served, prompt: str | list[int], where: str) -> list[int]:
    if isinstance(prompt, str):
        ids = served.judge.backend.encode(prompt)
    else:
        served.spell(prompt)  # every id within the vocabulary
        ids = list(prompt)
    if not ids:
        raise RequestError(422, f"{where}: the prompt is empty; give it at least one token", param=where)
    return ids


def _cut(text: str, stops: list[str]) -> str:
    cuts = [text.index(s) for s in stops if s and s in text]
    return text[: min(cuts)] if cuts else text


def _count(served: Served, readout: Readout | None, text: str) -> int:
    if readout is not None:
        return len(readout.generated)
    try:
        return len(served.judge.backend.encode_continuation(text))
    except LocalJudgeError:  # a text no tokenisation spells apart: count it in context
        return served.judge.count_tokens(text)


def _finish(served: Served, readout: Readout | None, text: str, max_tokens: int) -> str:
    if readout is not None:
        return readout.finish_reason
    return "length" if _count(served, None, text) >= max_tokens else "stop"


def _surface(served: Served, token: int) -> str:
    return served.surfaces[token] if token < len(served.surfaces) else ""


def _completion_logprobs(served: Served, positions: list[Position]) -> dict[str, Any]:
    """The legacy completions `logprobs` object: tokens, their log P, the top alternatives, text offsets."""
    tokens = [_surface(served, p.token) for p in positions]
    offsets, at = [], 0
    for t in tokens:
        offsets.append(at)
        at += len(t)
    top = [None if p.logprob is None else {_surface(served, t): lp for t, lp in p.top} for p in positions]
    return {
        "tokens": tokens,
        "token_logprobs": [p.logprob for p in positions],
        "top_logprobs": top,
        "text_offset": offsets,
    }


def _chat_token(served: Served, p: Position) -> dict[str, Any]:
    def one(token: int, logprob: float) -> dict[str, Any]:
        s = _surface(served, token)
        return {"token": s, "logprob": logprob, "bytes": list(s.encode("utf-8"))}

    assert p.logprob is not None
    return {**one(p.token, p.logprob), "top_logprobs": [one(t, lp) for t, lp in p.top]}


def _envelope(kind: str, prefix: str, model: str, choices: list, prompt_tokens: int, made: int) -> dict[str, Any]:
    return {
        "id": f"{prefix}-{uuid.uuid4().hex}",
        "object": kind,
        "created": int(time.time()),
        "model": model,
        "choices": choices,
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": made, "total_tokens": prompt_tokens + made},
    }
