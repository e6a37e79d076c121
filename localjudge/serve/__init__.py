"""`localjudge serve`: one loaded judge for many clients over HTTP, exact distributions included.

- `options`: `ServeOptions` (host, port, API key, limits); `server`: `JudgeServer` (uvicorn).
- `worker`: the thread that owns the judge and gathers concurrent requests into engine calls;
  `operations`: what one engine call computes (the library's own `evaluate`, scores, likelihoods).
- `native`: /v1/evaluate, /v1/score, /v1/likelihood, /v1/models, /health; `openai_api`:
  /v1/completions and /v1/chat/completions (greedy; `readout`: log-probabilities from the full softmax).
- `app`, `http`, `state`, `shapes`: the ASGI application, the HTTP boundary, shared request parts.

Needs the `serve` extra (FastAPI, uvicorn): `pip install 'localjudge-offline[serve]'`. Names load on first
use, so `import localjudge.serve` works without it.

Examples:
    >>> from localjudge.serve import JudgeServer, ServeOptions  # doctest: +SKIP
    >>> JudgeServer(load_judge("smollm2-135m"), ServeOptions(port=8000)).run()  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localjudge.lazy import lazy_exports

if TYPE_CHECKING:
    from localjudge.serve.options import ServeOptions, is_loopback
    from localjudge.serve.server import JudgeServer

__all__ = ["JudgeServer", "ServeOptions", "is_loopback"]

_LAZY = {
    "ServeOptions": "localjudge.serve.options",
    "is_loopback": "localjudge.serve.options",
    "JudgeServer": "localjudge.serve.server",
}

__getattr__, __dir__ = lazy_exports("localjudge.serve", _LAZY, globals())
