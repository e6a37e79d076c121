"""Policies of scripted judges named in the tests' registries (`source: {kind: scripted, policy: ...}`)."""

from __future__ import annotations


def four(prompt: str) -> dict[str, float]:
    """Every prompt: "4" with certainty."""
    return {"4": 1.0}


def echo(prompt: str) -> str:
    """Generation: the last word of the prompt."""
    return prompt.split()[-1] if prompt.split() else ""


NOT_A_FUNCTION = 4
