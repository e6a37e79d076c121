"""Unscored means explained: an unscored record keeps every diagnostic that was computed, the
valid-mass threshold is an option of `evaluate`, `eval`, `score` and `bias` (validated, recorded),
and the summary counts the unscored cases of each metric by reason."""

from __future__ import annotations

import json
import math
import re

import pytest
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.errors import ConfigError
from localjudge.io.cases import TestCase
from localjudge.io.jsonl import dump_line
from localjudge.metrics import builtin_metric
from localjudge.runs.evaluate import evaluate
from localjudge.runs.results_file import read_results
from localjudge.testing import fake_judge


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))


CORRECTNESS = builtin_metric("correctness")
PAIRWISE = builtin_metric("pairwise")
LOW_MASS = "too little of the judge's probability is on valid scores"


def shown(prompt: str, label: str) -> str:
    return re.search(rf"<response_{label}>\n(.*?)\n</response_{label}>", prompt, re.S).group(1)


def pair(i: int, one: str, two: str) -> TestCase:
    return TestCase(id=f"p{i}", input="Write a greeting.", extra={"output_1": one, "output_2": two})


def qa(i: int, **fields) -> TestCase:
    return TestCase(id=f"c{i}", input=f"question {i}", actual_output=f"answer {i}", **fields)


# -- what an unscored record keeps ------------------------------------------------------------------


def test_unscored_pairwise_keeps_both_orders_readings():
    # 5% of the probability on the labels, in both orders: below the default threshold of 0.1
    judge = fake_judge(lambda p: {"A": 0.04, "B": 0.01} if shown(p, "a") == "hello" else {"A": 0.02, "B": 0.03})
    (r,) = evaluate([pair(1, "hello", "hi")], [PAIRWISE], judge, progress=False).records
    assert r.score is None and r.passed is None
    assert r.unscored_reason.startswith(f"pairwise (both orders): {LOW_MASS.replace('scores', 'labels')}")
    assert r.valid_mass == pytest.approx(0.05) and r.min_valid_mass == 0.1
    assert r.prompt_tokens is not None and r.prompt_tokens > 0
    d = r.detail
    assert d.valid_mass_shown_first == pytest.approx(0.05) and d.valid_mass_shown_second == pytest.approx(0.05)
    assert d.p_first_better_shown_first == pytest.approx(0.8)  # A = "hello" = output 1, 0.04 of 0.05
    assert d.p_first_better_shown_second == pytest.approx(0.6)  # B = "hello" = output 1, 0.03 of 0.05
    assert d.disagreement == pytest.approx(0.2) and d.flipped is False
    assert r.distribution == pytest.approx({"output_1": 0.7, "output_2": 0.3})


def test_unscored_pairwise_order_with_no_mass_reads_as_null_and_is_named():
    judge = fake_judge(lambda p: {"A": 0.9} if shown(p, "a") == "first" else {"maybe": 1.0})
    (r,) = evaluate([pair(1, "first", "second")], [PAIRWISE], judge, progress=False).records
    assert r.unscored_reason.startswith("pairwise (output 1 shown second): too little")
    d = r.detail
    assert d.p_first_better_shown_first == pytest.approx(1.0) and d.p_first_better_shown_second is None
    assert d.valid_mass_shown_first == pytest.approx(0.9) and d.valid_mass_shown_second == 0
    assert d.disagreement is None and d.flipped is None and r.distribution is None
    assert r.valid_mass == 0  # the lower of the two orders'
    assert json.loads(dump_line(r))["pairwise"]["p_first_better_shown_second"] is None  # no NaN in the file


def test_unscored_geval_keeps_mass_distribution_tokens_and_threshold():
    judge = fake_judge(lambda p: {"4": 0.03, "5": 0.01})
    (r,) = evaluate([qa(1, expected_output="ref")], [CORRECTNESS], judge, progress=False).records
    assert r.score is None and r.unscored_reason.startswith(LOW_MASS)
    assert r.valid_mass == pytest.approx(0.04) and r.distribution == pytest.approx(
        {"1": 0, "2": 0, "3": 0, "4": 0.75, "5": 0.25}
    )
    assert r.prompt_tokens > 0 and r.min_valid_mass == 0.1


# -- the threshold ------------------------------------------------------------------------------------


def test_min_valid_mass_scores_what_the_default_leaves_unscored_and_is_recorded():
    judge = fake_judge(lambda p: {"A": 0.04, "B": 0.01} if shown(p, "a") == "hello" else {"A": 0.02, "B": 0.03})
    result = evaluate([pair(1, "hello", "hi")], [PAIRWISE], judge, progress=False, min_valid_mass=0.01)
    (r,) = result.records
    assert r.score == pytest.approx(0.7) and r.min_valid_mass == 0.01 and r.unscored_reason is None
    assert result.summaries[0].min_valid_mass == 0.01
    geval = evaluate([qa(1, expected_output="r")], [CORRECTNESS], fake_judge(lambda p: {"4": 0.04}), progress=False,
                     min_valid_mass=0.02)  # fmt: skip
    assert geval.records[0].score == pytest.approx(0.75) and geval.records[0].min_valid_mass == 0.02


def test_min_valid_mass_is_not_recorded_for_kinds_that_read_no_distribution():
    (r,) = evaluate(
        [TestCase(id="x", actual_output="a b", expected_output="a b")],
        [builtin_metric("rouge_l")],
        fake_judge(lambda p: {}),
        progress=False,
    ).records
    assert r.min_valid_mass is None


@pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan])
def test_min_valid_mass_outside_0_1_is_refused_before_any_judging(bad):
    judge = fake_judge(lambda p: {"4": 1.0})
    with pytest.raises(ConfigError, match=r"min_valid_mass .* give one in 0\.\.1"):
        evaluate([qa(1, expected_output="r")], [CORRECTNESS], judge, progress=False, min_valid_mass=bad)
    assert judge.backend.calls == []


def test_resume_with_another_threshold_is_refused_and_older_records_count_as_the_default(tmp_path):
    out = tmp_path / "r.jsonl"
    cases = [qa(i, expected_output="r") for i in range(3)]
    evaluate(cases[:2], [CORRECTNESS], fake_judge(lambda p: {"4": 1.0}), out=out, progress=False)
    with pytest.raises(ConfigError, match=r"min_valid_mass 0\.1 .* not 0\.3; resume with --min-valid-mass 0\.1"):
        evaluate(cases, [CORRECTNESS], fake_judge(lambda p: {"4": 1.0}), out=out, resume=True, progress=False,
                 min_valid_mass=0.3)  # fmt: skip
    # a file written before the threshold was recorded: its records were judged with the default
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    out.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "min_valid_mass"}) + "\n" for r in rows))
    assert all(r.min_valid_mass is None for r in read_results(out))
    evaluate(cases, [CORRECTNESS], fake_judge(lambda p: {"4": 1.0}), out=out, resume=True, progress=False)
    assert len(read_results(out)) == 3


# -- the summary ----------------------------------------------------------------------------------------


def test_summary_counts_unscored_cases_by_reason_per_metric():
    cases = [qa(1, expected_output="r"), qa(2, expected_output="r"), qa(3), qa(4, expected_output="r")]
    judge = fake_judge(lambda p: {"4": 1.0} if "answer 4" in p else {"4": 0.05})
    result = evaluate(cases, [CORRECTNESS, builtin_metric("completeness")], judge, progress=False)
    correctness, completeness = result.summaries
    assert correctness.unscored == 3 and correctness.scored == 1
    reasons = list(correctness.unscored_reasons.items())
    assert reasons[0][0].startswith(LOW_MASS) and reasons[0][1] == 2  # most frequent first
    assert reasons[1] == ("case has no expected_output", 1)
    assert completeness.unscored == 3 and list(completeness.unscored_reasons.values()) == [3]
    assert correctness.min_valid_mass == 0.1


# -- the command line -------------------------------------------------------------------------------


@pytest.fixture
def fake_loader(localjudge_scripted):
    state = {"policy": lambda p: {"4": 0.05}}
    made = []

    def load(asked):
        made.append(fake_judge(state["policy"]))
        return made[-1]

    localjudge_scripted.add_any(load)
    return state, made


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "cases.jsonl"
    rows = [{"id": "a", "input": "q", "actual_output": "x", "expected_output": "y"}, {"id": "b", "input": "q"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_eval_prints_why_cases_are_unscored_and_how_to_change_the_threshold(fake_loader, data):
    result = run("eval", data, "--metric", "correctness", "--no-progress")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "Unscored on correctness: 2 of 2 cases, by reason:" in text
    assert f"  1 × {LOW_MASS}" in text and "  1 × case has no actual_output, expected_output" in text
    assert "--min-valid-mass sets that threshold, 0.1 here" in text


def test_eval_min_valid_mass_option_reaches_the_records_and_the_json_summary(fake_loader, data, tmp_path):
    out = tmp_path / "r.jsonl"
    result = run("eval", data, "--metric", "correctness", "--min-valid-mass", "0.01", "--out", out, "--json",
                 "--no-progress")  # fmt: skip
    assert result.exit_code == 0, result.output
    (summary,) = json.loads(result.stdout)["summaries"]
    assert summary["min_valid_mass"] == 0.01 and summary["unscored_reasons"] == {"case has no actual_output, "
                                                                                 "expected_output": 1}  # fmt: skip
    assert [r.min_valid_mass for r in read_results(out)] == [0.01, 0.01]
    assert read_results(out)[0].score == pytest.approx(0.75)


@pytest.mark.parametrize(
    "command", [["eval", "DATA", "--metric", "correctness"], ["score", "--low", "1", "--high", "5", "x"]]
)
def test_out_of_range_threshold_exits_2_before_the_judge_loads(fake_loader, data, command):
    _, made = fake_loader
    result = run(*[data if c == "DATA" else c for c in command], "--min-valid-mass", "1.5")
    assert result.exit_code == 2 and made == []
    assert "--min-valid-mass: min_valid_mass 1.5 is not a share of probability; give one in 0..1" in result.output


def test_score_min_valid_mass_reads_a_low_mass_prompt_and_says_so(fake_loader):
    low = json.loads(run("score", "--low", "1", "--high", "5", "Score:").stdout.splitlines()[-1])
    assert low["unscored_reason"].startswith(LOW_MASS) and low["min_valid_mass"] == 0.1
    lowered = run("score", "--low", "1", "--high", "5", "--min-valid-mass", "0.01", "Score:")
    out = json.loads(lowered.stdout.splitlines()[-1])
    assert out["unscored_reason"] is None and out["expected"] == pytest.approx(4.0) and out["min_valid_mass"] == 0.01
