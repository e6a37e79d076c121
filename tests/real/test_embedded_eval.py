"""End-to-end evaluation with the real embedded SmolLM2-135M judge: determinism, generated steps,
provenance, and a CLI run killed mid-way and resumed."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from localjudge.io.cases import load_cases
from localjudge.judges.judge import Judge
from localjudge.judges.registry import load_registry
from localjudge.metrics import builtin_metric
from localjudge.runs.evaluate import evaluate
from localjudge.weights.hashes import sha256_file
from localjudge.weights.sources import package_gguf_path

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "localjudge" / "examples" / "rag_demo.jsonl"
METRICS = [builtin_metric("correctness"), builtin_metric("faithfulness")]


@pytest.fixture(scope="module")
def cases():
    return load_cases(DEMO)[:3]


@pytest.fixture(scope="module")
def two_runs(smollm_judge, cases):
    return [evaluate(cases, METRICS, smollm_judge, progress=False) for _ in range(2)]


def test_two_runs_give_identical_scores(two_runs):
    first, second = two_runs
    assert [(r.case_id, r.metric, r.score, r.distribution) for r in first.records] == [
        (r.case_id, r.metric, r.score, r.distribution) for r in second.records
    ]
    assert first == second
    assert all(r.score is not None for r in first.records), [r.unscored_reason for r in first.records]


def test_records_carry_distribution_and_file_hash(two_runs):
    entry = load_registry().get("smollm2-135m")
    sha = sha256_file(package_gguf_path(entry.source))
    for r in two_runs[0].records:
        assert sum(r.distribution.values()) == pytest.approx(1.0, abs=1e-9)
        assert set(r.distribution) == {"1", "2", "3", "4", "5"}
        assert 0 < r.valid_mass <= 1 + 1e-9 and 0 <= r.score <= 1
        assert r.raw_score == pytest.approx(sum(int(k) * p for k, p in r.distribution.items()))
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", r.judge["provenance"])
        assert r.judge["provenance"] == f"sha256:{sha}"
        assert (r.judge["name"], r.judge["dtype"], r.judge["device"]) == ("smollm2-135m", "float32", "cpu")
        assert r.metric_spec["steps"] and r.steps_source == "pinned"


def test_generated_steps_are_one_yardstick(smollm_judge, cases, tmp_path, monkeypatch):
    # 48 tokens write five steps (SmolLM2 writes eight in 200, 24 s of single-row decoding here); what is
    # checked is that one set of generated steps is kept, shared and found again, not how long it is
    monkeypatch.setattr("localjudge.kinds.geval.steps.STEPS_MAX_TOKENS", 48)
    metric = METRICS[0].model_copy(update={"steps": None})
    cases = cases[:2]  # one set of steps for both: a second case shows it; a third only costs time
    first = evaluate(cases, [metric], smollm_judge, steps_cache=tmp_path, progress=False)
    steps = first.records[0].metric_spec["steps"]
    assert steps and all(isinstance(s, str) and s for s in steps)
    assert all(r.metric_spec["steps"] == steps for r in first.records)
    assert {r.steps_source for r in first.records} == {"generated"}
    assert len(list(tmp_path.glob("*.json"))) == 1
    # a fresh judge object, as a new process would have, finds the same steps on disk
    fresh = Judge(smollm_judge.backend, smollm_judge.info)
    second = evaluate(cases[1:], [metric], fresh, steps_cache=tmp_path, progress=False)  # one case shows it
    assert [r.metric_spec["steps"] for r in second.records] == [steps]
    assert [r.steps_source for r in second.records] == ["cache"]
    assert [r.score for r in second.records] == [r.score for r in first.records[1:]]


def _cli(data: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "localjudge",
        "eval",
        str(data),
        "--metric",
        "correctness",
        "--metric",
        "faithfulness",
        "--judge",  # named: without it, G-Eval metrics pick a larger judge when one is installed
        "smollm2-135m",
        "--out",
        str(out),
        "--no-progress",
        "--device",
        "cpu",
        "--dtype",
        "float32",
        *extra,
    ]


def _records(path: Path) -> list[tuple[str, str, float]]:
    # rounded: a resumed chunk may batch (pad) differently, which moves fp32 sums in the last bits
    return [(r["case_id"], r["metric"], round(r["score"], 6)) for r in map(json.loads, path.read_text().splitlines())]


def test_cli_killed_and_resumed_matches_uninterrupted_run(two_runs, tmp_path):
    # two cases: each process pays its imports and load (~5 s) and the kill needs one case scored
    # after it; a third case only added scoring time to both runs
    data = tmp_path / "two.jsonl"
    data.write_text("".join(DEMO.read_text(encoding="utf-8").splitlines(keepends=True)[:2]), encoding="utf-8")
    # the user's prepared-weights cache, as a user's CLI runs would (the session's judge filled it):
    # a private cache made both processes pay a cold load, ~20 s each, for nothing this test checks
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    run = dict(cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    # the uninterrupted run: the same two cases and metrics, in this process with the same judge,
    # device and dtype as the CLI's
    ids = {c.id for c in load_cases(data)}
    want = [(r.case_id, r.metric, round(r.score, 6)) for r in two_runs[0].records if r.case_id in ids]

    # two metrics: correctness is written as one chunk, so the kill lands while faithfulness is scored
    part = tmp_path / "part.jsonl"
    proc = subprocess.Popen(_cli(data, part), **run)
    try:
        deadline = time.monotonic() + 600
        while not (part.exists() and part.read_bytes().count(b"\n") >= 1):
            assert proc.poll() is None, f"finished before it could be killed: {proc.stderr.read()[-2000:]}"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.kill()
    finally:
        proc.wait()
    killed_at = part.read_bytes().count(b"\n")
    assert 1 <= killed_at < 4, "the kill should land mid-run"

    resumed = subprocess.run(_cli(data, part, "--resume"), timeout=600, **run)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    got = _records(part)
    assert len(got) == len(set((c, m) for c, m, _ in got)) == len(want) == 4  # no duplicates, nothing missing
    assert set(got) == set(want)
    assert all(s is not None and not math.isnan(s) for _, _, s in got)


def test_cli_likelihood_metrics_on_deepeval_file(localjudge_scripted, smollm_judge, tmp_path):
    """`localjudge eval cases.jsonl --metric likelihood --out r.jsonl` on the real default judge."""
    from click.testing import CliRunner

    from localjudge.cli import main
    from localjudge.runs.results_file import read_results

    localjudge_scripted.add_any(smollm_judge)
    out = tmp_path / "r.jsonl"
    result = CliRunner().invoke(
        main,
        [
            "eval",
            str(DEMO),
            "--metric",
            "likelihood",
            "--metric",
            "faithfulness_pmi",
            "--out",
            str(out),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    recs = read_results(out)
    assert len(recs) == 20 and all(r.score is not None and r.kind == "likelihood" for r in recs)
    for r in recs:
        assert r.raw_score == pytest.approx(
            r.detail.given_source.mean - (r.detail.without_source.mean if r.detail.without_source else 0.0)
        )
        assert r.judge["provenance"].startswith("sha256:") and r.detail.n_tokens > 0
    assert "Note on likelihood" in result.stdout  # ranks, not pass/fail judgments
