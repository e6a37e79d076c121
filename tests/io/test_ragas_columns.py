"""Cases written with Ragas's column names read as the fields they are, in every data format."""

from __future__ import annotations

import csv
import json

import pytest

from localjudge.errors import DataError
from localjudge.io.cases import load_cases

RAGAS_ROW = {
    "user_input": "When was the bridge opened?",
    "response": "In 1932.",
    "reference": "It opened in 1932.",
    "retrieved_contexts": ["The bridge opened in 1932.", "It is 503 m long."],
    "reference_contexts": ["Opened 1932."],
}


def _read(tmp_path, suffix: str, rows: list[dict]):
    path = tmp_path / f"cases{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    elif suffix == ".json":
        path.write_text(json.dumps(rows), encoding="utf-8")
    else:  # list columns as JSON arrays in their cells
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows({k: json.dumps(v) if isinstance(v, list) else v for k, v in r.items()} for r in rows)
    return load_cases(path)


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv"])
def test_ragas_columns_are_the_fields_they_name(tmp_path, suffix):
    (case,) = _read(tmp_path, suffix, [RAGAS_ROW])
    assert case.input == "When was the bridge opened?"
    assert case.actual_output == "In 1932."
    assert case.expected_output == "It opened in 1932."
    assert case.retrieval_context == ["The bridge opened in 1932.", "It is 503 m long."]
    assert case.context == ["Opened 1932."]
    assert case.extra == {}


def test_a_field_under_both_names_is_an_error_naming_both(tmp_path):
    with pytest.raises(DataError, match=r"cases.jsonl:1: fields 'response' \(Ragas's name\) and 'actual_output'"):
        _read(tmp_path, ".jsonl", [{**RAGAS_ROW, "actual_output": "In 1933."}])


def test_a_wrong_type_is_reported_under_the_name_the_file_gives(tmp_path):
    with pytest.raises(DataError, match=r"cases.jsonl:1: field 'reference' must be a string, got int"):
        _read(tmp_path, ".jsonl", [{**RAGAS_ROW, "reference": 1932}])
    with pytest.raises(DataError, match=r"field 'retrieved_contexts' must be a list of strings"):
        _read(tmp_path, ".jsonl", [{**RAGAS_ROW, "retrieved_contexts": [1, 2]}])
