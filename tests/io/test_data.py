"""Data files: JSONL, JSON list and CSV; DeepEval field names; errors that name file, line and field."""

from __future__ import annotations

import json

import pytest

from localjudge.errors import DataError
from localjudge.io.cases import TestCase, load_cases
from localjudge.metrics import builtin_metric
from localjudge.runs.evaluate import evaluate
from localjudge.testing import fake_judge

ROWS = [
    {
        "id": "a",
        "input": "Q1",
        "actual_output": "A1",
        "expected_output": "E1",
        "retrieval_context": ["p1", "p2"],
        "human_score": 4,
        "source": "doc-7",
    },
    {"id": 2, "input": "Q2", "actual_output": "A2", "context": "one passage"},
    {"input": "Q3", "actual_output": "A3"},
]


def write_jsonl(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def check_rows(cases: list[TestCase]) -> None:
    a, b, c = cases
    assert (a.id, a.input, a.actual_output, a.expected_output) == ("a", "Q1", "A1", "E1")
    assert a.retrieval_context == ["p1", "p2"]
    assert a.extra == {"human_score": 4, "source": "doc-7"}
    assert (b.id, b.context) == ("2", ["one passage"])  # integer ids become strings; a string context a list
    assert c.id == "case-3" and c.expected_output is None and c.get("expected_output") is None


def test_jsonl(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n\n" + json.dumps(ROWS[1]) + "\n" + json.dumps(ROWS[2]), encoding="utf-8")
    check_rows(load_cases(path))


def test_json_list(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps(ROWS, indent=2), encoding="utf-8")
    check_rows(load_cases(path))


CSV = """\
id,input,actual_output,expected_output,retrieval_context,context,human_score,source
a,Q1,A1,E1,"[""p1"", ""p2""]",,4,doc-7
2,Q2,A2,,,one passage,,
,Q3,A3,,,,,
"""


def test_csv_with_json_array_list_fields(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text(CSV, encoding="utf-8")
    a, b, c = load_cases(path)
    assert (a.id, a.input, a.actual_output, a.expected_output) == ("a", "Q1", "A1", "E1")
    assert a.retrieval_context == ["p1", "p2"]
    assert a.extra == {"human_score": 4, "source": "doc-7"}
    assert (b.id, b.context, b.get("expected_output")) == ("2", ["one passage"], None)
    assert c.id == "case-3"


def test_empty_csv_list_cell_is_absent(tmp_path):
    # an empty retrieval_context cell must not become [""], which would count as context present
    path = tmp_path / "d.csv"
    path.write_text(CSV, encoding="utf-8")
    _, b, c = load_cases(path)
    assert b.get("retrieval_context") is None and c.get("context") is None
    rec = evaluate([b], [builtin_metric("faithfulness")], fake_judge(lambda p: {"5": 1.0}), progress=False).records[0]
    assert rec.score is None and "retrieval_context" in rec.unscored_reason


def test_utf8_bom_and_unicode(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes("\ufeff".encode() + json.dumps({"id": "é", "input": "naïve ✓"}, ensure_ascii=False).encode())
    (case,) = load_cases(path)
    assert (case.id, case.input) == ("é", "naïve ✓")


def test_extra_fields_are_copied_to_results(tmp_path):
    cases = load_cases(write_jsonl(tmp_path / "d.jsonl", ROWS[:1]))
    out = tmp_path / "r.jsonl"
    result = evaluate(cases, [builtin_metric("correctness")], fake_judge(lambda p: {"5": 1.0}), out=out, progress=False)
    assert result.records[0].extra == {"human_score": 4, "source": "doc-7"}
    assert json.loads(out.read_text().splitlines()[0])["extra"] == {"human_score": 4, "source": "doc-7"}


# -- malformed files ------------------------------------------------------------------------------


def _error(path) -> str:
    with pytest.raises(DataError) as info:
        load_cases(path)
    return str(info.value)


def test_bad_json_line_names_file_and_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "1", "input": "q"}\n{"id": "2", "input": \n{"id": "3"}\n', encoding="utf-8")
    msg = _error(path)
    assert msg.startswith(f"{path}:2: invalid JSON")


@pytest.mark.parametrize(
    "row, field",
    [
        ({"id": "x", "actual_output": 5}, "'actual_output' must be a string"),
        ({"id": "x", "input": ["a"]}, "'input' must be a string"),
        ({"id": "x", "retrieval_context": [1, 2]}, "'retrieval_context' must be a list of strings"),
        ({"id": "x", "context": {"a": 1}}, "'context' must be a list of strings"),
        ({"id": 1.5}, "'id' must be a string or integer"),
        ({"id": True}, "'id' must be a string or integer"),
    ],
)
def test_wrong_type_names_file_line_and_field(tmp_path, row, field):
    path = tmp_path / "d.jsonl"
    write_jsonl(path, [{"id": "ok", "input": "q"}, row])
    msg = _error(path)
    assert msg.startswith(f"{path}:2: ") and field in msg


def test_row_that_is_not_an_object(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "1"}\n["a", "b"]\n', encoding="utf-8")
    assert _error(path).startswith(f"{path}:2: expected an object")


def test_non_utf8_bytes_name_the_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"id": "1"}\n{"id": "2"}\n{"id": "3", "input": "caf\xe9"}\n')
    msg = _error(path)
    assert msg.startswith(f"{path}:3: not valid UTF-8") and "UTF-8" in msg


def test_duplicate_ids_name_both_lines(tmp_path):
    path = tmp_path / "d.jsonl"
    write_jsonl(path, [{"id": "a"}, {"id": "b"}, {"id": "a"}])
    msg = _error(path)
    assert msg.startswith(f"{path}:3: duplicate id 'a'") and "line 1" in msg


def test_duplicate_ids_across_int_and_str(tmp_path):
    path = tmp_path / "d.jsonl"
    write_jsonl(path, [{"id": 7}, {"id": "7"}])
    assert "duplicate id '7'" in _error(path)


@pytest.mark.parametrize(
    "name, text", [("e.jsonl", ""), ("e.jsonl", "\n  \n"), ("e.json", "[]"), ("e.csv", "id,input\n")]
)
def test_empty_file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert "no test cases" in _error(path)


def test_other_file_errors(tmp_path):
    assert "cannot read data file" in _error(tmp_path / "missing.jsonl")
    (tmp_path / "d.txt").write_text("x")
    assert "unknown data format '.txt'" in _error(tmp_path / "d.txt")
    (tmp_path / "d.json").write_text('{"id": "1"}')
    assert "must hold a list" in _error(tmp_path / "d.json")
    (tmp_path / "bad.json").write_text('[\n{"id": "1"},\n{"id": }\n]')
    assert _error(tmp_path / "bad.json").startswith(f"{tmp_path / 'bad.json'}:3: invalid JSON")
    (tmp_path / "d.csv").write_text("id,input\n1,q\n2,q,surplus\n")
    assert _error(tmp_path / "d.csv").startswith(f"{tmp_path / 'd.csv'}:3: more values than header columns")


# -- skipping malformed rows ----------------------------------------------------------------------


def test_skip_mode_skips_and_lists(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(
        '{"id": "a", "input": "q"}\n'
        '{"id": "b", "input": \n'
        '{"id": "c", "actual_output": 3}\n'
        '{"id": "a", "input": "again"}\n'
        '{"id": "d", "input": "q"}\n',
        encoding="utf-8",
    )
    skipped: list[str] = []
    cases = load_cases(path, skipped)
    assert [c.id for c in cases] == ["a", "d"]
    assert [s.split(": ")[0] for s in skipped] == [f"{path}:2", f"{path}:3", f"{path}:4"]
    assert "invalid JSON" in skipped[0] and "actual_output" in skipped[1] and "duplicate id" in skipped[2]


def test_skip_mode_with_nothing_valid_still_fails(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": 1, "input": 2}\n', encoding="utf-8")
    skipped: list[str] = []
    with pytest.raises(DataError, match="no valid test cases"):
        load_cases(path, skipped)
    assert len(skipped) == 1


def test_test_case_is_strict_and_frozen():
    with pytest.raises(ValueError):
        TestCase(id="x", colour="red")
    case = TestCase(id="x", input="", extra={"k": "v"})
    assert case.get("input") is None and case.get("k") == "v" and case.get("missing") is None
