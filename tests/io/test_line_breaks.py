"""Unicode line breaks inside strings survive every reader of users' and our own files.

JSON lines end at "\\n" only, and CSV records where the csv module says: `str.splitlines()` also
cuts at U+2028, U+2029, U+0085, \\x0b, \\x0c and \\x1c-\\x1e, which a JSON string written raw
(`ensure_ascii=False`) or a quoted CSV cell may hold.
"""

from __future__ import annotations

import json

import pytest

from localjudge.calibration.inputs import load_pairs
from localjudge.io.cases import TestCase, load_cases
from localjudge.metrics import GEvalMetric
from localjudge.runs.evaluate import evaluate
from localjudge.runs.results_file import read_results
from localjudge.testing import fake_judge

BREAKS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\r"]
ODD = "".join(f"part{i}{b}" for i, b in enumerate(BREAKS)) + "end"
METRIC = GEvalMetric(
    name="q",
    task="Judge it.",
    criteria="Is it right?",
    steps=["Check."],
    fields=["input", "actual_output"],
    low=1,
    high=5,
)


def _judge():
    return fake_judge(lambda prompt: {"3": 0.5, "4": 0.4})


def test_cases_file_round_trips_unicode_line_breaks(tmp_path):
    """Regression: a data file whose strings hold U+2028 & co. gives back exactly those strings."""
    path = tmp_path / "d.jsonl"
    rows = [
        {"id": f"c{i}", "input": f"{i}{ODD}", "actual_output": ODD, "context": [ODD, "x"], "note": ODD}
        for i in range(3)
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert "\u2028".encode() in path.read_bytes()
    cases = load_cases(path)
    assert [c.id for c in cases] == ["c0", "c1", "c2"]
    assert [c.input for c in cases] == [f"{i}{ODD}" for i in range(3)]
    assert all(c.actual_output == ODD and c.context == [ODD, "x"] and c.extra == {"note": ODD} for c in cases)


def test_results_file_round_trips_unicode_line_breaks(tmp_path):
    """Regression: a results file whose records hold U+2028 & co. reads back record for record,
    for `read_results` (resume, --hybrid) and for `calibrate`'s reader alike."""
    out = tmp_path / "r.jsonl"
    cases = [
        TestCase(id=f"u{i}{ODD}", input=f"q{i}", actual_output=ODD, extra={"human": i + 1, "doc": ODD})
        for i in range(4)
    ]
    written = evaluate(cases, [METRIC], _judge(), out=out, progress=False).records
    assert "\u2028".encode() in out.read_bytes()
    assert read_results(out) == written
    pairs = load_pairs(out, human="human", group="doc")
    assert pairs.human.tolist() == [1, 2, 3, 4] and pairs.groups.tolist() == [ODD] * 4


@pytest.mark.parametrize("suffix, sep", [(".csv", ","), (".tsv", "\t")])
def test_calibration_table_cells_keep_line_breaks(tmp_path, suffix, sep):
    """Regression: `calibrate` cut CSV/TSV text with str.splitlines(), so a quoted cell lost its
    U+2028, \\x0b, \\x85... and even its newlines (each record's cells glued together)."""
    cells = [ODD, "two\nlines", "plain"]
    path = tmp_path / f"t{suffix}"
    body = "".join(f'{i + 1}{sep}{i + 2}{sep}"{g}"\n' for i, g in enumerate(cells))
    path.write_text(f"judge{sep}human{sep}group\n" + body, encoding="utf-8", newline="")
    pairs = load_pairs(path, group="group")
    assert pairs.groups.tolist() == cells
    assert pairs.judge.tolist() == [1, 2, 3] and pairs.human.tolist() == [2, 3, 4]
