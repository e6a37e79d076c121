"""A real `localjudge serve` server on a free loopback port, on a thread, and a small HTTP client for tests."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from localjudge.serve import JudgeServer, ServeOptions


@contextmanager
def running(judge, **options: Any) -> Iterator[JudgeServer]:
    """`judge` served on 127.0.0.1 (a free port) with `options`, stopped (drained) on exit."""
    server = JudgeServer(judge, ServeOptions(port=0, **options))
    server.start()
    try:
        yield server
    finally:
        server.stop()


class Answer(NamedTuple):
    status: int
    headers: dict[str, str]
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


def call(
    url: str,
    method: str,
    path: str,
    body: Any = None,
    *,
    key: str | None = None,
    raw: bytes | None = None,
    timeout: float = 60,
) -> Answer:
    """One request (a JSON body, or `raw` bytes as they are); the answer whatever its status."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    try:
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        return Answer(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read().decode())
    finally:
        conn.close()


def post(url: str, path: str, body: Any = None, **kw: Any) -> Answer:
    return call(url, "POST", path, body, **kw)


def get(url: str, path: str, **kw: Any) -> Answer:
    return call(url, "GET", path, **kw)


class Gate:
    """A fake judge's policy that holds the engine call in progress until released: the worker is then busy,
    deterministically, while a test fills the queue, disconnects or stops the server."""

    def __init__(self, policy):
        self.policy = policy
        self.entered = threading.Event()
        self.released = threading.Event()

    def __call__(self, prompt: str) -> dict[str, float]:
        self.entered.set()
        assert self.released.wait(60), "the test never released the gate"
        return self.policy(prompt)
