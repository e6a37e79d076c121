"""Faults: kills, Ctrl-C, torn lines, corrupt caches and out-of-memory lose or duplicate nothing.

The kill tests run `python -m localjudge eval` in a subprocess on a tiny random-weight Llama
saved as a local model directory (safetensors + a byte-level BPE tokenizer with a chat
template), kill it with SIGKILL at seeded random moments, resume it, and compare the final
records with an uninterrupted run's.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from localjudge import Judge
from localjudge.engine.options import EngineOptions
from localjudge.errors import ConfigError, DataError
from localjudge.io.cases import TestCase
from localjudge.kinds.geval.steps import cache_dir, resolve_steps, steps_key
from localjudge.metrics import GEvalMetric
from localjudge.runs.evaluate import evaluate
from localjudge.runs.options import RunOptions
from localjudge.runs.results_file import read_results
from localjudge.testing import fake_judge
from localjudge.testing.tiny_models import tiny_info, tiny_llama

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
METRICS = {
    "m5.yaml": "name: five\ntask: Judge the answer.\ncriteria: Is it right?\nsteps: [Compare with the reference.]\n"
    "fields: [input, actual_output, expected_output]\nlow: 1\nhigh: 5\n",
    "m10.yaml": "name: ten\ntask: Rate the answer.\ncriteria: Is it helpful?\nsteps: [Read it.]\n"
    "fields: [input, actual_output]\nlow: 0\nhigh: 10\n",
}
WORDS = "the answer is good bad score rating quality fluent helpful response yes no maybe seven ten".split()
N_CASES = 160  # × 2 metrics = 20 chunks of 16: enough work to land several kills mid-run


def _cases(seed: int = 0) -> list[dict]:
    """Random cases, so the engine's grouping by content scores them out of input order."""
    rng = random.Random(seed)
    return [
        {
            "id": f"c{i:03d}",
            "input": " ".join(rng.choices(WORDS, k=rng.randint(3, 30))),
            "actual_output": " ".join(rng.choices(WORDS, k=rng.randint(1, 40))),
            "expected_output": " ".join(rng.choices(WORDS, k=rng.randint(1, 8))),
        }
        for i in range(N_CASES)
    ]


INPUT_ORDER = [(c["id"], m) for c in _cases() for m in ("five", "ten")]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, tiny_tokenizer):
    """A local model directory, a data file and two metric files."""
    root = tmp_path_factory.mktemp("killresume")
    tiny_llama(tiny_tokenizer).save_pretrained(root / "model")
    tiny_tokenizer.save_pretrained(root / "model")
    (root / "model" / "chat_template.jinja").write_text(CHAT_TEMPLATE)  # the shared tokenizer stays as is
    assert (root / "model" / "model.safetensors").is_file()
    with open(root / "data.jsonl", "w") as f:
        f.writelines(json.dumps(c) + "\n" for c in _cases())
    for name, text in METRICS.items():
        (root / name).write_text(text)
    return root


def _cmd(root: Path, out: Path, resume: bool) -> list[str]:
    return [
        sys.executable,
        "-m",
        "localjudge",
        "eval",
        str(root / "data.jsonl"),
        "--metric",
        str(root / "m5.yaml"),
        "--metric",
        str(root / "m10.yaml"),
        "--judge",
        str(root / "model"),
        "--device",
        "cpu",
        "--out",
        str(out),
        "--no-progress",
    ] + (["--resume"] if resume else [])


def _env(root: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "LOCALJUDGE_CACHE": str(root / "cache"),
        "OMP_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _final(path: Path) -> dict[tuple[str, str], float | None]:
    """(case_id, metric) -> score, asserting there are no duplicates and no torn lines."""
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    recs = [json.loads(line) for line in raw.decode().split("\n")[:-1]]
    keys = [(r["case_id"], r["metric"]) for r in recs]
    assert len(keys) == len(set(keys)), "duplicate records"
    return {(r["case_id"], r["metric"]): r["score"] for r in recs}


def _same(got: dict, want: dict) -> None:
    assert set(got) == set(want)
    for k, v in want.items():
        assert (got[k] is None) == (v is None), k
        if v is not None:
            assert got[k] == pytest.approx(v, abs=1e-5), k  # batches are composed differently after a resume


@pytest.fixture(scope="module")
def reference(workdir):
    """The records of an uninterrupted run."""
    out = workdir / "reference.jsonl"
    run = subprocess.run(_cmd(workdir, out, False), env=_env(workdir), capture_output=True, timeout=900)
    assert run.returncode == 0, run.stderr.decode()
    records = _final(out)
    assert len(records) == 2 * N_CASES
    assert sum(v is not None for v in records.values()) > N_CASES  # the steered model gives scores
    return records


def _start(workdir: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        _cmd(workdir, out, True), env=_env(workdir), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


@pytest.mark.slow
def test_sigkill_at_random_points_then_resume(workdir, reference):
    """Kill points are drawn at random (seeded) over the run: one while the judge loads, three
    once the results file reaches a random number of lines, each after a further random delay."""
    total = 2 * N_CASES
    out = workdir / "killed.jsonl"
    rng = random.Random(1234)
    kills = mid_run = 0
    proc = _start(workdir, out)
    time.sleep(rng.uniform(0.05, 1.0))  # importing torch and loading the judge take longer
    assert proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    kills += 1
    assert _lines(out) == 0
    for target in sorted(rng.sample(range(1, int(total * 0.9)), 3)):
        if _lines(out) >= target:
            continue  # an earlier run got past this point before its kill landed
        proc = _start(workdir, out)
        while _lines(out) < target and proc.poll() is None:
            time.sleep(0.005)  # 1 ms polls took CPU from the child they wait for
        time.sleep(rng.uniform(0, 0.05))
        assert proc.poll() is None, "the run finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        mid_run += 0 < _lines(out) < total
    assert kills >= 3
    assert mid_run >= 2  # most kills cut the scoring short, not just start-up or exit
    done = subprocess.run(_cmd(workdir, out, True), env=_env(workdir), capture_output=True, timeout=900)
    assert done.returncode == 0, done.stderr.decode()
    _same(_final(out), reference)
    assert list(_final(out)) == INPUT_ORDER  # the finished file is rewritten in input order


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_sigint_exits_130_and_is_resumable(workdir, reference):
    want = reference
    out = workdir / "interrupted.jsonl"
    # a shell's background job inherits SIGINT ignored, and Python then never raises
    # KeyboardInterrupt: give the child the default disposition, as a terminal would
    proc = subprocess.Popen(
        _cmd(workdir, out, False),
        env=_env(workdir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_default_sigint,
    )
    while _lines(out) == 0 and proc.poll() is None:
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err.decode()
    assert "Interrupted" in err.decode() and "--resume" in err.decode()
    assert "Traceback" not in err.decode()
    partial = _final(out)  # whole lines only
    assert 0 < len(partial) < 2 * N_CASES
    done = subprocess.run(_cmd(workdir, out, True), env=_env(workdir), capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    _same(_final(out), want)
    assert list(_final(out)) == INPUT_ORDER


# -- in-process: the results file -------------------------------------------------------------------

METRIC = GEvalMetric(
    name="q",
    task="Judge it.",
    criteria="Is it right?",
    steps=["Check."],
    fields=["input", "actual_output"],
    low=1,
    high=5,
)


def _policy(prompt: str) -> dict[str, float]:
    k = sum(map(ord, prompt)) % 5  # differs per case
    return {str(k + 1): 0.6, str((k + 2) % 5 + 1): 0.3}


def _fake_cases(n: int = 10) -> list[TestCase]:
    return [TestCase(id=f"k{i}", input=f"question {i}", actual_output="answer " * (i + 1)) for i in range(n)]


def test_each_record_is_on_disk_before_the_next_item_is_scored(tmp_path):
    out = tmp_path / "r.jsonl"
    seen_on_disk: list[int] = []

    def policy(prompt):
        seen_on_disk.append(_lines(out))
        return _policy(prompt)

    evaluate(_fake_cases(6), [METRIC], fake_judge(policy), out=out, chunk_size=1, progress=False)
    assert seen_on_disk == [0, 1, 2, 3, 4, 5]


def test_resume_only_appends(tmp_path):
    out = tmp_path / "r.jsonl"
    judge = fake_judge(_policy)
    evaluate(_fake_cases(4), [METRIC], judge, out=out, progress=False)
    first = out.read_bytes()
    evaluate(_fake_cases(10), [METRIC], judge, out=out, resume=True, progress=False)
    assert out.read_bytes().startswith(first)
    assert len(_final(out)) == 10


def test_torn_last_line_is_repaired(tmp_path):
    judge = fake_judge(_policy)
    ref = evaluate(_fake_cases(), [METRIC], judge, out=tmp_path / "ref.jsonl", progress=False)
    out = tmp_path / "r.jsonl"
    lines = (tmp_path / "ref.jsonl").read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:4]) + lines[4][: len(lines[4]) // 2])  # a writer killed mid-line
    assert len(read_results(out)) == 4  # the torn line is not read as a record
    calls = len(judge.backend.calls)
    evaluate(_fake_cases(), [METRIC], judge, out=out, resume=True, progress=False)
    assert len(judge.backend.calls) - calls == len(lines) - 4  # only the missing items re-judged
    _same(_final(out), {(r.case_id, r.metric): r.score for r in ref.records})


def test_resume_reads_records_holding_unicode_line_breaks(tmp_path):
    """Regression: records are split at "\\n" only; U+2028 or U+0085 inside a string (written raw,
    ensure_ascii=False) once made a finished results file unreadable on --resume."""
    judge = fake_judge(_policy)
    out = tmp_path / "r.jsonl"
    cases = [
        TestCase(id=f"u{i}", input=f"q{i}\u2028line", actual_output="a\x85b\u2029c", extra={"note": "x\u2028y\x85z"})
        for i in range(4)
    ]
    evaluate(cases[:2], [METRIC], judge, out=out, progress=False)
    assert "\u2028".encode() in out.read_bytes()
    calls = len(judge.backend.calls)
    evaluate(cases, [METRIC], judge, out=out, resume=True, progress=False)
    assert len(judge.backend.calls) - calls == 2
    assert len(_final(out)) == 4


def test_corrupt_line_in_the_middle_is_an_error_not_dropped(tmp_path):
    judge = fake_judge(_policy)
    out = tmp_path / "r.jsonl"
    evaluate(_fake_cases(), [METRIC], judge, out=out, progress=False)
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:3]) + b"{garbage\n" + b"".join(lines[3:]))
    with pytest.raises(DataError, match=r"r\.jsonl:4"):
        evaluate(_fake_cases(), [METRIC], judge, out=out, resume=True, progress=False)


_NOT_RECORDS = {
    "not records, torn tail": b'{"not": "a record"}\n{"case_id": "k1", "met',
    "not a record, no newline": b'{"not": "a record"}',
    "records, then a non-record without newline": None,  # built from real records below
    "records, then garbage": None,
}


@pytest.mark.parametrize("kind", _NOT_RECORDS)
def test_refused_resume_changes_nothing(tmp_path, kind):
    """Regression: --resume cut the bytes after the last newline *before* validating the file,
    so a refused resume (or one that read nothing) had already lost the file's last line."""
    judge = fake_judge(_policy)
    out = tmp_path / "r.jsonl"
    evaluate(_fake_cases(3), [METRIC], judge, out=out, progress=False)
    good = out.read_bytes()
    content = (
        _NOT_RECORDS[kind]
        or good
        + {
            "records, then a non-record without newline": b'{"case": "k9"}',
            "records, then garbage": b"\x00\xffgarbage",
        }[kind]
    )
    out.write_bytes(content)
    calls = len(judge.backend.calls)
    with pytest.raises(DataError, match=r"r\.jsonl:\d+: not a localjudge result record"):
        evaluate(_fake_cases(), [METRIC], judge, out=out, resume=True, progress=False)
    assert out.read_bytes() == content
    assert len(judge.backend.calls) == calls


@pytest.mark.parametrize("change", ["judge", "metric"])
def test_resume_refused_for_another_run_keeps_the_torn_record(tmp_path, change):
    judge = fake_judge(_policy)
    out = tmp_path / "r.jsonl"
    evaluate(_fake_cases(4), [METRIC], judge, out=out, progress=False)
    lines = out.read_bytes().splitlines(keepends=True)
    content = b"".join(lines[:3]) + lines[3][:40]  # a writer killed mid-line
    out.write_bytes(content)
    other_judge = fake_judge(_policy, name="other") if change == "judge" else judge
    other_metric = METRIC.model_copy(update={"criteria": "Is it kind?"}) if change == "metric" else METRIC
    with pytest.raises(ConfigError, match="new --out"):
        evaluate(_fake_cases(), [other_metric], other_judge, out=out, resume=True, progress=False)
    assert out.read_bytes() == content


def test_cli_resume_on_a_file_that_is_not_results_keeps_its_bytes(localjudge_scripted, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from localjudge.cli import main

    localjudge_scripted.add_any(lambda asked: fake_judge(_policy))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.jsonl").write_text(json.dumps({"id": "a", "input": "q", "actual_output": "x"}) + "\n")
    content = b'{"keep": "me"}\n{"and": "me too"}'
    (tmp_path / "r.jsonl").write_bytes(content)
    result = CliRunner().invoke(main, ["eval", "d.jsonl", "--metric", "correctness", "--out", "r.jsonl", "--resume"])
    assert result.exit_code == 2 and "r.jsonl:1: not a localjudge result record" in result.output
    assert (tmp_path / "r.jsonl").read_bytes() == content


def test_responses_file_with_a_non_record_tail_is_refused_unchanged(tmp_path):
    from localjudge.runs.generation import generate_responses, read_responses

    out = tmp_path / "resp.jsonl"
    cases = [TestCase(id=f"p{i}", input=f"question {i}") for i in range(3)]
    generate_responses(cases[:2], fake_judge(_policy, name="g"), RunOptions(out=out, progress=False))
    lines = out.read_bytes().splitlines(keepends=True)
    torn = lines[0] + lines[1][:30]
    out.write_bytes(torn)
    assert [r.id for r in read_responses(out)] == ["p0"]  # a torn record is ignored...
    content = lines[0] + b'{"not": "a response"}'
    out.write_bytes(content)
    with pytest.raises(DataError, match=r"resp\.jsonl:2: not a response record"):
        read_responses(out)
    with pytest.raises(DataError, match="not a response record"):
        generate_responses(cases, fake_judge(_policy, name="g"), RunOptions(out=out, resume=True, progress=False))
    assert out.read_bytes() == content  # ...anything else stays where it is
    out.write_bytes(torn)
    generate_responses(cases, fake_judge(_policy, name="g"), RunOptions(out=out, resume=True, progress=False))
    assert [r.id for r in read_responses(out)] == ["p0", "p1", "p2"]


# -- in-process: the steps cache -----------------------------------------------------------------------

UNPINNED = METRIC.model_copy(update={"steps": None})


def _steps_judge():
    return fake_judge(_policy, generator=lambda p: " Read it.\n2. Compare it.\n3. Score it.")


def test_steps_cache_written_atomically(tmp_path, monkeypatch):
    judge = _steps_judge()
    steps, source = resolve_steps(judge, UNPINNED, tmp_path)
    assert source == "generated" and steps == ["Read it.", "Compare it.", "Score it."]
    path = tmp_path / f"{steps_key(judge, UNPINNED)}.json"
    good = path.read_bytes()
    path.unlink()

    def crash(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)  # the process dies between writing and renaming
    with pytest.raises(OSError):
        resolve_steps(judge, UNPINNED, tmp_path)
    assert list(tmp_path.iterdir()) == []  # no half-written entry, no temp file left
    monkeypatch.undo()
    resolve_steps(judge, UNPINNED, tmp_path)
    assert path.read_bytes() == good


@pytest.mark.parametrize(
    "corrupt",
    [
        b"",
        b'{"steps": ["Read it."',
        b'{"steps": ["x"], "checksum": "0"}',
        b'{"steps": [], "checksum": "x"}',
        b"\xff\xfe",
        b"[1, 2]",
    ],
)
def test_corrupt_steps_cache_is_rebuilt(tmp_path, corrupt, caplog):
    judge = _steps_judge()
    steps, _ = resolve_steps(judge, UNPINNED, tmp_path)
    path = tmp_path / f"{steps_key(judge, UNPINNED)}.json"
    good = path.read_bytes()
    path.write_bytes(corrupt)
    again, source = resolve_steps(judge, UNPINNED, tmp_path)
    assert source == "generated" and again == steps
    assert path.read_bytes() == good
    assert "corrupt" in caplog.text
    assert resolve_steps(judge, UNPINNED, tmp_path)[1] == "cache"


def test_cache_dir_follows_env(monkeypatch, tmp_path):
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path))
    assert cache_dir() == tmp_path / "steps"


# -- in-process: out-of-memory back-off ------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_judge(tiny_tokenizer):
    info = tiny_info(4096)
    options = EngineOptions(device="cpu", dtype="float32", token_budget=1 << 16)
    return Judge.from_model(tiny_llama(tiny_tokenizer), tiny_tokenizer, info, options)


def test_oom_halves_the_batch_and_gives_the_same_results(tiny_judge):
    cases = [TestCase(**c) for c in _cases(7)[:12]]
    metric = GEvalMetric.model_validate({**METRIC.model_dump(), "fields": ["input", "actual_output"]})
    normal = evaluate(cases, [metric], tiny_judge, progress=False, chunk_size=12)
    sizes: list[int] = []

    def flaky(call):  # a device that holds one row of a tree batch (prefills fit)
        if call.kind != "batch":
            return
        sizes.append(len(call.lengths))
        if len(call.lengths) > 1:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    with tiny_judge.backend.observe_forwards(flaky):
        backed_off = evaluate(cases, [metric], tiny_judge, progress=False, chunk_size=12)
    assert sizes[0] > 1 and 1 in sizes  # it did fail, then split down to single items
    assert sizes.count(1) == len(cases)
    for a, b in zip(normal.records, backed_off.records):
        assert a.case_id == b.case_id
        # fp32 batch composition moves the last digits: the suite's batch-invariance tolerance
        assert a.score == pytest.approx(b.score, abs=1e-5)
        assert a.distribution == pytest.approx(b.distribution, abs=1e-5)


def test_other_errors_are_not_swallowed_as_oom(tiny_judge):
    def broken(call):
        raise RuntimeError("shape mismatch")

    with pytest.raises(RuntimeError, match="shape mismatch"), tiny_judge.backend.observe_forwards(broken):
        tiny_judge.score_texts(["a. Score:", "b. Score:"], 1, 5)
