"""`Served`: what every route shares: the judge, its worker, the options, and the request checks.

The worker thread alone runs the model. Routes tokenise and render chat templates on the event loop
while it computes: the tokenizer is only read there (nothing in localjudge sets a truncation or
padding state on it, the one thing that makes a fast tokenizer refuse a concurrent call).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel
from starlette.requests import Request

from localjudge.judges.judge import Judge
from localjudge.serve.http import RequestError, check_key, read_model
from localjudge.serve.options import ServeOptions
from localjudge.serve.worker import Worker

M = TypeVar("M", bound=BaseModel)


@dataclass
class Served:
    """One loaded judge served to many clients through one worker."""

    judge: Judge
    options: ServeOptions
    worker: Worker
    surfaces: list[str] = field(default_factory=list)
    """The text each token id adds after other text (token strings in logprobs), read once."""

    def __post_init__(self) -> None:
        if not self.surfaces:
            self.surfaces = list(self.judge.backend.token_surfaces())

    def check_key(self, request: Request) -> None:
        """401 unless the request carries the server's key (when it has one)."""
        check_key(request, self.options.api_key)

    async def read(self, request: Request, model: type[M]) -> M:
        """The key checked, then the body as `model` (4xx naming the problem)."""
        self.check_key(request)
        return await read_model(request, model, self.options.max_body_bytes)

    def check_model(self, name: str | None) -> None:
        """A request may name the served judge, or no model; it cannot ask for another one."""
        if name is not None and name != self.judge.info.name:
            raise RequestError(
                404,
                f"model {name!r} is not served here; this server serves {self.judge.info.name!r} only "
                "(see GET /v1/models); clients cannot load or switch models",
                param="model",
                kind="model_not_found",
            )

    def spell(self, tokens: Sequence[int]) -> str:
        """The text of token ids (each token's surface, joined); 422 for an id outside the vocabulary."""
        bad = [t for t in tokens if not 0 <= t < len(self.surfaces)]
        if bad:
            raise RequestError(422, f"token id {bad[0]} is outside the vocabulary (0..{len(self.surfaces) - 1})")
        return "".join(self.surfaces[t] for t in tokens)
