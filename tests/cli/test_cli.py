"""The command line through `CliRunner`, with the scripted fake judge standing in for load_judge."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.metrics import builtin_names, load_metric_file
from localjudge.testing import fake_judge


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def judges(localjudge_scripted):
    """Every load_judge call returns a new fake judge (collected in `made`); `state` scripts them."""
    made = []
    state = {"policy": lambda p: {"4": 0.5, "5": 0.5}, "generator": None}

    def load(asked):
        judge = fake_judge(state["policy"], state["generator"])
        made.append(judge)
        return judge

    localjudge_scripted.add_any(load)
    return made, state


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "cases.jsonl"
    rows = [
        {"id": f"c{i}", "input": f"q{i}", "actual_output": f"a{i}", "expected_output": f"e{i}", "human": i}
        for i in range(1, 4)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def run(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def no_traceback(result) -> None:
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_eval_prints_table_and_summary(judges, data):
    result = run("eval", data, "--metric", "correctness", "--no-progress")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.splitlines()[0].split() == ["case", "metric", "score", "raw", "outcome", "note"]
    rows = [line.split() for line in out.splitlines()[2:5]]
    assert rows == [[cid, "correctness", "0.875", "4.50", "pass"] for cid in ("c1", "c2", "c3")]
    assert "mean score" in out and "pass rate" in out and "unscored" in out
    summary = next(line for line in out.splitlines()[5:] if line.startswith("correctness"))
    assert summary.split() == ["correctness", "3", "0.875", "1.000", "0", "1.000"]
    # every case got the same 0.875: the summary says plainly that this is no verdict
    assert "Note on correctness: scores span only 0.88-0.88 (0% of the 0-1 scale) over 3 cases" in out
    assert "do not read them as pass/fail judgments" in out
    assert "Judge: fake" in result.stderr


def test_eval_says_nothing_when_scores_spread(judges, data):
    _, state = judges
    state["policy"] = lambda p: {"1": 0.9, "5": 0.1} if "a1" in p else {"5": 1.0}
    result = run("eval", data, "--metric", "correctness", "--no-progress")
    assert result.exit_code == 0, result.output
    assert "Note on" not in result.stdout


def test_eval_json_summary(judges, data, tmp_path):
    out = tmp_path / "r.jsonl"
    result = run(
        "eval", data, "--metric", "correctness", "--metric", "faithfulness", "--json", "--no-progress", "--out", out
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["judge"]["name"] == "fake" and summary["out"] == str(out)
    by_metric = {s["metric"]: s for s in summary["summaries"]}
    assert by_metric["correctness"]["mean_score"] == pytest.approx(0.875)
    assert by_metric["correctness"]["pass_rate"] == 1.0
    assert by_metric["faithfulness"]["unscored"] == 3 and by_metric["faithfulness"]["mean_score"] is None
    assert len(out.read_text().splitlines()) == 6


def test_existing_out_without_resume_or_overwrite(judges, data, tmp_path):
    out = tmp_path / "r.jsonl"
    assert run("eval", data, "--metric", "correctness", "--out", out, "--no-progress").exit_code == 0
    before = out.read_text()
    result = run("eval", data, "--metric", "correctness", "--out", out, "--no-progress")
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "already exists" in errors[0] and "--resume" in errors[0]
    assert result.stderr.strip().splitlines()[-1] == errors[0]
    no_traceback(result)
    assert out.read_text() == before


def test_resume_and_overwrite(judges, data, tmp_path):
    made, _ = judges
    out = tmp_path / "r.jsonl"
    assert run("eval", data, "--metric", "correctness", "--out", out, "--no-progress").exit_code == 0
    full = out.read_text().splitlines()
    out.write_text(full[0] + "\n" + full[1][:40])  # an interrupted run: one record and a torn line
    result = run("eval", data, "--metric", "correctness", "--out", out, "--resume", "--no-progress")
    assert result.exit_code == 0, result.output
    assert len(made[-1].backend.calls) == 2
    assert sorted(out.read_text().splitlines()) == sorted(full)
    result = run("eval", data, "--metric", "correctness", "--out", out, "--overwrite", "--limit", "1", "--no-progress")
    assert result.exit_code == 0 and len(out.read_text().splitlines()) == 1


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--resume"], "--resume needs --out"),
        (["--resume", "--overwrite", "--out", "r.jsonl"], "exclude each other"),
    ],
)
def test_flag_conflicts(judges, data, flags, message):
    result = run("eval", data, "--metric", "correctness", *flags)
    assert result.exit_code == 2 and message in result.stderr
    no_traceback(result)


def test_unknown_metric_suggests_close_match(judges, data):
    made, _ = judges
    result = run("eval", data, "--metric", "correctnes")
    assert result.exit_code == 2
    assert "unknown metric 'correctnes'; did you mean 'correctness'" in result.stderr
    no_traceback(result)
    assert made == []  # failed before loading a judge


def test_malformed_data_names_file_and_line(judges, tmp_path):
    made, _ = judges
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "1", "input": "q"}\n{"id": "2", "actual_output": 7}\n', encoding="utf-8")
    result = run("eval", path, "--metric", "correctness")
    assert result.exit_code == 2
    assert f"Error: {path}:2: field 'actual_output' must be a string" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    no_traceback(result)
    assert made == []


def test_skip_invalid_lists_skipped_rows(judges, tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text('{"id": "1", "input": "q", "actual_output": "a"}\n{"id": \n', encoding="utf-8")
    result = run("eval", path, "--metric", "fluency", "--skip-invalid", "--json", "--no-progress")
    assert result.exit_code == 0, result.output
    assert f"skipped: {path}:2: invalid JSON" in result.stderr
    assert json.loads(result.stdout)["skipped_rows"] == [f"{path}:2: invalid JSON (Expecting value at column 8)"]


def test_runtime_failure_exits_1_without_traceback(judges, data):
    _, state = judges

    def broken(prompt):
        raise RuntimeError("device lost")

    state["policy"] = broken
    result = run("eval", data, "--metric", "correctness", "--no-progress")
    assert result.exit_code == 1
    assert "Error: RuntimeError: device lost" in result.stderr
    no_traceback(result)


def test_reasoning_override(judges, data, tmp_path):
    _, state = judges
    state["generator"] = lambda p: "Short analysis."
    out = tmp_path / "r.jsonl"
    result = run("eval", data, "--metric", "coherence", "--reasoning", "before", "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["reasoning"] for r in recs} == {"Short analysis."}
    assert {r["metric_spec"]["reasoning"] for r in recs} == {"before"}


def test_style_guide_option(judges, data, tmp_path):
    guide = tmp_path / "guide.md"
    guide.write_text("Always answer in French.", encoding="utf-8")
    out = tmp_path / "r.jsonl"
    assert run("eval", data, "--metric", "style", "--style-guide", guide, "--out", out, "--no-progress").exit_code == 0
    assert "Always answer in French." in json.loads(out.read_text().splitlines()[0])["metric_spec"]["criteria"]
    result = run("eval", data, "--metric", "style")
    assert result.exit_code == 2 and "--style-guide" in result.stderr


def test_models_lists_the_embedded_judge():
    result = run("models")
    assert result.exit_code == 0, result.output
    row = next(line for line in result.stdout.splitlines() if "smollm2-135m" in line)
    assert row.startswith("*smollm2-135m") and row.rstrip().endswith("yes")
    assert "* default judge" in result.stdout


def test_metrics_lists_builtins():
    result = run("metrics")
    assert result.exit_code == 0, result.output
    names = [line.split()[0] for line in result.stdout.splitlines()[2:]]
    assert names == builtin_names()
    assert any(line.split()[:2] == ["fluency", "1-3"] for line in result.stdout.splitlines())
    assert "A/B, both orders" in result.stdout


def test_steps_writes_a_loadable_metric_with_pinned_steps(judges, tmp_path):
    _, state = judges
    state["generator"] = lambda p: " Read the response.\n2. Compare it with the reference.\n3. Give the score."
    metric_file = tmp_path / "mine.yaml"
    metric_file.write_text(
        "name: mine\ntask: Judge it.\ncriteria: Is it right?\nfields: [actual_output, expected_output]\n"
    )
    out = tmp_path / "pinned.yaml"
    result = run("steps", "--metric", metric_file, "--out", out)
    assert result.exit_code == 0, result.output
    assert "3 steps (generated)" in result.stdout
    m = load_metric_file(out)
    assert m.name == "mine" and m.steps == ["Read the response.", "Compare it with the reference.", "Give the score."]
    # the pinned file is then used as is: no generation
    state["generator"] = lambda p: pytest.fail("pinned steps must not be regenerated")
    result = run("steps", "--metric", out, "--out", tmp_path / "again.yaml")
    assert result.exit_code == 0 and "3 steps (pinned)" in result.stdout


def test_steps_regenerate_builtin_and_pairwise_refused(judges, tmp_path):
    _, state = judges
    state["generator"] = lambda p: " Check every claim.\n2. Score it."
    result = run("steps", "--metric", "correctness", "--regenerate", "--out", tmp_path / "c.yaml")
    assert result.exit_code == 0, result.output
    assert load_metric_file(tmp_path / "c.yaml").steps == ["Check every claim.", "Score it."]
    result = run("steps", "--metric", "pairwise", "--out", tmp_path / "p.yaml")
    assert result.exit_code == 2 and "only G-Eval metrics" in result.output


def test_help_and_version():
    assert run("--help").exit_code == 0
    result = run("--version")
    assert result.exit_code == 0 and "localjudge" in result.stdout
