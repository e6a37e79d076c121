"""The page: one HTML file with its style, script and data inline, and a policy that forbids any request.

The Content-Security-Policy lets the page run its own inline script and style and load nothing
else (no fonts, images or scripts from anywhere), so it reads the same from `file://`, offline.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from typing import Any

POLICY = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"


def _asset(name: str) -> str:
    return (resources.files("localjudge.report") / "assets" / name).read_text(encoding="utf-8")


def render_page(title: str, data: dict[str, Any]) -> str:
    """The HTML page of `data` (`payload.payload`'s), titled `title`."""
    # "</" inside the JSON would end the script element: JSON reads "<\/" as "</"
    embedded = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False).replace("</", "<\\/")
    return (
        _asset("report.html")
        .replace("{{policy}}", POLICY)
        .replace("{{title}}", html.escape(title))
        .replace("{{style}}", _asset("report.css"))
        .replace("{{script}}", _asset("report.js"))
        .replace("{{data}}", embedded)
    )
