"""Error messages stay one short line: a value they quote is cut to about 80 characters with an
ellipsis, never the whole cell, id, name or key the user wrote.

Each case plants a 10,000-character value where an error message quotes it.
"""

from __future__ import annotations

import json
import re

import pytest
from cli_checks import GOOD, GOOD_ROW, METRIC, assert_user_error, install_fake, run, short_judge, write_files

from localjudge.errors import CLIP, clip, repeated

LONG = "x" * 10_000
MAX_LINE = 400  # "Error: " + a path or two + the message's own words + a few cut values


@pytest.fixture
def fake(localjudge_scripted, monkeypatch, tmp_path):
    """The fake judge of test_cli_errors, loaded by every command."""
    return install_fake(localjudge_scripted, monkeypatch, tmp_path)


def _row(**kw) -> str:
    return json.dumps({**GOOD_ROW, **kw}) + "\n"


CASES = {
    "duplicate id": ({"d.jsonl": _row(id=LONG) + _row(id=LONG)}, ["eval", "d.jsonl", "--metric", "correctness"]),
    "id of a wrong type": ({"d.jsonl": _row(id=[LONG])}, ["eval", "d.jsonl", "--metric", "correctness"]),
    "csv short row, long column": ({"d.csv": f"id,input,{LONG}\na,q\n"}, ["eval", "d.csv", "--metric", "correctness"]),
    "unknown metric name": ({"d.jsonl": GOOD}, ["eval", "d.jsonl", "--metric", LONG]),
    # YAML keys longer than 1024 characters are a syntax error of their own
    "unknown key in a metric file": (
        {"d.jsonl": GOOD, "m.yaml": METRIC + f"{LONG[:1000]}: 1\n"},
        ["eval", "d.jsonl", "--metric", "m.yaml"],
    ),
    "unknown key in a registry": (
        {"r.yaml": "default: x\njudges: []\n" + f"{LONG[:1000]}: 1\n"},
        ["models", "--registry", "r.yaml"],
    ),
    "labels sharing a spelling": ({}, ["score", "hi", "--labels", f"A{LONG},a{LONG}"]),
    "calibrate cell not a number": (
        {"c.csv": f"judge,human\n1,{LONG}\n2,3\n3,3\n"},
        ["calibrate", "agreement", "c.csv", "--no-plots"],
    ),
    "calibrate many long columns": (
        {"c.csv": ",".join(f"{LONG[:500]}{k}" for k in range(60)) + "\n" + "1," * 59 + "1\n"},
        ["calibrate", "agreement", "c.csv", "--no-plots"],
    ),
    "calibrate group id missing": (
        {"c.csv": "judge,human\n1,1\n"},
        ["calibrate", "agreement", "c.csv", "--group-col", LONG, "--no-plots"],
    ),
}


@pytest.mark.parametrize("key", CASES, ids=CASES)
def test_quoted_values_are_cut(fake, key):
    files, args = CASES[key]
    write_files(files)
    line = assert_user_error(run(*args))
    _assert_short(line)


def _assert_short(line: str) -> None:
    assert len(line) <= MAX_LINE, line[:500]
    assert "…" in line, line
    assert max(map(len, re.findall("x+", line))) <= CLIP, line[:500]  # every quoted value is cut


@pytest.mark.parametrize("name", [LONG, LONG[:3000] + "/" + LONG[:3000]], ids=["name", "path-like"])
def test_unknown_judge_name_is_cut(tmp_path, monkeypatch, name):
    """The real loader: a name too long for any file is an unknown judge, not an OSError (exit 1)."""
    monkeypatch.chdir(tmp_path)
    write_files({"d.jsonl": GOOD})
    _assert_short(assert_user_error(run("eval", "d.jsonl", "--metric", "correctness", "--judge", name)))


def test_context_error_cuts_the_case_id(localjudge_scripted, fake):
    short_judge(localjudge_scripted, 3000)
    write_files({"d.jsonl": _row(id=LONG, input="word " * 1000)})
    line = assert_user_error(run("eval", "d.jsonl", "--metric", "correctness"), "--truncate")
    _assert_short(line)


def test_resume_of_another_judges_results_cuts_its_name(localjudge_scripted, fake):
    from localjudge.testing import fake_judge

    localjudge_scripted.add_any(lambda asked: fake_judge(lambda p: {"4": 1.0}, name=LONG))
    write_files({"d.jsonl": GOOD})
    assert run("eval", "d.jsonl", "--metric", "correctness", "--out", "r.jsonl").exit_code == 0
    localjudge_scripted.add_any(lambda asked: fake_judge(lambda p: {"4": 1.0}))
    line = assert_user_error(
        run("eval", "d.jsonl", "--metric", "correctness", "--out", "r.jsonl", "--resume"), "same judge"
    )
    _assert_short(line)


def test_clip_and_repeated():
    assert clip("abc") == "'abc'" and clip(3) == "3"
    cut = clip(LONG)
    assert cut.endswith("…") and len(cut) <= CLIP + 4
    assert len(clip(list(range(10_000)))) <= CLIP + 1
    assert repeated(["b", "a", "b", "a", "c"]) == "'b', 'a'"
    assert len(repeated([LONG, LONG])) <= CLIP + 4
