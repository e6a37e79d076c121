"""The names of a test case's fields that metrics read, shared by every metric kind's spec."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

FieldName = Literal["input", "actual_output", "expected_output", "context", "retrieval_context"]
Reasoning = Literal["none", "before", "after"]


def check_fields(fields: Sequence[str], target: str | None = None, role: str = "source") -> None:
    """Refuses a spec's repeated fields, and a target that is also one of them (pydantic validators' ValueError).

    Args:
        fields: the fields the prompt shows.
        target: the field that is read (scored) rather than shown, if the kind has one.
        role: what the kind calls the shown fields, for the message ("source", "condition").
    """
    if len(set(fields)) != len(fields):
        raise ValueError("fields are repeated")
    if target is not None and target in fields:
        raise ValueError(f"the target {target!r} cannot also be a {role} field")
