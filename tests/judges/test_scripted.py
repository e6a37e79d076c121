"""A scripted judge is chosen by name through the public loading path, as any judge (`judges.scripted`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.errors import ConfigError
from localjudge.judges.install import install_judge
from localjudge.judges.loading import load_judge
from localjudge.judges.registry import availability, load_registry


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
