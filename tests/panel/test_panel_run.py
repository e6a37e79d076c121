"""`evaluate_panel` with scripted fake judges: a panel's reading equals its members' readings pooled by hand."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

import localjudge
from localjudge.cli import main
from localjudge.errors import ConfigError
from localjudge.io.cases import TestCase
from localjudge.metrics import builtin_metric
from localjudge.panel import (
    PanelOptions,
    PanelWeights,
    evaluate_panel,
    fit_panel_weights,
    load_panel_weights,
    member_path,
)
from localjudge.panel.records import PANEL_RECORDS
from localjudge.panel.weights import fitted_weights
from localjudge.runs import evaluate
from localjudge.testing import fake_judge


def cases(n: int = 6) -> list[TestCase]:
    return [
        TestCase(
            id=f"c{i}",
            input=f"question-{i}",
            actual_output=f"a{i}",
            expected_output=f"e{i}",
            extra={"output_1": f"x{i}", "output_2": f"y{i}", "human": i},
        )
        for i in range(n)
    ]


def case_number(prompt: str) -> int:
    return int(re.search(r"question-(\d)", prompt).group(1))


def grader(bias: float, slope: float, name: str):
    """A fake judge whose 1–5 score follows the case number: P(5) rises with it."""

    def policy(prompt: str) -> dict[str, float]:
        k = case_number(prompt)
        p5 = min(max(bias + slope * k, 0.0), 1.0)
        return {"5": p5, "1": 1 - p5, "A": p5, "B": 1 - p5}

    return fake_judge(policy, name=name)


def test_a_panel_reading_is_its_members_readings_pooled_by_hand(tmp_path):
    judges = [grader(0.1, 0.15, "j1"), grader(0.3, 0.05, "j2"), grader(0.9, -0.1, "j3")]
    metric = builtin_metric("correctness")
    out = tmp_path / "panel.jsonl"
    result = evaluate_panel(cases(), [metric], judges, out=out)
    alone = [
        evaluate(cases(), [metric], grader(b, s, n))
        for b, s, n in ((0.1, 0.15, "j1"), (0.3, 0.05, "j2"), (0.9, -0.1, "j3"))
    ]
    for k, rec in enumerate(result.records):
        member_scores = [a.records[k].score for a in alone]
        assert rec.score == pytest.approx(np.mean(member_scores))
        assert rec.raw_score == pytest.approx(np.mean([a.records[k].raw_score for a in alone]))
        assert [m.score for m in rec.members] == pytest.approx(member_scores)  # every member's reading kept
        assert rec.spread == pytest.approx(max(member_scores) - min(member_scores))
        assert rec.distribution["5"] == pytest.approx(np.mean([a.records[k].distribution["5"] for a in alone]))
    # every member's own records are kept beside the panel's, and the panel file reads back
    assert all(member_path(out, n).exists() for n in ("j1", "j2", "j3"))
    assert [r.model_dump() for r in PANEL_RECORDS.read(out)] == [r.model_dump() for r in result.records]
    summary = result.summaries[0]
    assert [m.judge for m in summary.members] == ["j1", "j2", "j3"]
    assert any("j3 does not follow the panel" in n for n in summary.notes)  # it scores the cases backwards


def test_agreement_weights_pool_by_hand(tmp_path):
    judges = [grader(0.1, 0.15, "j1"), grader(0.2, 0.12, "j2"), grader(0.9, -0.1, "j3")]
    result = evaluate_panel(cases(), [builtin_metric("correctness")], judges, PanelOptions(method="agreement"))
    w = np.array([m.weight for m in result.summaries[0].members])
    assert w[2] == 0 and w.sum() == pytest.approx(1)  # the member against the others gets nothing
    for rec in result.records:
        assert rec.score == pytest.approx(float(np.array([m.score for m in rec.members]) @ w))


def test_a_pairwise_panel_pools_probabilities_before_deciding():
    # j1 prefers output 1 a little (0.55), j2 prefers output 2 strongly (0.2): pooled 0.375, output 2 wins,
    # though a vote of the members' decisions would be a draw
    j1 = fake_judge(
        lambda p: {"A": 0.55, "B": 0.45} if "x" in p.split("Response A")[1][:40] else {"A": 0.45, "B": 0.55}, name="j1"
    )
    j2 = fake_judge(
        lambda p: {"A": 0.2, "B": 0.8} if "x" in p.split("Response A")[1][:40] else {"A": 0.8, "B": 0.2}, name="j2"
    )
    result = evaluate_panel(cases(2), [builtin_metric("pairwise")], [j1, j2])
    for rec in result.records:
        assert rec.score == pytest.approx((0.55 + 0.2) / 2)
        assert rec.distribution == pytest.approx({"output_1": 0.375, "output_2": 0.625})
        assert rec.mode == "output_2"


def test_fitted_weights_from_a_file(tmp_path):
    judges = [grader(0.1, 0.15, "j1"), grader(0.3, 0.05, "j2")]
    weights = PanelWeights(
        members=["j2", "j1"], weights={"correctness": [0.25, 0.75]}, human="human", n_items={"correctness": 6},
        source="x", localjudge_version="0",
    )  # fmt: skip
    result = evaluate_panel(
        cases(), [builtin_metric("correctness")], judges, PanelOptions(method="fitted", weights=weights)
    )
    for rec in result.records:
        assert rec.score == pytest.approx(0.75 * rec.members[0].score + 0.25 * rec.members[1].score)
    with pytest.raises(ConfigError, match="not j1, j3"):
        evaluate_panel(cases(), [builtin_metric("correctness")], [judges[0], grader(0, 0, "j3")],
                       PanelOptions(method="fitted", weights=weights))  # fmt: skip


def test_an_unscored_member_leaves_the_case_unscored_and_says_who():
    silent = fake_judge(lambda p: {} if "question-1" in p else {"5": 1.0}, name="silent")
    result = evaluate_panel(cases(3), [builtin_metric("correctness")], [grader(0.1, 0.1, "j1"), silent])
    lost = result.records[1]
    assert lost.score is None and lost.unscored_reason.startswith("panel member silent left it unscored")
    assert lost.members[0].score is not None  # the other member's reading is kept
    assert result.summaries[0].scored == 2


def test_a_quorum_pools_the_members_that_scored_with_their_weights_renormalised():
    silent = fake_judge(lambda p: {} if "question-1" in p else {"5": 1.0}, name="silent")
    judges = [grader(0.1, 0.1, "j1"), silent, grader(0.5, 0.0, "j3")]
    full = evaluate_panel(cases(3), [builtin_metric("correctness")], judges)
    two = evaluate_panel(cases(3), [builtin_metric("correctness")], judges, PanelOptions(quorum=2))
    lost = two.records[1]  # silent left it unscored: j1 and j3 pooled, each at 1/2
    j1, _, j3 = (m.score for m in lost.members)
    assert lost.score == pytest.approx((j1 + j3) / 2) and lost.pooled == 2 and lost.unscored_reason is None
    assert [m.weight for m in lost.members] == pytest.approx([0.5, 0.0, 0.5])
    assert lost.spread == pytest.approx(abs(j1 - j3))
    # a case every member scored is pooled exactly as without a quorum, to the bit
    for k in (0, 2):
        assert two.records[k].score == full.records[k].score and two.records[k].pooled == 3
    summary = two.summaries[0]
    assert (summary.scored, summary.partial) == (3, 1) and any("fewer than all 3 members" in n for n in summary.notes)
    # a quorum the case does not reach leaves it unscored, and says so
    three = evaluate_panel(cases(3), [builtin_metric("correctness")], judges, PanelOptions(quorum=3))
    assert three.records[1].score is None and three.records[1].pooled == 0
    assert three.records[1].unscored_reason.startswith("2 of 3 members scored it, fewer than the quorum 3")
    with pytest.raises(ConfigError, match="--quorum 4 needs as many judges"):
        evaluate_panel(cases(3), [builtin_metric("correctness")], judges, PanelOptions(quorum=4))


def test_disagreeing_members_are_flagged_in_the_summary():
    hi = fake_judge(lambda p: {"5": 1.0}, name="hi")
    lo = fake_judge(lambda p: {"1": 1.0}, name="lo")
    summary = evaluate_panel(cases(4), [builtin_metric("correctness")], [hi, lo]).summaries[0]
    assert summary.disagreed == 4 and summary.mean_spread == pytest.approx(1.0)
    assert any("the members disagree" in n for n in summary.notes)


def test_a_panel_needs_two_distinct_judges():
    with pytest.raises(ConfigError, match="twice or more"):
        evaluate_panel(cases(), [builtin_metric("correctness")], [grader(0, 0, "a")])
    with pytest.raises(ConfigError, match="given twice"):
        evaluate_panel(cases(), [builtin_metric("correctness")], [grader(0, 0, "a"), grader(0, 0, "a")])
    assert localjudge.evaluate_panel is evaluate_panel


@pytest.fixture
def scripted(localjudge_scripted, monkeypatch, tmp_path):
    """load_judge returns the fake judge registered under the name asked for."""

    made = {"j1": (0.1, 0.15), "j2": (0.3, 0.05), "j3": (0.9, -0.1)}
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))
    localjudge_scripted.add_any(lambda asked: grader(*made[asked.name], asked.name))


def write_cases(path, rows):
    lines = [json.dumps(c.model_dump(exclude={"extra"}, exclude_none=True) | c.extra) for c in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_eval_with_several_judges_pools_them(scripted, tmp_path):
    data = write_cases(tmp_path / "cases.jsonl", cases())
    out = tmp_path / "panel.jsonl"
    args = ["eval", data, "--metric", "correctness", "--judge", "j1", "--judge", "j2", "--out", out, "--no-progress"]
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    assert "correctness (mean of 2 judges)" in result.stdout
    records = [json.loads(line) for line in out.read_text().splitlines()]
    alone = [json.loads(line) for line in member_path(out, "j1").read_text().splitlines()]
    other = [json.loads(line) for line in member_path(out, "j2").read_text().splitlines()]
    for r, a, b in zip(records, alone, other, strict=True):
        assert r["score"] == pytest.approx((a["score"] + b["score"]) / 2)
        assert [m["judge"] for m in r["members"]] == ["j1", "j2"]
    # calibrate fits weights on the labels, and eval pools with them
    weights = tmp_path / "weights.json"
    cal = CliRunner().invoke(main, ["calibrate", "panel-weights", str(out), "--human", "human", "--save", str(weights)])
    assert cal.exit_code == 0, cal.output
    saved = load_panel_weights(weights)
    assert saved.members == ["j1", "j2"] and sum(saved.weights["correctness"]) == pytest.approx(1)
    fitted_out = tmp_path / "fitted.jsonl"
    args = [*args[:-3], "--panel", weights, "--out", fitted_out, "--no-progress", "--json"]
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    members = json.loads(result.stdout)["summaries"][0]["members"]
    assert [m["weight"] for m in members] == pytest.approx(saved.weights["correctness"])
    first = json.loads(fitted_out.read_text().splitlines()[0])
    w = saved.weights["correctness"]
    assert first["score"] == pytest.approx(w[0] * first["members"][0]["score"] + w[1] * first["members"][1]["score"])


def test_panel_option_errors(scripted, tmp_path):
    data = write_cases(tmp_path / "cases.jsonl", cases())
    one = CliRunner().invoke(main, ["eval", str(data), "--metric", "correctness", "--judge", "j1", "--panel", "mean"])
    assert one.exit_code == 2 and "twice or more" in one.output
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    res = CliRunner().invoke(main, ["eval", str(data), "--metric", "correctness", "--judge", "j1", "--judge", "j2",
                                    "--panel", str(bad)])  # fmt: skip
    assert res.exit_code == 2 and "not a panel weights file" in res.output
    res = CliRunner().invoke(main, ["eval", str(data), "--metric", "correctness", "--judge", "j1", "--quorum", "1"])
    assert res.exit_code == 2 and "twice or more" in res.output
    res = CliRunner().invoke(main, ["eval", str(data), "--metric", "correctness", "--judge", "j1", "--judge", "j2",
                                    "--quorum", "3"])  # fmt: skip
    assert res.exit_code == 2 and "--quorum 3 needs as many judges" in res.output


def test_eval_and_score_take_a_quorum(localjudge_scripted, monkeypatch, tmp_path):

    silent = fake_judge(lambda p: {} if "question-1" in p else {"5": 1.0, "A": 1.0}, name="silent")
    made = {"j1": grader(0.1, 0.15, "j1"), "silent": silent}
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))
    localjudge_scripted.add_any(lambda asked: made[asked.name])
    data = write_cases(tmp_path / "cases.jsonl", cases(3))
    out = tmp_path / "panel.jsonl"
    args = ["eval", str(data), "--metric", "correctness", "--judge", "j1", "--judge", "silent", "--quorum", "1",
            "--out", str(out), "--no-progress"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["pooled"] for r in records] == [2, 1, 2]
    assert records[1]["score"] == records[1]["members"][0]["score"]  # j1 alone
    assert "pooled from fewer than all 2 members" in result.stdout
    scored = CliRunner().invoke(
        main, ["score", "question-1 Score:", "--low", "1", "--high", "5", "--judge", "j1", "--judge", "silent",
               "--quorum", "1"],
    )  # fmt: skip
    assert scored.exit_code == 0, scored.output
    row = json.loads(scored.stdout)
    assert row["score"] == pytest.approx(row["members"][0]["normalized"])
    assert [m["weight"] for m in row["members"]] == [1.0, 0.0]


def test_score_with_a_panel(scripted):
    result = CliRunner().invoke(
        main, ["score", "question-1 Score:", "question-4 Score:", "--low", "1", "--high", "5", "--judge", "j1",
               "--judge", "j2"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    for row in rows:
        assert row["score"] == pytest.approx(np.mean([m["normalized"] for m in row["members"]]))
        assert [m["judge"] for m in row["members"]] == ["j1", "j2"]


def test_fit_panel_weights_saves_the_fit_on_every_label_and_reports_the_held_out_rest(tmp_path):
    judges = [grader(0.1, 0.15, "j1"), grader(0.3, 0.05, "j2"), grader(0.9, -0.1, "j3")]
    out = tmp_path / "panel.jsonl"
    records = evaluate_panel(cases(), [builtin_metric("correctness")], judges, out=out).records
    fit = fit_panel_weights(out, "human", split=0.5, seed=0)
    scores = np.array([[m.score for m in r.members] for r in records])  # (6, 3)
    by_hand = fitted_weights(scores, np.array([float(r.extra["human"]) for r in records]))
    (e,) = fit.metrics
    assert fit.weights.members == ["j1", "j2", "j3"] and fit.weights.n_items == {"correctness": 6}
    assert fit.weights.weights["correctness"] == e.saved_weights == pytest.approx(by_hand.weights.tolist())
    assert e.held_out == 3 and e.equal_because is None  # half the six cases fit, the other half report
    assert list(e.spearman) == ["member j1", "member j2", "member j3", "mean panel", "agreement panel", "fitted panel"]
    assert e.spearman["member j1"] == pytest.approx(1.0)  # j1's P(5) rises with the case number, as the labels do
    assert list(e.report()) == ["metric", "held_out", "spearman", "saved_weights"]
    two = tmp_path / "two.jsonl"
    two.write_text("".join(out.read_text(encoding="utf-8").splitlines(keepends=True)[:2]), encoding="utf-8")
    (few,) = fit_panel_weights(two, "human").metrics
    assert few.saved_weights == pytest.approx([1 / 3] * 3) and "fewer than 3" in few.equal_because
    with pytest.raises(ConfigError, match="no metric 'relevance'"):
        fit_panel_weights(out, "human", metric="relevance")
