"""`rank_outputs` and `localjudge rank` with the scripted fake judge: a planted ranking is recovered."""

from __future__ import annotations

import json
import math
import re

import pytest
from click.testing import CliRunner

import localjudge
import localjudge.judges.loading
from localjudge.cli import main
from localjudge.errors import ConfigError, DataError
from localjudge.io.cases import TestCase
from localjudge.metrics import builtin_metric
from localjudge.rank import RankOptions, comparisons_path, rank_outputs, read_ranks
from localjudge.runs.results_file import read_results
from localjudge.testing import fake_judge

QUALITY = re.compile(r"quality (\d+)")


def planted(prompt: str) -> dict[str, float]:
    """P(A better) = σ((q_A − q_B)/2): response A comes first in the prompt, each states its quality."""
    qa, qb = (int(q) for q in QUALITY.findall(prompt))
    p = 1 / (1 + math.exp(-(qa - qb) / 2))
    return {"A": p, "B": 1 - p}


def cases(groups: int = 3, n: int = 6) -> list[TestCase]:
    # the planted quality is not the input order
    out = []
    for g in range(groups):
        for k in range(n):
            q = (g - k) % n  # a permutation of 0..n-1, another for each group
            out.append(
                TestCase(
                    id=f"g{g}-o{k}",
                    input=f"question {g}",
                    actual_output=f"an answer of quality {q}",
                    extra={"doc": f"d{g}", "model": f"m{q}", "human": q},
                )
            )
    return out


def test_a_planted_ranking_is_recovered_within_the_budget(tmp_path):
    judge = fake_judge(planted)
    out = tmp_path / "ranks.jsonl"
    result = rank_outputs(cases(), builtin_metric("pairwise"), judge, RankOptions(group="doc", budget=3), out=out)
    assert [r.case_id for r in result.records] == [c.id for c in cases()]  # input order
    for r in result.records:
        quality = r.extra["human"]
        assert r.rank == 6 - quality  # quality 5 ranks first
        assert r.score_low <= r.score <= r.score_high and r.rank_low <= r.rank <= r.rank_high
        assert 0 < r.score < 1 and r.group_size == 6
    # the budget: ceil(3·6/2) = 9 of the 15 pairs per group, each judged in both orders
    assert result.summary.comparisons == 27 and len(judge.backend.calls) == 54
    assert result.summary.comparisons_per_output == pytest.approx(3.0)
    assert result.summary.mean_disagreement == pytest.approx(0.0) and result.summary.flipped_share == 0.0
    # each output's comparisons are kept in its record, and every comparison in the comparisons file
    first = result.records[0]
    assert sum(len(r.comparisons) for r in result.records) == 54
    cmp = {r.case_id: r for r in read_results(comparisons_path(out))}
    assert len(cmp) == 27 and all(c.comparison in cmp for c in first.comparisons)
    one = first.comparisons[0]
    rec = cmp[one.comparison]
    p1 = rec.score
    assert one.p_better == pytest.approx(p1 if rec.case_id.startswith(first.case_id + "|") else 1 - p1)
    assert [r.model_dump() for r in read_ranks(out)] == [r.model_dump() for r in result.records]


def test_soft_wins_set_the_scores():
    # two outputs: the score is the fitted P(beats the other), the judge's 0.7 shrunk a hair by the prior
    judge = fake_judge(
        lambda p: {"A": 0.7, "B": 0.3} if p.index("quality 1") < p.index("quality 0") else {"A": 0.3, "B": 0.7}
    )
    two = cases(groups=1, n=2)
    result = rank_outputs(two, builtin_metric("pairwise"), judge, RankOptions(group="doc"))
    best = next(r for r in result.records if r.rank == 1)
    assert best.extra["human"] == 1 and best.score == pytest.approx(0.7, abs=0.01)


def test_a_rerun_resumes_and_a_larger_budget_only_adds(tmp_path):
    out = tmp_path / "ranks.jsonl"
    first_judge = fake_judge(planted)
    first = rank_outputs(cases(), builtin_metric("pairwise"), first_judge, RankOptions(group="doc", budget=2), out=out)
    again = fake_judge(planted)
    same = rank_outputs(
        cases(), builtin_metric("pairwise"), again, RankOptions(group="doc", budget=2), out=out, resume=True
    )
    assert again.backend.calls == []  # every comparison read back from the file
    assert [r.model_dump() for r in same.records] == [r.model_dump() for r in first.records]
    more_judge = fake_judge(planted)
    more = rank_outputs(
        cases(), builtin_metric("pairwise"), more_judge, RankOptions(group="doc", budget=4), out=out, resume=True
    )
    before = {r.case_id for r in first.comparisons}
    after = {r.case_id for r in more.comparisons}
    assert before < after and len(more_judge.backend.calls) == 2 * len(after - before)
    # the rounds replay the same choices: the ranks are those of a run from scratch at budget 4
    scratch = rank_outputs(
        cases(), builtin_metric("pairwise"), fake_judge(planted), RankOptions(group="doc", budget=4), progress=False
    )
    assert [r.model_dump() for r in scratch.records] == [r.model_dump() for r in more.records]
    with pytest.raises(ConfigError, match="--resume"):
        rank_outputs(cases(), builtin_metric("pairwise"), fake_judge(planted), RankOptions(group="doc"), out=out)


def test_unscored_comparisons_leave_an_output_unscored_with_its_reason():
    # output quality 0 gets no valid mass: both its comparisons are unscored, the others rank
    judge = fake_judge(lambda p: {} if "quality 0" in p else planted(p))
    result = rank_outputs(cases(groups=1, n=4), builtin_metric("pairwise"), judge, RankOptions(group="doc", budget=2))
    lost = next(r for r in result.records if r.extra["human"] == 0)
    assert lost.score is None and lost.rank is None and "none of its 2 comparisons was scored" in lost.unscored_reason
    assert sorted(r.rank for r in result.records if r.score is not None) == [1, 2, 3]
    assert all(r.group_size == 3 for r in result.records)


def test_bad_groups_are_refused_before_any_judging():
    judge = fake_judge(planted)
    mixed = [
        *cases(groups=1, n=2),
        TestCase(id="x", input="another question", actual_output="quality 1", extra={"doc": "d0"}),
    ]
    with pytest.raises(DataError, match="different inputs"):
        rank_outputs(mixed, builtin_metric("pairwise"), judge, RankOptions(group="doc"))
    with pytest.raises(DataError, match="has no 'nope'"):
        rank_outputs(cases(), builtin_metric("pairwise"), judge, RankOptions(group="nope"))
    with pytest.raises(ConfigError, match="does not compare two outputs"):
        rank_outputs(cases(), builtin_metric("correctness"), judge, RankOptions(group="doc"))
    assert judge.backend.calls == []


def test_the_package_root_exports_the_api():
    assert localjudge.rank_outputs is rank_outputs and localjudge.RankOptions is RankOptions


@pytest.fixture
def judges(localjudge_scripted, monkeypatch, tmp_path):
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))
    localjudge_scripted.add_any(lambda asked: fake_judge(planted))


def write_cases(path, rows):
    path.write_text(
        "".join(json.dumps(c.model_dump(exclude={"extra"}) | c.extra) + "\n" for c in rows), encoding="utf-8"
    )
    return path


def test_cli_ranks_outputs_and_systems_and_calibrate_reads_the_file(judges, tmp_path):
    data = write_cases(tmp_path / "cases.jsonl", cases(groups=4, n=5))
    out = tmp_path / "ranks.jsonl"
    args = ["rank", data, "--metric", "pairwise", "--group", "doc", "--budget", "2", "--system", "model"]
    result = CliRunner().invoke(main, [str(a) for a in [*args, "--out", out, "--no-progress", "--json"]])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert [s["system"] for s in summary["systems"]] == ["m4", "m3", "m2", "m1", "m0"]
    assert summary["systems"][0]["rank"] == 1 and summary["comparisons"] == 4 * 5
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(r["rank"] == 5 - r["extra"]["human"] for r in records)
    # calibrate reads the rank file as it reads eval's: the score field against the human field
    cal = CliRunner().invoke(
        main,
        ["calibrate", "agreement", str(out), "--human", "human", "--judge-field", "score", "--group", "doc", "--json"],
    )
    assert cal.exit_code == 0, cal.output
    report = json.loads(cal.stdout)
    assert report["input"]["kind"] == "results" and report["n_scored"] == 20
    assert report["summary"]["correlations"]["spearman"]["value"] == pytest.approx(1.0)
    # a second run without --resume is refused; with it, nothing is judged again
    again = CliRunner().invoke(main, [str(a) for a in [*args, "--out", out, "--no-progress"]])
    assert again.exit_code == 2 and "--resume" in again.output
    resumed = CliRunner().invoke(main, [str(a) for a in [*args, "--out", out, "--no-progress", "--resume"]])
    assert resumed.exit_code == 0, resumed.output
    assert "20 outputs in 4 groups: 20 ranked; 20 comparisons (0 unscored)" in resumed.stdout
    assert "m4" in resumed.stdout.split("Systems")[1].splitlines()[3]
    assert "follows position" not in resumed.output


def test_cli_warns_when_the_judge_follows_position(localjudge_scripted, tmp_path):
    # prefers whichever output is shown first, a little more when it is the better one (as the 0.5B judge did)
    def first(prompt: str) -> dict[str, float]:
        p = 0.75 + (planted(prompt)["A"] - 0.5) / 10
        return {"A": p, "B": 1 - p}

    localjudge_scripted.add_any(lambda asked: fake_judge(first))
    data = write_cases(tmp_path / "cases.jsonl", cases(groups=2, n=4))
    args = ["rank", data, "--metric", "pairwise", "--group", "doc", "--out", tmp_path / "r.jsonl", "--no-progress"]
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    assert "warning: in 100% of comparisons the judge's preference flipped" in result.stderr
    summary = json.loads(CliRunner().invoke(main, [str(a) for a in [*args, "--resume", "--json"]]).stdout)
    assert summary["flipped_share"] == 1.0
    # the scores still follow the small content signal: both orders averaged cancel the position
    assert [r.rank for r in read_ranks(tmp_path / "r.jsonl")] == [4 - c.extra["human"] for c in cases(groups=2, n=4)]
