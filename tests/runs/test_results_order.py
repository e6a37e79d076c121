"""A finished run's results file lists its records in input order, rewritten atomically; streaming,
resuming and a kill at any point (the rewrite included) keep every record."""

from __future__ import annotations

import json
import os
import stat

import pytest

from localjudge.io.cases import TestCase
from localjudge.metrics import builtin_metric
from localjudge.runs.evaluate import evaluate
from localjudge.testing import fake_judge


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))


CORRECTNESS = builtin_metric("correctness")
COMPLETENESS = builtin_metric("completeness")
METRICS = [CORRECTNESS, COMPLETENESS]


def shuffled_cases() -> list[TestCase]:
    """Cases whose scoring order differs from their input order: the engine groups them by their
    leading fields (zebra after apple), and a case missing a field is settled before any is scored."""
    return [
        TestCase(id="z", input="zebra?", actual_output="stripes", expected_output="stripes"),
        TestCase(id="m", input="mango?", actual_output="sweet"),  # no expected_output: correctness unscored
        TestCase(id="a", input="apple?", actual_output="red", expected_output="red"),
        TestCase(id="k", input="kiwi?", actual_output="green", expected_output="green"),
    ]


def keys(path) -> list[tuple[str, str]]:
    return [(r["case_id"], r["metric"]) for r in map(json.loads, path.read_text().splitlines())]


INPUT_ORDER = [(c, m) for c in "zmak" for m in ("correctness", "completeness")]


def judge():
    return fake_judge(lambda p: {"4": 0.7, "5": 0.3})


def test_finished_file_is_in_input_order_cases_times_metrics(tmp_path):
    out = tmp_path / "r.jsonl"
    result = evaluate(shuffled_cases(), METRICS, judge(), out=out, chunk_size=1, progress=False)
    assert keys(out) == INPUT_ORDER
    assert [(r.case_id, r.metric) for r in result.records] == INPUT_ORDER
    assert [json.loads(line) for line in out.read_text().splitlines()] == [
        r.model_dump(mode="json") for r in result.records
    ]


def test_records_stream_in_scoring_order_while_the_run_goes(tmp_path):
    out = tmp_path / "r.jsonl"
    seen: list[list[tuple[str, str]]] = []

    def policy(prompt):
        seen.append(keys(out) if out.exists() else [])
        return {"4": 1.0}

    evaluate(shuffled_cases(), [CORRECTNESS], fake_judge(policy), out=out, chunk_size=1, progress=False)
    # m (unscored, no model call) is on disk first, then each scored case before the next is judged
    assert seen == [[("m", "correctness")], [("m", "correctness"), ("a", "correctness")],
                    [("m", "correctness"), ("a", "correctness"), ("k", "correctness")]]  # fmt: skip
    assert keys(out) == [(c, "correctness") for c in "zmak"]


def test_killed_then_resumed_run_ends_in_input_order(tmp_path):
    out = tmp_path / "r.jsonl"

    def crashing(prompt):
        if "zebra" in prompt:
            raise RuntimeError("killed")
        return {"4": 1.0}

    with pytest.raises(RuntimeError):
        evaluate(shuffled_cases(), METRICS, fake_judge(crashing), out=out, chunk_size=1, progress=False)
    partial = keys(out)
    assert 0 < len(partial) < len(INPUT_ORDER) and partial != INPUT_ORDER[: len(partial)]  # scoring order
    again = judge()
    evaluate(shuffled_cases(), METRICS, again, out=out, resume=True, chunk_size=1, progress=False)
    assert len(again.backend.calls) == len(INPUT_ORDER) - len(partial)  # nothing judged twice
    assert keys(out) == INPUT_ORDER


def test_a_kill_during_the_rewrite_keeps_every_record(tmp_path, monkeypatch):
    out = tmp_path / "r.jsonl"

    def interrupted(src, dst):
        raise KeyboardInterrupt  # Ctrl-C between writing the ordered copy and renaming it

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        evaluate(shuffled_cases(), METRICS, judge(), out=out, chunk_size=1, progress=False)
    assert sorted(keys(out)) == sorted(INPUT_ORDER)  # every record, still in scoring order
    assert not list(tmp_path.glob(".*.tmp"))  # the ordered copy is removed
    monkeypatch.undo()
    again = judge()
    evaluate(shuffled_cases(), METRICS, again, out=out, resume=True, progress=False)
    assert again.backend.calls == [] and keys(out) == INPUT_ORDER


def test_resume_with_other_cases_keeps_the_rest_after_them(tmp_path):
    out = tmp_path / "r.jsonl"
    evaluate(shuffled_cases(), METRICS, judge(), out=out, progress=False)
    k, z = shuffled_cases()[3], shuffled_cases()[0]
    evaluate([k, z], [COMPLETENESS], judge(), out=out, resume=True, progress=False)
    asked = [("k", "completeness"), ("z", "completeness")]
    assert keys(out) == asked + [x for x in INPUT_ORDER if x not in asked]


def test_rewrite_keeps_permissions_and_symlinks(tmp_path):
    real = tmp_path / "real.jsonl"
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    evaluate(shuffled_cases()[:1], METRICS, judge(), out=link, progress=False)
    os.chmod(real, 0o640)
    evaluate(shuffled_cases(), METRICS, judge(), out=link, resume=True, progress=False)
    assert link.is_symlink() and keys(real) == INPUT_ORDER
    assert stat.S_IMODE(real.stat().st_mode) == 0o640


def test_printed_table_follows_input_order(localjudge_scripted, tmp_path):
    from click.testing import CliRunner

    from localjudge.cli import main

    localjudge_scripted.add_any(lambda asked: judge())
    data = tmp_path / "cases.jsonl"
    data.write_text(
        "".join(json.dumps(c.model_dump(exclude_none=True, exclude={"extra"})) + "\n" for c in shuffled_cases())
    )
    out = tmp_path / "r.jsonl"
    args = [
        "eval",
        str(data),
        "--metric",
        "correctness",
        "--metric",
        "completeness",
        "--out",
        str(out),
        "--no-progress",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    rows = [line.split()[:2] for line in result.stdout.splitlines()[2 : 2 + len(INPUT_ORDER)]]
    assert [tuple(r) for r in rows] == INPUT_ORDER == keys(out)
