"""The HTTP boundary: reading a bounded body into a request model, errors as JSON, jobs seen from the event loop.

Every error a client can cause is a 4xx JSON object naming the problem, in OpenAI's shape so that
their clients show it: `{"error": {"message": ..., "type": ..., "param": ..., "code": ...}}`.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import AsyncIterator, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from localjudge.errors import LocalJudgeError, field_path
from localjudge.serve.worker import Job, Operation, Overloaded, Worker

M = TypeVar("M", bound=BaseModel)


class RequestError(LocalJudgeError):
    """A request the server refuses, with its HTTP status."""

    def __init__(self, status: int, message: str, param: str | None = None, kind: str = "invalid_request_error"):
        super().__init__(message)
        self.status, self.param, self.kind = status, param, kind


class ClientGone(Exception):
    """The client disconnected before its answer was ready (its remaining work was cancelled)."""


def error_response(status: int, message: str, kind: str, param: str | None = None, **headers: str) -> JSONResponse:
    body = {"error": {"message": message, "type": kind, "param": param, "code": status}}
    return JSONResponse(body, status_code=status, headers=headers or None)


def response_for(exc: BaseException) -> JSONResponse:
    """The JSON answer to an exception raised while handling a request."""
    if isinstance(exc, RequestError):
        return error_response(exc.status, str(exc), exc.kind, exc.param)
    if isinstance(exc, Overloaded):
        return error_response(503, str(exc), "overloaded", None, **{"Retry-After": "1"})
    if isinstance(exc, LocalJudgeError):  # the library refused the input (too long, unreadable...)
        return error_response(400, str(exc), "invalid_request_error")
    return error_response(500, f"internal error: {type(exc).__name__}: {exc}", "server_error")


def check_key(request: Request, api_key: str | None) -> None:
    """Refuses a request without `Authorization: Bearer KEY` when the server has a key (constant-time compare)."""
    if api_key is None:
        return
    given = request.headers.get("authorization", "")
    scheme, _, token = given.partition(" ")
    ok = scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), api_key.encode())
    if not ok:
        raise RequestError(
            401, "missing or wrong API key; send 'Authorization: Bearer KEY'", kind="authentication_error"
        )


async def read_model(request: Request, model: type[M], max_bytes: int) -> M:
    """The body as `model`, at most `max_bytes` long (read in pieces: a lying Content-Length changes nothing).

    Raises:
        RequestError: 413 past the limit, 400 for a body that is not JSON, 422 naming the first bad field.
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise RequestError(413, f"the body is {declared} bytes; this server takes at most {max_bytes}")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_bytes:
            raise RequestError(413, f"the body is over {max_bytes} bytes, the most this server takes")
    try:
        return model.model_validate_json(bytes(body))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = field_path(err["loc"]) or "body"
        if err["type"] == "json_invalid":
            raise RequestError(400, f"the body is not valid JSON: {err['msg']}") from None
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        raise RequestError(422, f"{where}: {message}", param=where) from None


class Call:
    """A job submitted from the event loop: its results arrive here from the worker thread.

    Raises (on construction):
        Overloaded: the queue is full.
    """

    def __init__(self, worker: Worker, op: Operation, items: Sequence[Any]):
        loop = asyncio.get_running_loop()
        self._events: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()

        def put(*event: Any) -> None:
            try:
                loop.call_soon_threadsafe(self._events.put_nowait, event)
            except RuntimeError:  # the loop closed (server stopped): nobody waits for it
                pass

        self.job = Job(
            op,
            items,
            on_results=lambda start, got: put("results", start, got),
            on_error=lambda exc: put("error", exc),
            on_done=lambda: put("done"),
        )
        worker.submit(self.job)

    async def pieces(self) -> AsyncIterator[list[Any]]:
        """The results slice by slice, in item order; raises the job's error."""
        try:
            while True:
                event = await self._events.get()
                if event[0] == "results":
                    yield event[2]
                elif event[0] == "error":
                    raise event[1]
                else:
                    return
        finally:
            self.job.cancel()  # a no-op once done; the client left otherwise

    async def results(self, request: Request | None = None) -> list[Any]:
        """Every result, in item order; with `request`, a disconnect cancels the job and raises `ClientGone`."""
        waiter = asyncio.ensure_future(self._collect())
        if request is None:
            return await waiter
        gone = asyncio.ensure_future(_disconnected(request))
        done, _ = await asyncio.wait({waiter, gone}, return_when=asyncio.FIRST_COMPLETED)
        if waiter in done:
            gone.cancel()
            return waiter.result()
        self.job.cancel()
        waiter.cancel()
        raise ClientGone()

    async def _collect(self) -> list[Any]:
        return [r async for piece in self.pieces() for r in piece]


async def run(worker: Worker, op: Operation, items: Sequence[Any], request: Request | None = None) -> list[Any]:
    """Submits a job and waits for all its results (see `Call.results`)."""
    return await Call(worker, op, items).results(request)


async def _disconnected(request: Request) -> None:
    """Returns when the client disconnects (the body is read by then, so the next message is the disconnect)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
