"""What the command-line tests share: a good data row and metric file, a fake judge every load returns,
files written from a dict, the command run in-process, and the check of a user error's one line.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.judges.judge import Judge
from localjudge.testing import FakeBackend, ScriptedJudges, fake_judge

GOOD_ROW = {"input": "What is 2+2?", "actual_output": "4", "expected_output": "4"}
GOOD = json.dumps({"id": "a", **GOOD_ROW}) + "\n"
METRIC = "name: m\ntask: Judge it.\ncriteria: Is it right?\nsteps: [Check it.]\nfields: [input, actual_output]\n"
REGISTRY_ENTRY = "{name: x, family: f, source: {kind: hub, repo: a/b, revision: main}, context_length: 64}"


def policy(prompt: str) -> dict[str, float]:
    return {"4": 0.7, "5": 0.3}


def install_fake(table: ScriptedJudges, monkeypatch: pytest.MonkeyPatch, tmp_path) -> Judge:
    """Every judge load, whatever the name, returns one fake judge; files are written to and read from tmp_path."""
    judge = fake_judge(policy)
    table.add_any(judge)
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return judge


def write_files(files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        mode = "wb" if isinstance(content, bytes) else "w"
        with open(name, mode) as f:
            f.write(content)


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def assert_user_error(result, *needles: str, code: int = 2) -> str:
    """Exit `code`, exactly one line starting with "Error:" that contains every needle, no traceback."""
    out = result.output
    assert result.exit_code == code, out
    assert "Traceback" not in out
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    errors = [line for line in out.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, out
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    return errors[0]


def short_judge(table: ScriptedJudges, context: int) -> Judge:
    """Every judge load returns one fake judge that takes prompts of `context` characters at most."""
    judge = fake_judge(policy)
    judge = Judge(FakeBackend(policy), judge.info.model_copy(update={"context_length": context}))
    table.add_any(judge)
    return judge
