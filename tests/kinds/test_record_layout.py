"""Results files keep their bytes: each kind's detail reads back typed and writes back as it was written.

`every_kind.jsonl` holds one line of each built-in kind (scored and unscored), written before the
record had one `detail` slot, when each kind's detail had a field of its own (`pairwise`,
`likelihood` and `hybrid` in every record, `entailment`, `verdict` and `pair` only in their own).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localjudge.errors import DataError
from localjudge.io.jsonl import dump_line
from localjudge.kinds import KINDS, kind_of
from localjudge.kinds.records import ComponentScores, ResultRecord
from localjudge.runs.results_file import read_results

WRITTEN = Path(__file__).resolve().parents[1] / "data" / "records" / "every_kind.jsonl"
LINES = WRITTEN.read_text(encoding="utf-8").splitlines(keepends=True)


def test_the_file_has_every_built_in_kind():
    kinds = {json.loads(line)["kind"] for line in LINES}
    assert kinds == {"geval", "pairwise", "likelihood", "reference", "hybrid", "entailment", "verdict",
                     "pairwise_likelihood", "head"}  # fmt: skip
    assert kinds == set(KINDS)  # every registered kind has a line


@pytest.mark.parametrize("line", LINES, ids=[f"{json.loads(x)['kind']}-{json.loads(x)['case_id'][-4:]}" for x in LINES])
def test_a_line_reads_into_its_kinds_detail_and_writes_back_byte_for_byte(line, tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(line, encoding="utf-8")
    (record,) = read_results(path)
    kind, written = kind_of(record.kind), json.loads(line)
    if kind.detail is None:
        assert record.detail is None
    else:
        assert isinstance(record.detail, kind.detail)
        stored = written[kind.detail_key]
        assert (record.detail.root if isinstance(record.detail, ComponentScores) else record.detail.model_dump(
            mode="json")) == stored  # fmt: skip
    assert dump_line(record) == line


def test_a_detail_under_another_kinds_key_is_refused(tmp_path):
    line = json.loads(next(x for x in LINES if json.loads(x)["kind"] == "geval"))
    line["verdict"] = {"coherence": 0.5}
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="verdict: not the detail of a geval record"):
        read_results(path)


def test_a_record_built_in_code_carries_its_detail_under_the_kinds_key():
    line = next(x for x in LINES if json.loads(x)["kind"] == "verdict")
    record = ResultRecord.model_validate_json(line)
    dumped = record.model_dump(mode="json")
    assert "detail" not in dumped and dumped["verdict"] == record.detail.root
    assert (dumped["pairwise"], dumped["likelihood"], dumped["hybrid"]) == (None, None, None)
    assert "entailment" not in dumped and "pair" not in dumped
