"""A scripted judge is chosen by name through the public loading path, as any judge (`judges.scripted`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.errors import ConfigError
from localjudge.judges.install import install_judge
from localjudge.judges.judge import Judge
from localjudge.judges.loading import load_judge
from localjudge.judges.registry import availability, load_registry
from localjudge.testing import ScriptedLoad, UnscriptedLoad, fake_judge, scripted_judges


def _registry(tmp_path, policy: str = "scripted_policies:four", extra: str = "") -> str:
    path = tmp_path / "models.yaml"
    path.write_text(
        "default: four\njudges:\n"
        "  - {name: four, family: scripts, context_length: 4096, "
        f"source: {{kind: scripted, policy: '{policy}'{extra}}}}}\n"
    )
    return str(path)


def test_a_scripted_judge_loads_by_name_with_its_entry(tmp_path):
    registry = _registry(tmp_path, extra=", generator: 'scripted_policies:echo'")
    judge = load_judge("four", registry_path=registry)
    info = judge.info
    assert (info.name, info.family, info.context_length, info.source) == (
        "four",
        "scripts",
        4096,
        "scripted:scripted_policies:four",
    )
    assert judge.score_texts(["Rate it 1-5. Score:"], 1, 5)[0].expected == pytest.approx(4.0)
    assert judge.generate(["say hello"], 8) == ["hello"]
    assert load_judge(registry_path=registry) is not judge  # the registry's default, a fresh one each load


def test_the_command_line_runs_a_scripted_judge_from_a_registry(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "a", "input": "2+2?", "actual_output": "4", "expected_output": "4"}) + "\n")
    args = ["eval", str(data), "--metric", "correctness", "--registry", _registry(tmp_path), "--judge", "four"]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "r.jsonl"), "--no-progress"])
    assert result.exit_code == 0, result.output
    (record,) = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert record["judge"]["name"] == "four" and record["raw_score"] == pytest.approx(4.0)


@pytest.mark.parametrize(
    ("policy", "needle"),
    [
        ("scripted_policies", "is not module:attribute"),
        ("no_such_module:four", "cannot import its policy"),
        ("scripted_policies:nothing", "cannot import its policy"),
        ("scripted_policies:NOT_A_FUNCTION", "is not a function"),
    ],
)
def test_a_bad_policy_is_refused_naming_it(tmp_path, policy, needle):
    with pytest.raises(ConfigError, match=needle):
        load_judge("four", registry_path=_registry(tmp_path, policy))


def test_nothing_to_install_and_always_available(tmp_path):
    registry = _registry(tmp_path)
    entry = load_registry(Path(registry)).get("four")
    assert availability(entry) == "yes"
    with pytest.raises(ConfigError, match=r"scripted judge \(scripted:scripted_policies:four\); it has no weights"):
        install_judge(entry, tmp_path / "cache")


# -- a table of scripted judges, in this process (`scripted_judges`, the `localjudge_scripted` fixture) ------


def test_a_table_answers_loads_by_name_and_keeps_what_was_asked(tmp_path):
    grader = fake_judge(lambda p: {"4": 1.0}, name="grader", family="scripts")
    fresh: list[Judge] = []

    def other(asked: ScriptedLoad) -> Judge:
        fresh.append(fake_judge(lambda p: {"2": 1.0}, name=asked.name))
        return fresh[-1]

    registry = _registry(tmp_path)
    with scripted_judges({"grader": grader, "four": other}) as table:
        assert load_judge("grader") is grader
        relabelled = load_judge("grader", device="cpu", dtype="bf16", family="mine")
        assert relabelled.info.family == "mine" and relabelled.backend is grader.backend  # the family asked for
        default = load_judge(registry_path=registry)  # the registry's default, by its name
        assert default.info.name == "four" and default.score_texts(["Score:"], 1, 5)[0].expected == 2.0
    assert table.judges == [grader, relabelled, default] and fresh == [default]
    assert [(a.name, a.device, a.dtype, a.family, a.registry_path) for a in table.loads] == [
        ("grader", None, None, None, None),
        ("grader", "cpu", "bf16", "mine", None),
        ("four", None, None, None, Path(registry)),
    ]
    assert load_judge("four", registry_path=registry).info.source == "scripted:scripted_policies:four"  # table gone


def test_a_name_the_table_cannot_answer_fails_the_load_loudly(localjudge_scripted, tmp_path, monkeypatch):
    localjudge_scripted.add("grader", fake_judge(lambda p: {"4": 1.0}))
    with pytest.raises(UnscriptedLoad, match="'smollm2-135m' was loaded; the scripted judges are: grader"):
        load_judge()
    with pytest.raises(ConfigError, match="float8"):  # the settings are checked first, as for any judge
        load_judge("grader", dtype="float8")
    monkeypatch.chdir(tmp_path)
    Path("c.jsonl").write_text(json.dumps({"id": "a", "input": "q", "actual_output": "a"}) + "\n")
    result = CliRunner().invoke(main, ["eval", "c.jsonl", "--metric", "correctness", "--judge", "real-one"])
    assert result.exit_code == 1 and "UnscriptedLoad" in result.output  # an internal error, not a user's (2)
    assert localjudge_scripted.loads == []
    localjudge_scripted.add_any(fake_judge(lambda p: {"3": 1.0}, name="anyone"))
    assert load_judge("real-one").info.name == "anyone" and load_judge("grader").info.name == "fake"


def test_tables_nest_and_the_innermost_answers():
    outer, inner = fake_judge(lambda p: {"1": 1.0}), fake_judge(lambda p: {"2": 1.0})
    with scripted_judges({"j": outer}):
        with scripted_judges({"j": inner}):
            assert load_judge("j") is inner
        assert load_judge("j") is outer
