"""Evaluation runs with the scripted fake judge: records, summaries, streaming, resume, provenance,
the RAG triad's unscored cases, pairwise judging in both orders, and the pytest helpers."""

from __future__ import annotations

import json
import logging
import math
import re

import pytest

from localjudge import __version__
from localjudge.errors import ConfigError, ContextLengthError, DataError
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds.text import PLAIN_TEMPLATE_VERSION, TEMPLATE_VERSION
from localjudge.metrics import builtin_metric
from localjudge.metrics.spec import metric_from_dict
from localjudge.runs.evaluate import evaluate
from localjudge.runs.results_file import read_results
from localjudge.testing import FakeBackend, fake_judge
from localjudge.testing.assertions import assert_fails, assert_passes


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))


CORRECTNESS = builtin_metric("correctness")
FAITHFULNESS = builtin_metric("faithfulness")


def cases(n: int = 5) -> list[TestCase]:
    # equal lengths, so the longest-first scheduling keeps input order
    return [
        TestCase(
            id=f"c{i}",
            input=f"question-{i}",
            actual_output=f"answer-{i}",
            expected_output=f"ref-{i}",
            retrieval_context=[f"passage-{i}"],
        )
        for i in range(1, n + 1)
    ]


def by_answer(table: dict[str, dict[str, float]], default: dict[str, float] | None = None):
    """A policy whose outcome depends on which answer-N the prompt shows."""

    def policy(prompt: str) -> dict[str, float]:
        for key, outcome in table.items():
            if key in prompt:
                return outcome
        return default if default is not None else {"4": 1.0}

    return policy


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# -- the result object ----------------------------------------------------------------------------


def test_result_records_and_summaries():
    policy = by_answer(
        {
            "answer-1": {"5": 0.6, " 4": 0.2},  # valid mass 0.8
            "answer-2": {"1": 1.0},
            "answer-3": {"zzz": 1.0},  # no mass on valid scores: unscored, never 0
        }
    )
    result = evaluate(cases(4), [CORRECTNESS], fake_judge(policy), progress=False)
    assert [r.case_id for r in result.records] == ["c1", "c2", "c3", "c4"]
    r1, r2, r3, r4 = result.records
    assert r1.distribution == pytest.approx({"1": 0, "2": 0, "3": 0, "4": 0.25, "5": 0.75})
    assert r1.raw_score == pytest.approx(4.75) and r1.score == pytest.approx(0.9375)
    assert r1.valid_mass == pytest.approx(0.8) and r1.mode == "5" and r1.passed is True
    assert r1.std == pytest.approx(math.sqrt(0.1875)) and r1.unscored_reason is None
    assert (r2.score, r2.raw_score, r2.passed) == (0.0, 1.0, False)
    assert r3.score is None and r3.raw_score is None and r3.passed is None and r3.distribution is None
    assert "valid scores" in r3.unscored_reason and r3.valid_mass == 0
    assert r4.score == pytest.approx(0.75)
    (s,) = result.summaries
    assert (s.metric, s.n, s.scored, s.unscored) == ("correctness", 4, 3, 1)
    assert s.mean_score == pytest.approx((0.9375 + 0 + 0.75) / 3)  # the unscored case is left out
    assert s.pass_rate == pytest.approx(2 / 3)
    assert s.mean_valid_mass == pytest.approx((0.8 + 1 + 0 + 1) / 4)
    assert result.get("c2", "correctness") is r2
    with pytest.raises(KeyError):
        result.get("c9", "correctness")


def test_distribution_sums_to_one_and_score_in_range():
    policy = by_answer({"answer-2": {"2": 0.1, "3": 0.3, "5": 0.2}}, {"1": 0.5, "10": 0.5})
    for r in evaluate(cases(3), [CORRECTNESS], fake_judge(policy), progress=False).records:
        assert sum(r.distribution.values()) == pytest.approx(1)
        assert 0 <= r.score <= 1


@pytest.mark.parametrize(
    "low, high, outcome, raw, normalized",
    [
        (1, 5, "4", 4, 0.75),
        (0, 10, "7", 7, 0.7),
        (0, 10, "10", 10, 1.0),
        (0, 10, "0", 0, 0.0),
        (0, 100, "35", 35, 0.35),
        (0, 100, "100", 100, 1.0),
        (1, 3, "2", 2, 0.5),
        (1, 3, "3", 3, 1.0),
    ],
)
def test_scales_normalise_from_their_low_end(low, high, outcome, raw, normalized):
    m = metric_from_dict(
        {
            "name": "m",
            "task": "t",
            "criteria": "c",
            "steps": ["s"],
            "fields": ["actual_output"],
            "low": low,
            "high": high,
        }
    )
    (r,) = evaluate(cases(1), [m], fake_judge(lambda p: {outcome: 1.0}), progress=False).records
    assert r.raw_score == pytest.approx(raw) and r.score == pytest.approx(normalized)
    assert r.distribution[outcome] == pytest.approx(1.0)
    if outcome == "10":
        assert r.distribution["1"] == 0  # "10" is never read as a 1


def test_single_point_rubric_scores_without_division_by_zero():
    m = metric_from_dict(
        {
            "name": "m",
            "task": "t",
            "criteria": "c",
            "steps": ["s"],
            "fields": ["actual_output"],
            "rubric": [{"low": s, "high": s, "description": f"level {s}"} for s in range(1, 6)],
        }
    )
    (r,) = evaluate(cases(1), [m], fake_judge(lambda p: {"3": 1.0}), progress=False).records
    assert r.score == 0.5


def test_rubric_gaps_are_logged(caplog):
    m = metric_from_dict(
        {
            "name": "gappy",
            "task": "t",
            "criteria": "c",
            "steps": ["s"],
            "fields": ["actual_output"],
            "rubric": [{"low": 1, "high": 2, "description": "bad"}, {"low": 5, "high": 5, "description": "good"}],
        }
    )
    with caplog.at_level(logging.WARNING, logger="localjudge"):
        evaluate(cases(1), [m], fake_judge(lambda p: {"3": 1.0}), progress=False)
    assert "gappy" in caplog.text and "[3, 4]" in caplog.text


def test_repeated_names_and_ids_are_refused():
    judge = fake_judge(lambda p: {"3": 1.0})
    with pytest.raises(ConfigError, match="metric names repeated"):
        evaluate(cases(1), [CORRECTNESS, CORRECTNESS], judge, progress=False)
    with pytest.raises(ConfigError, match="case ids repeated"):
        evaluate(cases(1) * 2, [CORRECTNESS], judge, progress=False)


def test_missing_required_field_is_unscored_without_a_model_call():
    judge = fake_judge(lambda p: {"5": 1.0})
    case = cases(1)[0].model_copy(update={"expected_output": None})
    (r,) = evaluate([case], [CORRECTNESS], judge, progress=False).records
    assert r.score is None and r.unscored_reason == "case has no expected_output"
    assert judge.backend.calls == []


# -- the RAG triad --------------------------------------------------------------------------------


def test_faithfulness_without_retrieval_context_is_null_not_zero():
    judge = fake_judge(lambda p: {"1": 1.0})
    no_ctx = cases(2)[1].model_copy(update={"retrieval_context": None})
    result = evaluate([cases(1)[0], no_ctx], [FAITHFULNESS, builtin_metric("answer_relevance")], judge, progress=False)
    faith = result.get("c2", "faithfulness")
    assert faith.score is None and faith.passed is None and faith.raw_score is None
    assert faith.unscored_reason == "case has no retrieval_context"
    assert result.get("c1", "faithfulness").score == 0.0  # the judged case really scored 0
    assert result.get("c2", "answer_relevance").score == 0.0  # needs no context
    summary = result.summaries[0]
    assert (summary.unscored, summary.mean_score) == (1, 0.0)
    assert len(judge.backend.calls) == 3


def test_context_relevance_reads_the_passages():
    judge = fake_judge(lambda p: {"5": 1.0} if "[1] passage-1" in p else {})
    (r,) = evaluate(cases(1), [builtin_metric("context_relevance")], judge, progress=False).records
    assert r.score == 1.0


# -- streaming and resuming -----------------------------------------------------------------------


def test_results_stream_to_the_file_as_chunks_finish(tmp_path):
    out = tmp_path / "r.jsonl"

    def policy(prompt):
        if "answer-3" in prompt:
            raise RuntimeError("judge crashed")
        return {"4": 1.0}

    with pytest.raises(RuntimeError, match="judge crashed"):
        evaluate(cases(5), [CORRECTNESS], fake_judge(policy), out=out, chunk_size=1, progress=False)
    assert [rec["case_id"] for rec in lines(out)] == ["c1", "c2"]


def test_resume_continues_without_redoing_or_duplicating(tmp_path):
    out = tmp_path / "r.jsonl"

    def policy(prompt):
        if "answer-4" in prompt:
            raise RuntimeError("killed")
        return {"4": 1.0}

    with pytest.raises(RuntimeError):
        evaluate(cases(5), [CORRECTNESS, FAITHFULNESS], fake_judge(policy), out=out, chunk_size=2, progress=False)
    done_before = {(r["case_id"], r["metric"]) for r in lines(out)}
    assert done_before == {("c1", "correctness"), ("c2", "correctness")}
    judge = fake_judge(lambda p: {"4": 1.0})
    result = evaluate(cases(5), [CORRECTNESS, FAITHFULNESS], judge, out=out, resume=True, chunk_size=2, progress=False)
    assert len(judge.backend.calls) == 10 - 2
    keys = [(r["case_id"], r["metric"]) for r in lines(out)]
    assert len(keys) == len(set(keys)) == 10
    assert len(result.records) == 10 and all(r.score == 0.75 for r in result.records)

    again = fake_judge(lambda p: {"4": 1.0})
    evaluate(cases(5), [CORRECTNESS, FAITHFULNESS], again, out=out, resume=True, progress=False)
    assert again.backend.calls == [] and len(lines(out)) == 10


def test_resume_result_equals_uninterrupted_run(tmp_path):
    policy = by_answer({"answer-2": {"2": 0.5, "3": 0.5}, "answer-5": {"5": 0.7, "1": 0.3}})
    full = evaluate(cases(5), [CORRECTNESS], fake_judge(policy), out=tmp_path / "full.jsonl", progress=False)
    part = tmp_path / "part.jsonl"
    part.write_text("".join(line + "\n" for line in (tmp_path / "full.jsonl").read_text().splitlines()[:2]))
    resumed = evaluate(cases(5), [CORRECTNESS], fake_judge(policy), out=part, resume=True, progress=False)
    assert resumed == full
    assert sorted(lines(part), key=lambda r: r["case_id"]) == lines(tmp_path / "full.jsonl")


def test_torn_last_line_is_repaired(tmp_path):
    out = tmp_path / "r.jsonl"
    evaluate(cases(4), [CORRECTNESS], fake_judge(lambda p: {"4": 1.0}), out=out, progress=False)
    text = out.read_text()
    keep = text.splitlines(keepends=True)
    out.write_text("".join(keep[:2]) + keep[2][: len(keep[2]) // 2])  # killed mid-write
    assert [r.case_id for r in read_results(out)] == ["c1", "c2"]
    judge = fake_judge(lambda p: {"4": 1.0})
    evaluate(cases(4), [CORRECTNESS], judge, out=out, resume=True, progress=False)
    assert len(judge.backend.calls) == 2
    assert sorted(r["case_id"] for r in lines(out)) == ["c1", "c2", "c3", "c4"]  # every line parses


def test_corrupt_middle_line_is_an_error(tmp_path):
    out = tmp_path / "r.jsonl"
    out.write_text('{"not": "a record"}\n')
    with pytest.raises(DataError, match=r"r\.jsonl:1: not a localjudge result record"):
        evaluate(cases(1), [CORRECTNESS], fake_judge(lambda p: {"4": 1.0}), out=out, resume=True, progress=False)


@pytest.mark.parametrize("other", [{"name": "other-judge"}, {"provenance": "sha256:feed"}])
def test_resuming_with_a_different_judge_is_refused(tmp_path, other):
    out = tmp_path / "r.jsonl"
    evaluate(cases(2), [CORRECTNESS], fake_judge(lambda p: {"4": 1.0}), out=out, progress=False)
    base = fake_judge(lambda p: {"4": 1.0})
    judge = Judge(FakeBackend(lambda p: {"4": 1.0}), base.info.model_copy(update=other))
    with pytest.raises(ConfigError, match="resume with the same judge"):
        evaluate(cases(3), [CORRECTNESS], judge, out=out, resume=True, progress=False)
    assert judge.backend.calls == [] and len(lines(out)) == 2


def test_existing_out_needs_resume_or_overwrite(tmp_path):
    out = tmp_path / "r.jsonl"
    evaluate(cases(2), [CORRECTNESS], fake_judge(lambda p: {"4": 1.0}), out=out, progress=False)
    with pytest.raises(ConfigError, match=r"--resume .* --overwrite"):
        evaluate(cases(2), [CORRECTNESS], fake_judge(lambda p: {"4": 1.0}), out=out, progress=False)
    evaluate(cases(1), [CORRECTNESS], fake_judge(lambda p: {"2": 1.0}), out=out, overwrite=True, progress=False)
    assert [(r["case_id"], r["score"]) for r in lines(out)] == [("c1", 0.25)]


# -- determinism and provenance -------------------------------------------------------------------


def test_two_runs_are_identical(tmp_path):
    policy = by_answer({"answer-1": {"3": 0.3, "4": 0.7}, "answer-2": {"1": 0.2, "5": 0.5}})
    metrics = [CORRECTNESS, FAITHFULNESS, builtin_metric("coherence", reasoning="before")]
    a = evaluate(
        cases(3), metrics, fake_judge(policy, lambda p: "Looks fine."), out=tmp_path / "a.jsonl", progress=False
    )
    b = evaluate(
        cases(3), metrics, fake_judge(policy, lambda p: "Looks fine."), out=tmp_path / "b.jsonl", progress=False
    )
    assert a == b
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_results_do_not_change_with_chunk_size():
    policy = by_answer({"answer-1": {"3": 0.3, "4": 0.7}, "answer-3": {"1": 0.2, "5": 0.5}})
    runs = [evaluate(cases(5), [CORRECTNESS], fake_judge(policy), chunk_size=k, progress=False) for k in (1, 2, 64)]
    assert runs[0] == runs[1] == runs[2]


def test_every_line_carries_distribution_and_provenance(tmp_path):
    out = tmp_path / "r.jsonl"
    evaluate(
        cases(2),
        [CORRECTNESS, builtin_metric("pairwise")],
        fake_judge(lambda p: {"4": 1.0, "A": 1.0}),
        out=out,
        progress=False,
    )
    recs = lines(out)
    assert len(recs) == 4
    for rec in recs:
        assert rec["judge"] == {
            "name": "fake",
            "family": "fake",
            "source": "fake",
            "provenance": "fake",
            "dtype": "float32",
            "device": "cpu",
            "chat_template": True,
            "context_length": 100_000,
            "tree_tolerance": 1e-6,
        }
        assert rec["template_version"] == TEMPLATE_VERSION and rec["localjudge_version"] == __version__
        assert "valid_mass" in rec and "distribution" in rec
    geval = [r for r in recs if r["metric"] == "correctness"]
    for rec in geval:
        assert rec["distribution"] == {"1": 0.0, "2": 0.0, "3": 0.0, "4": 1.0, "5": 0.0}
        assert rec["metric_spec"] == {**CORRECTNESS.model_dump(mode="json")}
        assert rec["steps_source"] == "pinned"


def test_plain_template_is_recorded(tmp_path):
    (r,) = evaluate(cases(1), [CORRECTNESS], fake_judge(lambda p: {"4": 1.0}), hardened=False, progress=False).records
    assert r.template_version == PLAIN_TEMPLATE_VERSION


def test_over_long_prompt_fails_or_is_truncated_and_recorded():
    base = fake_judge(lambda p: {"4": 1.0})
    judge = Judge(FakeBackend(lambda p: {"4": 1.0}), base.info.model_copy(update={"context_length": 2500}))
    long = cases(1)[0].model_copy(update={"actual_output": "word " * 1000})
    with pytest.raises(ContextLengthError, match="--truncate"):
        evaluate([long], [CORRECTNESS], judge, progress=False)
    (r,) = evaluate([long], [CORRECTNESS], judge, truncate=True, progress=False).records
    assert r.score == 0.75 and r.truncated.startswith("actual_output cut from 5000 to ")
    assert r.prompt_tokens <= 2500


# -- pairwise -------------------------------------------------------------------------------------

PAIRWISE = builtin_metric("pairwise")


def pair(i: int, one: str, two: str) -> TestCase:
    return TestCase(id=f"p{i}", input="Write a greeting.", extra={"output_1": one, "output_2": two})


def shown(prompt: str, label: str) -> str:
    return re.search(rf"<response_{label}>\n(.*?)\n</response_{label}>", prompt, re.S).group(1)


def test_pairwise_position_bias_is_exposed():
    judge = fake_judge(lambda p: {"A": 0.9, "B": 0.1})  # always prefers whatever is shown first
    (r,) = evaluate([pair(1, "Hello there!", "Hi.")], [PAIRWISE], judge, progress=False).records
    assert r.score == pytest.approx(0.5)
    assert r.detail.flipped is True
    assert r.detail.disagreement == pytest.approx(0.8)
    assert r.detail.p_first_better_shown_first == pytest.approx(0.9)
    assert r.detail.p_first_better_shown_second == pytest.approx(0.1)
    assert r.raw_score is None and r.distribution == pytest.approx({"output_1": 0.5, "output_2": 0.5})
    # judged in both orders
    first, second = judge.backend.calls
    assert (shown(first, "a"), shown(first, "b")) == ("Hello there!", "Hi.")
    assert (shown(second, "a"), shown(second, "b")) == ("Hi.", "Hello there!")
    assert first.endswith("Better response:")


def keyword_policy(prompt: str) -> dict[str, float]:
    return {"A": 0.8, " B": 0.2} if "KEYWORD" in shown(prompt, "a") else {"A": 0.2, " B": 0.8}


@pytest.mark.parametrize("one, two, expected", [("has KEYWORD", "plain", 0.8), ("plain", "has KEYWORD", 0.2)])
def test_pairwise_content_preference_is_order_free(one, two, expected):
    (r,) = evaluate([pair(1, one, two)], [PAIRWISE], fake_judge(keyword_policy), progress=False).records
    assert r.score == pytest.approx(expected)
    assert r.detail.flipped is False and r.detail.disagreement == pytest.approx(0)
    assert r.passed is None and r.threshold is None  # a comparison, not a pass mark
    assert r.mode == ("output_1" if expected > 0.5 else "output_2")


def test_pairwise_allow_tie():
    judge = fake_judge(lambda p: {"A": 0.3, "B": 0.1, "Tie": 0.6} if "answer Tie" in p else {"A": 1.0})
    m = builtin_metric("pairwise", allow_tie=True)
    (r,) = evaluate([pair(1, "x", "y")], [m], judge, progress=False).records
    assert r.detail.p_tie == pytest.approx(0.6)
    assert r.distribution == pytest.approx({"output_1": 0.2, "output_2": 0.2, "tie": 0.6})
    assert r.mode == "tie" and r.score == pytest.approx(0.2)


def test_pairwise_unscored():
    judge = fake_judge(lambda p: {"A": 0.9} if shown(p, "a") == "first" else {"maybe": 1.0})  # one order fails
    result = evaluate(
        [pair(1, "first", "second"), TestCase(id="p2", extra={"output_1": "only one"})],
        [PAIRWISE],
        judge,
        progress=False,
    )
    low_mass, missing = result.records
    assert low_mass.score is None
    assert low_mass.unscored_reason.startswith("pairwise (output 1 shown second): too little")
    assert missing.score is None and missing.unscored_reason == "case has no output_2"


# -- pytest helpers -------------------------------------------------------------------------------

CASE = {"id": "q1", "input": "2+2?", "actual_output": "4", "expected_output": "4"}


def test_assert_passes_returns_the_record():
    rec = assert_passes(CASE, "correctness", fake_judge(lambda p: {"5": 0.8, "4": 0.2}))
    assert rec.score == pytest.approx(0.95) and rec.case_id == "q1"
    assert assert_fails(TestCase(**CASE), CORRECTNESS, fake_judge(lambda p: {"1": 1.0})).score == 0


def test_assert_passes_failure_message():
    with pytest.raises(AssertionError) as info:
        assert_passes(CASE, CORRECTNESS, fake_judge(lambda p: {"2": 0.7, "1": 0.3}))
    msg = str(info.value)
    assert "expected a pass" in msg and "score 0.175" in msg and "threshold 0.5" in msg
    assert "2: 0.70, 1: 0.30" in msg and "mode 2" in msg and "raw 1.70" in msg


def test_assert_fails_failure_message():
    with pytest.raises(AssertionError, match=r"expected a failure: correctness on case 'q1': score 1\.000"):
        assert_fails(CASE, CORRECTNESS, fake_judge(lambda p: {"5": 1.0}))


def test_unscored_fails_both_assertions_with_the_reason():
    for check in (assert_passes, assert_fails):
        with pytest.raises(AssertionError, match=r"unscored \(case has no expected_output\)"):
            check({"input": "q", "actual_output": "a"}, CORRECTNESS, fake_judge(lambda p: {"5": 1.0}))
        with pytest.raises(AssertionError, match=r"unscored .*valid scores"):
            check(CASE, CORRECTNESS, fake_judge(lambda p: {"x": 1.0}))


def test_threshold_override():
    judge = fake_judge(lambda p: {"4": 1.0})  # score 0.75
    assert_passes(CASE, CORRECTNESS, judge, threshold=0.75)
    with pytest.raises(AssertionError, match=re.escape("threshold 0.8")):
        assert_passes(CASE, CORRECTNESS, judge, threshold=0.8)
    assert_fails(CASE, CORRECTNESS, judge, threshold=0.8)


def test_helpers_work_with_pairwise():
    assert_passes(pair(1, "has KEYWORD", "plain"), PAIRWISE, fake_judge(keyword_policy))
    assert_fails(pair(1, "plain", "has KEYWORD"), PAIRWISE, fake_judge(keyword_policy))
