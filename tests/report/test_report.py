"""The report's figures are the records' own and the library's own (calibrate, the bootstrap); the page is one file."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import policy_a

from localjudge.calibration import calibrate
from localjudge.cli import main
from localjudge.errors import DataError
from localjudge.report import ReportOptions, read_run, write_report
from localjudge.runs.results_file import read_results
from localjudge.testing import fake_judge


def page_data(html: str) -> dict:
    embedded = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    assert embedded is not None
    return json.loads(embedded.group(1))


def test_summaries_are_the_records_own(runs, tmp_path):
    report = write_report([runs.a, runs.b], tmp_path / "r.html", ReportOptions(n_bootstrap=200))
    records = read_results(runs.a)
    by = {(g.metric, g.judge): g for g in report.groups}
    correctness = by[("correctness", "judge-a")]
    scores = [r.score for r in records if r.metric == "correctness" and r.score is not None]
    assert correctness.n == 12 and correctness.scored == len(scores) == 11
    assert correctness.mean == pytest.approx(np.mean(scores))
    assert correctness.ci is not None and correctness.ci[0] < correctness.mean < correctness.ci[1]
    assert correctness.outcomes == ["1", "2", "3", "4", "5"]
    assert sum(correctness.histogram.counts) == 11
    faithfulness = by[("faithfulness", "judge-a")]
    reasons = faithfulness.unscored_reasons
    assert sum(reasons.values()) == 4 and len(reasons) == 2  # 3 without passages, 1 with too little valid mass
    assert any("retrieval_context" in why and n == 3 for why, n in reasons.items()), reasons
    assert report.records == 36


def test_the_agreement_is_calibrates_own_on_the_same_pairs(runs, tmp_path):
    report = write_report([runs.a], tmp_path / "r.html", ReportOptions(n_bootstrap=300))
    found = next(a for a in report.agreements if a.metric == "correctness")
    assert found.human_field == "human_correctness" and found.judge_field == "raw_score"
    records = [r for r in read_results(runs.a) if r.metric == "correctness"]
    own = calibrate([r.raw_score for r in records], [r.extra["human_correctness"] for r in records], n_bootstrap=300)
    assert found.report is not None
    assert found.report.dataset == own.dataset and found.report.readiness == own.readiness
    assert found.report.n_unscored == 1 and "NOT READY" in found.text


def test_two_judges_side_by_side_largest_difference_first(runs, tmp_path):
    report = write_report([runs.a, runs.b], tmp_path / "r.html", ReportOptions(n_bootstrap=0))
    (pair,) = report.comparisons
    assert (pair.metric, pair.judge_a, pair.judge_b, pair.shared, pair.both_scored) == (
        "correctness",
        "judge-a",
        "judge-b",
        12,
        11,
    )
    gaps = [abs(a - b) for _, a, b in pair.largest]
    assert gaps == sorted(gaps, reverse=True) and gaps[0] > gaps[-1]


def test_the_page_holds_everything_and_asks_for_nothing(runs, tmp_path):
    out = tmp_path / "r.html"
    write_report([runs.a, runs.b], out, ReportOptions(n_bootstrap=0))
    html = out.read_text(encoding="utf-8")
    assert "default-src 'none'" in html  # the policy forbids every request
    assert not re.search(r"https?://|<link\b|<script[^>]*\bsrc=|<img\b", html)
    data = page_data(html)
    assert sorted(data["cases"]) == runs.ids and len(data["rows"]["case"]) == 36
    unscored = [k for k, s in enumerate(data["rows"]["score"]) if s is None]
    assert len(unscored) == 1 + 4 and all(data["rows"]["reason"][k] >= 0 for k in unscored)


def test_text_that_would_end_the_script_stays_data(tmp_path):
    case = {"id": "x</script><b>", "input": "q", "actual_output": "reply-1-end", "expected_output": "</script>"}
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(case) + "\n", encoding="utf-8")
    from localjudge import builtin_metric, evaluate, load_cases

    judge = fake_judge(policy_a, name="judge-a")
    evaluate(load_cases(cases), [builtin_metric("correctness")], judge, out=tmp_path / "a.jsonl", progress=False)
    write_report([tmp_path / "a.jsonl"], tmp_path / "r.html", ReportOptions(n_bootstrap=0), load_cases(cases))
    data = page_data((tmp_path / "r.html").read_text(encoding="utf-8"))
    assert data["cases"] == ["x</script><b>"] and data["fields"][0]["expected_output"] == "</script>"


def test_one_run_given_twice_is_refused(runs, tmp_path):
    with pytest.raises(DataError, match="case 'case-00' is judged by judge-a on correctness again"):
        write_report([runs.a, runs.a], tmp_path / "r.html")


def test_one_judge_in_two_files_is_two_columns(runs, tmp_path):
    copy = tmp_path / "a_again.jsonl"
    copy.write_bytes(runs.a.read_bytes())
    report = write_report([runs.a, copy], tmp_path / "r.html", ReportOptions(n_bootstrap=0))
    assert {g.judge for g in report.groups} == {"judge-a · a", "judge-a · a_again"}
    assert {(c.judge_a, c.judge_b) for c in report.comparisons} == {("judge-a · a", "judge-a · a_again")}


def test_a_file_that_is_not_results_is_refused(runs, tmp_path):
    with pytest.raises(DataError, match="none of the keys of eval, panel or rank records"):
        read_run(runs.cases)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_report_command_writes_and_keeps_an_existing_page(runs, tmp_path):
    out = tmp_path / "page.html"
    done = run("report", runs.a, runs.b, "--cases", runs.cases, "--out", out, "--n-bootstrap", "0")
    assert done.exit_code == 0, done.output
    assert f"report: {out} (36 records; 3 metric and judge pairs, 2 against human scores, 1 judge" in done.output
    data = page_data(out.read_text(encoding="utf-8"))
    assert data["fields"][data["cases"].index("case-03")]["input"] == "Question 3?"  # --cases' fields
    again = run("report", runs.a, "--out", out)
    assert again.exit_code == 2 and "pass --overwrite" in again.output
    assert run("report", runs.a, "--out", out, "--overwrite", "--n-bootstrap", "0").exit_code == 0


def test_eval_writes_the_page_of_its_run(runs, tmp_path, localjudge_scripted):
    localjudge_scripted.add("judge-a", fake_judge(policy_a, name="judge-a"))
    localjudge_scripted.add("judge-b", fake_judge(policy_a, name="judge-b"))
    page = tmp_path / "run.html"
    done = run("eval", runs.cases, "--metric", "correctness", "--judge", "judge-a", "--no-progress", "--report", page)
    assert done.exit_code == 0, done.output
    data = page_data(page.read_text(encoding="utf-8"))
    assert len(data["rows"]["case"]) == 12 and data["fields"][0]["input"] == "Question 0?"
    refused = run("eval", runs.cases, "--metric", "correctness", "--judge", "judge-a", "--report", page)
    assert refused.exit_code == 2 and "pass --overwrite" in refused.output

    panel, panel_page = tmp_path / "panel.jsonl", tmp_path / "panel.html"
    args = ["eval", runs.cases, "--metric", "correctness", "--judge", "judge-a", "--judge", "judge-b", "--no-progress"]
    assert "give --out too" in run(*args, "--report", panel_page).output
    done = run(*args, "--panel", "mean", "--out", panel, "--report", panel_page)
    assert done.exit_code == 0, done.output
    judges = {g["judge"] for g in page_data(panel_page.read_text(encoding="utf-8"))["groups"]}
    assert judges == {"panel (mean): judge-a+judge-b", "judge-a", "judge-b"}
