"""The DeepEval adapter on the embedded SmolLM2 judge, with every network connection refused.

A DeepEval test file written as DeepEval's docs write one (examples/deepeval/test_chatbot.py)
passes under pytest and under DeepEval's own runner, `deepeval test run`. The pytest run and the
score check share one load of the judge (`shared_judge`); the runner is a process of its own.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from deepeval.test_case import LLMTestCase

from localjudge import builtin_metric, evaluate
from localjudge.integrations.deepeval import LocalJudgeMetric, shared_judge, to_test_case

pytestmark = pytest.mark.slow
pytest_plugins = ["pytester"]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "deepeval" / "test_chatbot.py"


@pytest.fixture
def attempts(monkeypatch, tmp_path) -> list[object]:
    """Refuses every connection and DNS lookup, and lists what tried; steps cache and cwd in tmp_path."""
    tried: list[object] = []

    def refuse(*args, **kwargs):
        tried.append(args[1:2] or args[:1])
        raise OSError("no network in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return tried


@pytest.fixture(scope="module")
def judge():
    """The example's judge, loaded before the in-process pytest run: pytester drops the modules a run
    imports when it ends, and torch imported inside it would be imported a second time (a crash)."""
    return shared_judge("smollm2-135m")


def test_docs_style_file_passes_under_pytest(pytester: pytest.Pytester, judge, attempts):
    path = pytester.makepyfile(test_chatbot=EXAMPLE.read_text(encoding="utf-8"))
    result = pytester.runpytest_inprocess(str(path), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert attempts == []


def test_docs_style_file_passes_under_deepeval_test_run(tmp_path, offline_env):
    # a process of its own, as a user runs it (it loads the judge a second time); nothing reaches
    # the network from the interpreter's start, before the CLI imports deepeval
    (tmp_path / "test_chatbot.py").write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    # the CLI imports deepeval before the test file imports the adapter: opt out as the README says
    env = {**offline_env, "DEEPEVAL_TELEMETRY_OPT_OUT": "1"}
    deepeval = Path(sys.executable).parent / "deepeval"
    out = subprocess.run(
        [str(deepeval), "test", "run", "test_chatbot.py"], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    assert "Pass Rate: 100.0% | Passed: 2 | Failed: 0" in out.stdout
    assert (tmp_path / "attempts.txt").read_text() == ""


def test_score_is_localjudges_own_on_the_real_judge(judge, attempts):
    case = LLMTestCase(input="Capital of France?", actual_output="Paris.", expected_output="Paris")
    metric = LocalJudgeMetric("correctness", judge=judge)
    metric.measure(case)
    record = evaluate([to_test_case(case)], [builtin_metric("correctness")], judge, progress=False).records[0]
    assert record.score is not None and metric.score == record.score  # the same number, not a re-derivation
    b = metric.score_breakdown
    assert sum(b["distribution"].values()) == pytest.approx(1.0)
    assert 0.1 <= b["valid_mass"] <= 1 and b["expected"] == pytest.approx(1 + 4 * metric.score)
    assert attempts == []
