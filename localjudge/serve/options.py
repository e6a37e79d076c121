"""`ServeOptions`: where the server listens, who may call it, and how much it takes at once.

Built once at the boundary (`localjudge serve`'s flags, or a caller of `serve`) and passed whole.
A host other than loopback needs an API key: a judge reachable from the network answers whoever
reaches it, so the options refuse that combination before anything loads.

Examples:
    >>> ServeOptions().url
    'http://127.0.0.1:8000'
    >>> ServeOptions(host="0.0.0.0")
    Traceback (most recent call last):
    ...
    localjudge.errors.ConfigError: --host 0.0.0.0 is not a loopback address: ...
"""

from __future__ import annotations

import ipaddress
from typing import ClassVar

from pydantic import Field, model_validator

from localjudge.errors import ConfigError
from localjudge.options import Options

LOOPBACK_NAMES = ("localhost",)


class ServeOptions(Options):
    """How `localjudge serve` listens and what it accepts."""

    label: ClassVar[str] = "serve option"

    host: str = Field(default="127.0.0.1", description="Address to bind; loopback unless an api_key is set.")
    port: int = Field(default=8000, ge=0, le=65535, description="TCP port; 0 picks a free one.")
    api_key: str | None = Field(
        default=None, repr=False, description="Bearer key every endpoint but /health asks for (8 characters or more)."
    )
    max_body_bytes: int = Field(default=8 * 2**20, gt=0, description="Largest request body accepted (413 above).")
    max_items: int = Field(
        default=1024, gt=0, description="Most cases, prompts or items one request may hold (413 above)."
    )
    max_queue: int = Field(
        default=64, gt=0, description="Requests waiting or running at once; past it: 503 with Retry-After."
    )
    batch_window_ms: float = Field(
        default=5.0, ge=0, le=1000, description="How long the worker waits after the latest request before a call."
    )
    batch_items: int = Field(
        default=256, gt=0, description="Most items (cases, prompts) the worker takes into one engine call."
    )
    kept_prefixes: int = Field(
        default=8,
        ge=0,
        description="Shared-prefix KV caches the engine keeps between calls (requests on one source reuse them).",
    )
    max_tokens: int = Field(default=512, ge=0, description="Most tokens a completion may ask to generate.")

    @model_validator(mode="after")
    def _check_host(self) -> ServeOptions:
        if self.api_key is not None and len(self.api_key.strip()) < 8:  # the message never quotes the key
            raise ConfigError("--api-key is too short: use 8 characters or more, e.g. from `openssl rand -hex 16`")
        if not is_loopback(self.host) and self.api_key is None:
            raise ConfigError(
                f"--host {self.host} is not a loopback address: a server reachable from the network needs "
                "--api-key KEY (or LOCALJUDGE_API_KEY), which every client then sends as 'Authorization: Bearer KEY'"
            )
        return self

    @property
    def url(self) -> str:
        """The base URL clients use (IPv6 hosts in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only: localhost, 127.0.0.0/8 or ::1 (0.0.0.0 and :: are every address)."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve to any address
        return False
