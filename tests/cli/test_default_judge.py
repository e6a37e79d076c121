"""`eval` without --judge: prompted metrics get a judge measured above chance, and every output names it."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.testing import fake_judge


@pytest.fixture
def asked(localjudge_scripted):
    """The names load_judge was asked for (the registry's default when none); each load is a fake judge of that name."""
    names: list[str] = []

    def load(asked):
        names.append(asked.name)
        return fake_judge(lambda p: {"4": 0.5, "5": 0.5}, name=asked.name)

    localjudge_scripted.add_any(load)
    return names


@pytest.fixture
def registry(tmp_path):
    """A registry like the bundled one: the 135M default, the 0.5B judge here, the 1.5B not."""
    (tmp_path / "qwen-0.5b").mkdir()
    path = tmp_path / "models.yaml"
    path.write_text(
        "default: smollm2-135m\njudges:\n"
        + "".join(
            f"  - {{name: {name}, family: f, context_length: 2048, source: {{kind: local_dir, path: {where}}}}}\n"
            for name, where in [
                ("smollm2-135m", "smollm"),
                ("qwen2.5-coder-0.5b", "qwen-0.5b"),
                ("qwen2.5-coder-1.5b", "qwen-1.5b"),
            ]
        ),
        encoding="utf-8",
    )
    return path


@pytest.fixture
def cases(tmp_path):
    path = tmp_path / "cases.jsonl"
    row = {"id": "c1", "input": "q", "actual_output": "a", "expected_output": "e", "output_1": "x", "output_2": "y"}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


def _eval(*args):
    return CliRunner().invoke(main, ["eval", *map(str, args), "--no-progress"])


def test_a_g_eval_metric_without_a_judge_gets_the_installed_capable_one_and_says_so(asked, registry, cases, tmp_path):
    out = tmp_path / "r.jsonl"
    result = _eval(cases, "--metric", "correctness", "--registry", registry, "--out", out)
    assert result.exit_code == 0, result.output
    assert asked == ["qwen2.5-coder-0.5b"]
    notice = [line for line in result.stderr.splitlines() if "picked" in line]
    assert notice == [
        "Judge qwen2.5-coder-0.5b picked for the G-Eval metrics: the default smollm2-135m answers them at chance "
        "(README, Pick a judge); --judge NAME to choose"
    ]
    assert "judge: qwen2.5-coder-0.5b" in result.stdout  # the summary
    record = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert record["judge"]["name"] == "qwen2.5-coder-0.5b"


def test_a_named_judge_and_a_likelihood_metric_keep_their_judge_silently(asked, registry, cases):
    named = _eval(cases, "--metric", "pairwise", "--registry", registry, "--judge", "smollm2-135m")
    likelihood = _eval(cases, "--metric", "likelihood", "--registry", registry)
    assert named.exit_code == 0 and likelihood.exit_code == 0, named.output + likelihood.output
    assert asked == ["smollm2-135m", "smollm2-135m"]  # the second: the registry's default
    assert "picked" not in named.stderr + likelihood.stderr and "at chance" not in named.stderr + likelihood.stderr
    assert "judge: smollm2-135m" in named.stdout and "judge: smollm2-135m" in likelihood.stdout


def test_with_no_capable_judge_installed_one_line_says_which_to_install(asked, registry, cases, tmp_path):
    (tmp_path / "qwen-0.5b").rmdir()
    result = _eval(cases, "--metric", "consistency_entailment", "--registry", registry)
    assert result.exit_code == 0, result.output
    assert asked == ["smollm2-135m"]  # the registry's default
    (line,) = [line for line in result.stderr.splitlines() if "at chance" in line]
    assert "entailment metrics at chance" in line and "localjudge models --install qwen2.5-coder-1.5b" in line
