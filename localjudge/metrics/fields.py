"""The names of a test case's fields that metrics read, shared by every metric kind's spec."""

from __future__ import annotations

from typing import Literal

FieldName = Literal["input", "actual_output", "expected_output", "context", "retrieval_context"]
Reasoning = Literal["none", "before", "after"]
