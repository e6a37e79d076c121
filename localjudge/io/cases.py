"""Test cases and the data files they come from (JSONL, a JSON list, CSV).

Field names follow DeepEval: `input`, `actual_output`, `expected_output`, `context`,
`retrieval_context`, plus `id`. Ragas's names are read as they are: `user_input`, `response`,
`reference`, `retrieved_contexts`, `reference_contexts` (`RAGAS_FIELDS`). Any other field is kept in
`extra` and copied to the results (human scores, document ids...). Errors name the file, the line
and the field.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from localjudge.errors import DataError, clip
from localjudge.io.files import parse_json, read_text
from localjudge.io.jsonl import numbered_lines

TEXT_FIELDS = ("input", "actual_output", "expected_output")
LIST_FIELDS = ("context", "retrieval_context")
CASE_FIELDS = TEXT_FIELDS + LIST_FIELDS
RAGAS_FIELDS = {
    "user_input": "input",
    "response": "actual_output",
    "reference": "expected_output",
    "retrieved_contexts": "retrieval_context",
    "reference_contexts": "context",
}
"""Ragas's column names (its `SingleTurnSample`) -> the field each is read as."""


class TestCase(BaseModel):
    """One item to judge."""

    __test__ = False  # not a pytest class
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="Unique id of the case within its file.")
    input: str | None = Field(default=None, description="The user input or question.")
    actual_output: str | None = Field(default=None, description="The output being judged.")
    expected_output: str | None = Field(default=None, description="A reference output.")
    context: list[str] | None = Field(default=None, description="Ground-truth context passages.")
    retrieval_context: list[str] | None = Field(default=None, description="Passages a RAG system retrieved.")
    extra: dict[str, Any] = Field(default_factory=dict, description="Other fields, copied to results.")

    def get(self, field: str) -> Any:
        """A standard field, or an extra one; None when absent or empty."""
        value = getattr(self, field) if field in CASE_FIELDS else self.extra.get(field)
        return None if value in ("", [], None) else value


def case_from_row(row: Any, where: str, index: int) -> TestCase:
    """Validates one raw record into a `TestCase`; `where` is "file:line" for messages."""
    if not isinstance(row, dict):
        raise DataError(f"{where}: expected an object with fields, got {type(row).__name__}")
    row, given = _ragas_renamed(dict(row), where)
    raw_id = row.pop("id", None)
    if raw_id is None or raw_id == "":
        case_id = f"case-{index + 1}"
    elif isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool):
        case_id = str(raw_id)
    else:
        raise DataError(f"{where}: field 'id' must be a string or integer, got {clip(raw_id)}")
    known: dict[str, Any] = {}
    for field in TEXT_FIELDS:
        value = row.pop(field, None)
        if value is not None and not isinstance(value, str):
            raise DataError(f"{where}: field {given.get(field, field)!r} must be a string, got {type(value).__name__}")
        known[field] = value
    for field in LIST_FIELDS:
        value = row.pop(field, None)
        if isinstance(value, str):
            value = [value] if value.strip() else None  # an empty CSV cell is no context, not [""]
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise DataError(f"{where}: field {given.get(field, field)!r} must be a list of strings or a string")
        known[field] = value
    return TestCase(id=case_id, extra=row, **known)


def _ragas_renamed(row: dict[str, Any], where: str) -> tuple[dict[str, Any], dict[str, str]]:
    """`row` with Ragas's column names as the fields they are, and field -> the name the row gave it.

    Both names of one field is an error.
    """
    given: dict[str, str] = {}
    for theirs, ours in RAGAS_FIELDS.items():
        if theirs in row:
            if ours in row:
                raise DataError(
                    f"{where}: fields {theirs!r} (Ragas's name) and {ours!r} both given for one field; keep one"
                )
            row[ours] = row.pop(theirs)
            given[ours] = theirs
    return row, given


def load_cases(path: str | Path, skipped: list[str] | None = None) -> list[TestCase]:
    """Reads test cases from a .jsonl, .json (a list) or .csv file.

    Args:
        path: the data file.
        skipped: when given, malformed rows are skipped and their error messages appended here
            (the `--skip-invalid` policy) instead of raising.

    Raises:
        DataError: unreadable file, malformed record, wrong field type, duplicate id.

    Examples:
        >>> cases = load_cases("localjudge/examples/rag_demo.jsonl")  # doctest: +SKIP
    """
    path = Path(path)
    text = read_text(path, "data file")
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        rows = list(_jsonl_rows(text, path))
    elif suffix == ".json":
        rows = _json_rows(text, path)
    elif suffix == ".csv":
        rows = list(_csv_rows(text, path))
    else:
        raise DataError(f"{path}: unknown data format {clip(suffix, 20)}; use .jsonl, .json or .csv")
    if not rows:
        raise DataError(f"{path}: no test cases in the file")
    cases: list[TestCase] = []
    seen: dict[str, int] = {}  # case id -> line it was first read on
    for i, (line, row) in enumerate(rows):
        try:
            if isinstance(row, DataError):  # a row the reader could not parse
                raise row
            case = case_from_row(row, f"{path}:{line}", i)
            if case.id in seen:
                raise DataError(
                    f"{path}:{line}: duplicate id {clip(case.id)} (first on line {seen[case.id]}); ids must be unique"
                )
        except DataError as exc:
            if skipped is None:
                raise
            skipped.append(str(exc))
            continue
        seen[case.id] = line
        cases.append(case)
    if not cases:
        raise DataError(f"{path}: no valid test cases in the file (all {len(rows)} rows are invalid)")
    return cases


def _jsonl_rows(text: str, path: Path) -> Iterable[tuple[int, Any]]:
    """(line, value) of each non-blank line; the value is a `DataError` for a line that is not JSON."""
    for n, line in numbered_lines(text):
        try:
            yield n, parse_json(line, path, n)
        except DataError as exc:  # kept, for --skip-invalid to skip that line only
            yield n, exc


def _json_rows(text: str, path: Path) -> list[tuple[int, Any]]:
    data = parse_json(text, path)
    if not isinstance(data, list):
        raise DataError(f"{path}: a .json data file must hold a list of test cases")
    return [(i + 1, row) for i, row in enumerate(data)]  # item numbers stand in for lines


def _csv_rows(text: str, path: Path) -> Iterable[tuple[int, Any]]:
    """(line, row) of each record; the row is a `DataError` for a ragged record."""
    # strict: a stray quote is an error, not text silently merged into the next cell
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        header = reader.fieldnames or []
        dupes = sorted({h for h in header if header.count(h) > 1})
        if dupes:
            raise DataError(f"{path}:1: header repeats column(s) {', '.join(map(clip, dupes))}; name each column once")
        for row in reader:
            if None in row:
                yield reader.line_num, DataError(f"{path}:{reader.line_num}: more values than header columns")
            elif None in row.values():
                short = ", ".join(clip(k) for k, v in row.items() if v is None)
                yield (
                    reader.line_num,
                    DataError(f"{path}:{reader.line_num}: fewer values than header columns (no {short})"),
                )
            else:
                yield reader.line_num, {k: _csv_value(k, v) for k, v in row.items()}
    except csv.Error as exc:
        raise DataError(f"{path}:{reader.reader.line_num}: malformed CSV ({exc})") from None


def _csv_value(key: str, value: str) -> Any:
    """CSV cells are text; list fields may hold a JSON array; numbers in extra fields are parsed."""
    if (key in LIST_FIELDS or RAGAS_FIELDS.get(key) in LIST_FIELDS) and value.startswith("["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):  # not JSON, or a number too long: keep the text
            return value
    if key not in CASE_FIELDS and key not in RAGAS_FIELDS and key != "id":
        try:
            return float(value) if any(c in value for c in ".eE") else int(value)
        except ValueError:
            return value
    return value
