"""The native API: the library's own objects over HTTP.

- `POST /v1/evaluate`: test cases and metrics (built-in names or inline definitions) in, the records
  `localjudge eval` writes out, each exactly the line it writes (as JSON lines with "stream": true);
- `POST /v1/score`: the `localjudge score` reading (exact distribution, valid mass, expected score)
  at the end of rendered prompts or of conversations in the judge's chat format;
- `POST /v1/likelihood`: `Judge.loglikelihood` of (prompt, continuation) pairs;
- `GET /v1/models`, `GET /health`; `/tokenize`, `/detokenize`, `/tokenizer_info` as vLLM names them
  (lm-eval-harness's remote tokenizer reads them).
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter
from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from localjudge.errors import LocalJudgeError, repeated, unknown_name
from localjudge.io.cases import TestCase, case_from_row
from localjudge.io.jsonl import dump_line
from localjudge.kinds import Metric
from localjudge.kinds.options import ScoringOptions
from localjudge.metrics.builtin import builtin_metric, builtin_names
from localjudge.metrics.spec import metric_from_dict
from localjudge.runs.evaluate import with_components
from localjudge.scoring.distribution import DEFAULT_MIN_VALID_MASS
from localjudge.serve.http import Call, RequestError, response_for, run
from localjudge.serve.operations import Evaluate, Likelihood
from localjudge.serve.shapes import ChatMessage, ScaleSpec, Strict, render_chat, score_reading
from localjudge.serve.state import Served
from localjudge.stats.numbers import finite_json


class EvaluateRequest(Strict):
    """Cases to judge with metrics, as `localjudge eval` judges a data file."""

    cases: list[dict[str, Any]] = Field(min_length=1, description="Test cases, fields as in a data file's rows.")
    metrics: list[str | dict[str, Any]] = Field(
        min_length=1, description="Built-in metric names, or metric definitions inline (as a metric file holds)."
    )
    min_valid_mass: float | None = Field(default=None, ge=0, le=1, description="As --min-valid-mass [0.1].")
    truncate: bool = Field(default=False, description="As --truncate: cut over-long content (recorded).")
    stream: bool = Field(default=False, description="Answer as JSON lines, one record per line, as they finish.")


class ScoreRequest(ScaleSpec):
    """Rendered prompts (or conversations) and the scale to read at their end."""

    prompts: list[str] | None = Field(default=None, description="Prompts, already rendered.")
    conversations: list[list[ChatMessage]] | None = Field(
        default=None,
        description="Conversations, rendered with the judge's chat template (a last assistant message is a prefill).",
    )


class LikelihoodItem(Strict):
    prompt: str = Field(description="The conditioning text.")
    continuation: str = Field(description="The text whose log-likelihood is read.")


class LikelihoodRequest(Strict):
    items: list[LikelihoodItem] = Field(min_length=1, description="(prompt, continuation) pairs.")


class TokenizeRequest(Strict):
    prompt: str = Field(description="Text to tokenise.")
    add_special_tokens: bool = Field(default=True, description="False: the text on its own, no special tokens.")
    model: str | None = Field(default=None, description="Accepted; the server has one model.")


class DetokenizeRequest(Strict):
    tokens: list[int] = Field(description="Token ids.")
    model: str | None = Field(default=None, description="Accepted; the server has one model.")


def native_routes(served: Served) -> APIRouter:
    """The routes of the native API over one loaded judge."""
    router = APIRouter()
    judge, opts = served.judge, served.options

    @router.post("/v1/evaluate")
    async def evaluate(request: Request) -> Response:
        body = await served.read(request, EvaluateRequest)
        cases = _cases(body.cases, opts.max_items)
        metrics = _metrics(body.metrics)
        mass = DEFAULT_MIN_VALID_MASS if body.min_valid_mass is None else body.min_valid_mass
        op = Evaluate(tuple(metrics), ScoringOptions(truncate=body.truncate, min_valid_mass=mass))
        if body.stream:
            call = Call(served.worker, op, cases)

            async def lines():
                try:
                    async for piece in call.pieces():
                        yield "".join(dump_line(r) for records in piece for r in records)
                except LocalJudgeError as exc:  # the status is sent: the error is the stream's last line
                    yield json.dumps(json.loads(response_for(exc).body)) + "\n"

            return StreamingResponse(lines(), media_type="application/x-ndjson")
        per_case = await run(served.worker, op, cases, request)
        text = ", ".join(dump_line(r).rstrip("\n") for records in per_case for r in records)
        return Response('{"records": [' + text + "]}", media_type="application/json")

    @router.post("/v1/score")
    async def score(request: Request) -> JSONResponse:
        body = await served.read(request, ScoreRequest)
        op = body.operation("scale")
        if (body.prompts is None) == (body.conversations is None):
            raise RequestError(422, "give either prompts or conversations", param="prompts")
        prompts = body.prompts or [
            render_chat(judge, c, f"conversations.{i}") for i, c in enumerate(body.conversations or [])
        ]
        _check_count(prompts, "prompts", opts.max_items)
        empty = [i for i, p in enumerate(prompts) if not p.strip()]
        if empty:
            raise RequestError(422, f"prompts.{empty[0]}: the prompt is empty; give it some text to score")
        dists = await run(served.worker, op, prompts, request)
        readings = [score_reading(p, d, op.min_valid_mass) for p, d in zip(prompts, dists)]
        return JSONResponse({"distributions": readings})

    @router.post("/v1/likelihood")
    async def likelihood(request: Request) -> JSONResponse:
        body = await served.read(request, LikelihoodRequest)
        _check_count(body.items, "items", opts.max_items)
        got = await run(served.worker, Likelihood(), [(i.prompt, i.continuation) for i in body.items], request)
        readings = [
            finite_json(
                {**r.model_dump(mode="json"), "n_tokens": r.n_tokens, "sum": r.sum, "mean": r.mean, "min": r.min}
            )
            for r in got
        ]
        return JSONResponse({"readings": readings})

    @router.get("/v1/models")
    async def models(request: Request) -> JSONResponse:
        served.check_key(request)
        entry = {"id": judge.info.name, "object": "model", "created": 0, "owned_by": "localjudge"}
        return JSONResponse({"object": "list", "data": [{**entry, "localjudge": judge.info.model_dump(mode="json")}]})

    @router.get("/health")
    async def health() -> JSONResponse:
        return JSONResponse({"status": "ok", "judge": judge.info.name, "queued": served.worker.queued})

    @router.post("/tokenize")
    async def tokenize(request: Request) -> JSONResponse:
        body = await served.read(request, TokenizeRequest)
        served.check_model(body.model)
        tokens = judge.backend.encode(body.prompt) if body.add_special_tokens else _plain(judge, body.prompt)
        return JSONResponse({"tokens": tokens, "count": len(tokens), "max_model_len": judge.info.context_length})

    @router.post("/detokenize")
    async def detokenize(request: Request) -> JSONResponse:
        body = await served.read(request, DetokenizeRequest)
        served.check_model(body.model)
        return JSONResponse({"prompt": served.spell(body.tokens)})

    @router.get("/tokenizer_info")
    async def tokenizer_info(request: Request) -> JSONResponse:
        served.check_key(request)
        eos = sorted(judge.backend.eos_ids())
        return JSONResponse(
            {
                "eos_token": served.surfaces[eos[0]] if eos else None,
                "bos_token": None,
                "pad_token": None,
                "model_max_length": judge.info.context_length,
            }
        )

    return router


def _plain(judge, text: str) -> list[int]:
    """The text's tokens on their own, no special tokens (the library's continuation rule)."""
    return list(judge.backend.encode_continuation(text))


def _check_count(items, name: str, most: int) -> None:
    if len(items) > most:
        raise RequestError(413, f"{name}: {len(items)} items; this server takes at most {most} per request")


def _cases(rows: list[dict[str, Any]], most: int) -> list[TestCase]:
    """The rows as test cases, with a data file's rules; ids unique within the request."""
    _check_count(rows, "cases", most)
    try:
        cases = [case_from_row(row, f"cases.{i}", i) for i, row in enumerate(rows)]
    except LocalJudgeError as exc:
        raise RequestError(422, str(exc)) from None
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise RequestError(422, f"cases: ids repeated: {repeated(ids)}; give every case a unique id", param="cases")
    return cases


def _metrics(specs: list[str | dict[str, Any]]) -> list[Metric]:
    """Built-in metrics by name, or definitions given inline; the server reads no metric files."""
    metrics = []
    for i, spec in enumerate(specs):
        where = f"metrics.{i}"
        try:
            if isinstance(spec, str):
                if spec.endswith((".yaml", ".yml", ".json")) or "/" in spec:
                    raise RequestError(
                        422,
                        f"{where}: {spec!r} names a file; this server reads none: name a built-in metric "
                        "or give its definition inline",
                        param=where,
                    )
                if spec not in builtin_names():
                    hint = "name a built-in metric (`localjudge metrics` lists them) or give its definition inline"
                    raise unknown_name("metric", spec, builtin_names(), hint)
                metrics.append(builtin_metric(spec))
            else:
                metrics.append(metric_from_dict(spec, where))
        except RequestError:
            raise
        except LocalJudgeError as exc:
            raise RequestError(422, f"{where}: {exc}" if isinstance(spec, str) else str(exc), param=where) from None
    names = [m.name for m in metrics]
    if len(set(names)) != len(names):
        raise RequestError(422, f"metrics: {repeated(names)} given twice; give each metric once", param="metrics")
    try:
        with_components(metrics)
    except LocalJudgeError as exc:
        raise RequestError(422, f"metrics: {exc}", param="metrics") from None
    return metrics
