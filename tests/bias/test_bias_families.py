"""Model families of judges and generators loaded by path or hub id, for self-preference studies.

Such models had the family "unknown", and a study compared "unknown" with "unknown" as if it
were one family: a self-preference study of non-registry models was silently wrong. Now
`--family MODEL=FAMILY` (or a models.yaml given with `--models`) names the family, and a study
with a model of unknown family is refused before any model loads.
"""

from __future__ import annotations

import json
import re

import pytest
from bias_fakes import FAST, biased_judge, write_prompts, write_responses
from click.testing import CliRunner

from localjudge.bias.families import fill_families, model_families, parse_families
from localjudge.bias.judging import judge_responses
from localjudge.bias.study import analyze_judgments
from localjudge.cli import main
from localjudge.errors import ConfigError, DataError
from localjudge.judges.registry import load_registry
from localjudge.metrics import builtin_metric
from localjudge.runs.generation import read_responses
from localjudge.runs.options import RunOptions

REGISTRY = """default: my-judge
judges:
 - {name: my-judge, family: alpha, source: {kind: hub, repo: me/judge, revision: main}, context_length: 4096}
 - {name: other-judge, family: beta, source: {kind: hub, repo: me/other, revision: main}, context_length: 4096}
"""


@pytest.fixture(scope="module")
def prompts_file(tmp_path_factory):
    return write_prompts(tmp_path_factory.mktemp("bias"))


@pytest.fixture(scope="module")
def responses_file(prompts_file):
    return write_responses(prompts_file)


@pytest.fixture
def loads(localjudge_scripted):
    """A loader that honours `family` (as load_judge does) and records each call's arguments."""
    calls = []

    def load(asked):
        name, family = asked.name, asked.family
        calls.append({"name": name, "family": family, "registry_path": asked.registry_path})
        fam = family or {"my-judge": "alpha", "other-judge": "beta"}.get(name, "unknown")
        return biased_judge(name, fam, own_bonus=1.5 if name in ("./judges/alpha", "my-judge") else 0.0)

    localjudge_scripted.add_any(load)
    return calls


def _invoke(*args: str):
    result = CliRunner().invoke(main, list(args))
    return result, [line for line in result.output.splitlines() if line.startswith("Error:")]


def test_generate_refuses_a_path_model_without_a_family_before_loading(prompts_file, tmp_path, loads):
    res, errors = _invoke("generate", str(prompts_file), "--model", "./gens/alpha", "--out", str(tmp_path / "r.jsonl"))
    assert res.exit_code == 2 and len(errors) == 1 and "--family ./gens/alpha=FAMILY" in errors[0]
    assert not loads


def test_generate_records_the_family_given(prompts_file, tmp_path, loads):
    out = tmp_path / "r.jsonl"
    res, _ = _invoke(
        "generate",
        str(prompts_file),
        "--model",
        "./gens/alpha",
        "--family",
        "./gens/alpha=alpha",
        "--out",
        str(out),
        "--no-progress",
    )
    assert res.exit_code == 0, res.output
    assert loads == [{"name": "./gens/alpha", "family": "alpha", "registry_path": None}]
    assert {r.generator_family for r in read_responses(out)} == {"alpha"}


def test_self_preference_of_a_judge_loaded_by_path(responses_file, tmp_path, loads):
    """The planted own-family bonus of a path judge is found once its family is given."""
    out = tmp_path / "study"
    args = [
        "bias",
        "run",
        str(responses_file),
        "--judge",
        "./judges/alpha",
        "--judge",
        "./judges/beta",
        "--out-dir",
        str(out),
        "--bootstrap",
        "300",
        "--no-progress",
        "--json",
    ]
    res, errors = _invoke(*args)
    assert res.exit_code == 2 and "judge './judges/alpha' has no model family" in errors[0]
    assert not loads  # refused before any judge loaded
    res, _ = _invoke(*args, "--family", "./judges/alpha=alpha", "--family", "./judges/beta=beta")
    assert res.exit_code == 0, res.output
    study = json.loads(res.output)
    assert [j["family"] for j in study["judges"]] == ["alpha", "beta"]
    sp = {s["judge"]: s for s in study["pointwise"]["self_preference"]}
    assert sp["./judges/alpha"]["judge_family"] == "alpha"
    assert sp["./judges/alpha"]["did"]["value"] > 0.5 and sp["./judges/alpha"]["did"]["p_value"] < 0.05
    assert abs(sp["./judges/beta"]["did"]["value"]) < 0.5


def test_bias_takes_a_registry_with_models(responses_file, tmp_path, loads):
    (tmp_path / "models.yaml").write_text(REGISTRY)
    res, _ = _invoke(
        "bias",
        "run",
        str(responses_file),
        "--judge",
        "my-judge",
        "--judge",
        "other-judge",
        "--registry",
        str(tmp_path / "models.yaml"),
        "--out-dir",
        str(tmp_path / "s"),
        "--bootstrap",
        "200",
        "--no-progress",
    )
    assert res.exit_code == 0, res.output
    assert [c["family"] for c in loads] == ["alpha", "beta"]
    assert {c["registry_path"] for c in loads} == {tmp_path / "models.yaml"}
    assert "my-judge judge favours its own family" in res.output


@pytest.mark.parametrize(
    "args, needles",
    [
        (["--family", "./judges/alpha"], ["MODEL=FAMILY"]),
        (["--family", "./judges/alpha=unknown"], ["not a family"]),
        (["--family", "./judges/alpha=a", "--family", "./judges/alpha=b"], ["twice"]),
        (["--family", "./judges/alpah=alpha"], ["'./judges/alpah'", "no --judge or generator of that name"]),
        (
            ["--family", "./judges/alpha=alpha", "--family", "gen-beta=gamma"],
            ["'gen-beta'", "recorded with family 'beta'"],
        ),
    ],
    ids=["no-equals", "unknown", "twice", "typo", "contradicts-responses"],
)
def test_bad_family_options(responses_file, tmp_path, loads, args, needles):
    res, errors = _invoke(
        "bias", "run", str(responses_file), "--judge", "./judges/alpha", "--out-dir", str(tmp_path / "s"), *args
    )
    assert res.exit_code == 2 and len(errors) == 1, res.output
    assert all(n in errors[0] for n in needles), errors[0]
    assert not loads


def test_registry_family_cannot_be_contradicted(tmp_path):
    (tmp_path / "models.yaml").write_text(REGISTRY)
    reg = load_registry(tmp_path / "models.yaml")
    assert model_families(["my-judge", "./x"], {"./x": "llama"}, reg, "judge") == {"my-judge": "alpha", "./x": "llama"}
    with pytest.raises(ConfigError, match="registered with family 'alpha', not 'llama'"):
        model_families(["my-judge"], {"my-judge": "llama"}, reg, "judge")
    with pytest.raises(ConfigError, match="has no model family"):
        model_families(["./x"], {}, reg, "judge")


def test_fill_families_and_parse():
    assert parse_families(["a=b=c", " ./m = llama "]) == {"a=b": "c", "./m": "llama"}
    assert fill_families({"g": "unknown", "h": "beta"}, {"g": "alpha"}, "generator") == {"g": "alpha", "h": "beta"}
    with pytest.raises(DataError, match="no model family"):
        fill_families({"g": "unknown"}, {}, "generator")


def test_analysis_refuses_unknown_families(responses_file):
    """The Python API too: a judge of family "unknown" is not compared with anyone."""
    responses = read_responses(responses_file)
    v = judge_responses(
        biased_judge("./j", "unknown"), responses, builtin_metric("correctness"), run=RunOptions(progress=False)
    )
    with pytest.raises(ConfigError, match=re.escape("'./j' has the model family 'unknown'")):
        analyze_judgments([v], responses, responses_file, builtin_metric("correctness"), None, settings=FAST)


def test_load_judge_records_the_family_given(tmp_path, tiny_tokenizer):
    from localjudge import load_judge
    from localjudge.testing.tiny_models import tiny_llama

    tiny_llama(tiny_tokenizer).save_pretrained(tmp_path / "m")
    tiny_tokenizer.save_pretrained(tmp_path / "m")
    assert load_judge(str(tmp_path / "m"), device="cpu").info.family == "unknown"
    assert load_judge(str(tmp_path / "m"), device="cpu", family="llama").info.family == "llama"
    with pytest.raises(ConfigError, match="registered with family 'smollm'"):
        load_judge("smollm2-135m", device="cpu", family="llama")
