"""Pairwise results read as a comparison: the preference for output 1, how much the two
presentation orders disagree, output 1's win rate, and no pass/fail unless the metric sets a threshold."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.io.cases import TestCase
from localjudge.kinds.comparison import preference
from localjudge.metrics import builtin_metric
from localjudge.runs.evaluate import evaluate
from localjudge.testing import fake_judge

PAIRWISE = builtin_metric("pairwise")


def shown(prompt: str, label: str) -> str:
    return re.search(rf"<response_{label}>\n(.*?)\n</response_{label}>", prompt, re.S).group(1)


def pair(i: int, one: str, two: str) -> TestCase:
    return TestCase(id=f"p{i}", input="Write a greeting.", extra={"output_1": one, "output_2": two})


def by_content(prompt: str) -> dict[str, float]:
    """Prefers the longer response by 0.8 to 0.2, plus 0.1 for whatever is shown first."""
    a, b = shown(prompt, "a"), shown(prompt, "b")
    p = 0.5 if len(a) == len(b) else (0.8 if len(a) > len(b) else 0.2)
    p = min(1.0, p + 0.1)
    return {"A": p, "B": 1 - p}


PAIRS = [pair(1, "Hello there!", "Hi."), pair(2, "Hey.", "Good morning!"), pair(3, "Howdy", "Hiya!")]


def test_summary_reports_win_rate_disagreement_and_flips_not_a_pass_rate():
    result = evaluate(PAIRS, [PAIRWISE], fake_judge(by_content), progress=False)
    p1, p2, p3 = result.records
    # P(output 1 better) per order: p1 0.9 and 0.7; p2 0.3 and 0.1; p3 (a draw on content) 0.6 and 0.4
    assert p1.score == pytest.approx(0.8) and p2.score == pytest.approx(0.2) and p3.score == pytest.approx(0.5)
    assert all(r.passed is None and r.threshold is None for r in result.records)
    (s,) = result.summaries
    assert s.kind == "pairwise" and s.pass_rate is None
    assert s.detail.win_rate == pytest.approx((1 + 0 + 0.5) / 3)  # p3 is an exact draw: half a win
    assert s.mean_score == pytest.approx(0.5)  # the mean preference for output 1
    assert s.detail.mean_disagreement == pytest.approx(0.2)
    assert s.detail.flipped == 1  # p3: A wins in both orders, so the preferred output flips


def test_a_threshold_in_the_metric_brings_pass_fail_back():
    strict = builtin_metric("pairwise", threshold=0.7)
    result = evaluate(PAIRS, [strict], fake_judge(by_content), progress=False)
    assert [r.passed for r in result.records] == [True, False, False]
    assert result.summaries[0].pass_rate == pytest.approx(1 / 3) and result.summaries[0].detail.win_rate is not None


@pytest.mark.parametrize(
    "dist, expected",
    [
        ({"output_1": 0.6, "output_2": 0.4}, 1.0),
        ({"output_1": 0.4, "output_2": 0.6}, 0.0),
        ({"output_1": 0.5, "output_2": 0.5}, 0.5),
        ({"output_1": 0.3, "output_2": 0.1, "tie": 0.6}, 0.5),
        ({"output_1": 0.45, "output_2": 0.1, "tie": 0.45}, 0.5),
    ],
)
def test_preference_counts_ties_and_draws_half(dist, expected):
    assert preference(dist, ("output_1", "output_2")) == expected


def test_many_flips_get_a_note():
    first = fake_judge(lambda p: {"A": 0.9, "B": 0.1})  # always prefers what is shown first
    (s,) = evaluate(PAIRS, [PAIRWISE], first, progress=False).summaries
    assert s.detail.flipped == 3
    assert any("changes with the presentation order in 3 of 3 cases" in n for n in s.notes)


@pytest.fixture
def data(localjudge_scripted, tmp_path):
    localjudge_scripted.add_any(lambda asked: fake_judge(by_content))
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps({"id": c.id, "input": c.input, **c.extra}) + "\n" for c in PAIRS))
    return path


def test_eval_prints_a_comparison_without_fail_marks(data):
    result = CliRunner().invoke(main, ["eval", str(data), "--metric", "pairwise", "--no-progress"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "FAIL" not in text and "pass" not in text.split("\n\n")[0]
    rows = [line.split() for line in text.splitlines()[2:5]]
    assert [row[-2:] for row in rows] == [["output_1", "better"], ["output_2", "better"], ["0.500", "tie"]]
    summary = next(line for line in text.splitlines() if line.startswith("pairwise  "))
    assert summary.split()[3] == "-"  # no pass rate
    assert (
        "pairwise: output 1 wins 50.0% of 3 comparisons (ties count half), mean P(output 1 better) 0.500; "
        "the two presentation orders differ by 0.200 on average and flip the preferred output in 1 of 3 cases."
    ) in text
