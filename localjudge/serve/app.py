"""The ASGI application: the native and OpenAI routes over one `Served` judge, errors as JSON, one log line
per request, and the worker started and drained with the application's lifespan."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from localjudge.errors import LocalJudgeError
from localjudge.serve.http import ClientGone, error_response, response_for
from localjudge.serve.native import native_routes
from localjudge.serve.openai_api import openai_routes
from localjudge.serve.state import Served

log = logging.getLogger("localjudge.serve")


def build_app(served: Served) -> FastAPI:
    """The application serving `served.judge`; its lifespan starts the worker and, at shutdown, lets it finish
    every queued job before the process exits."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        served.worker.start()
        try:
            yield
        finally:
            served.worker.stop()

    # no /docs or /openapi.json: every route but /health answers only to the key, and those would not
    app = FastAPI(title="localjudge", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.include_router(native_routes(served))
    app.include_router(openai_routes(served))

    async def refused(request: Request, exc: Exception) -> Response:
        if isinstance(exc, ClientGone):
            return Response(status_code=499)  # nobody reads it: the client left
        if isinstance(exc, HTTPException):  # an unknown path or method
            where = f"{request.method} {request.url.path}"
            return error_response(exc.status_code, f"{where}: {exc.detail}", "invalid_request_error")
        return response_for(exc)

    # the library's errors (bad input, overload) and routing's are answers; anything else is a 500 with a log
    for kind in (LocalJudgeError, ClientGone, HTTPException, Exception):
        app.add_exception_handler(kind, refused)
    app.add_middleware(RequestLog)
    return app


class RequestLog:
    """One log line per request: client, method, path, status, seconds (a plain ASGI middleware, so that
    streaming answers and disconnects pass through untouched)."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start, status = time.perf_counter(), [0]

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            client = scope.get("client") or ("-", 0)
            log.info(
                "%s:%s %s %s %s %.3fs",
                client[0],
                client[1],
                scope["method"],
                scope["path"],
                status[0] or "-",
                time.perf_counter() - start,
            )
