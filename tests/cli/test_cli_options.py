"""The CLI's engine flags (built from `EngineOptions`, on every command that loads a judge), and
its files: `score` writes valid JSON for unscored items, `steps --out` refuses to overwrite,
`.TSV` files are tab-separated.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tiny_gguf import write_tiny_gguf

from localjudge.calibration.inputs import load_pairs
from localjudge.cli import main
from localjudge.engine.options import EngineOptions
from localjudge.testing import fake_judge
from localjudge.testing.tiny_models import tiny_llama

LOADING_COMMANDS = ("eval", "score", "steps", "demo", "bias run", "generate")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def fake(localjudge_scripted, monkeypatch, tmp_path):
    """load_judge returns a scripted fake judge; `state["policy"]` says what it answers."""
    state = {"policy": lambda p: {"4": 0.5, "5": 0.5}}
    localjudge_scripted.add_any(lambda asked: fake_judge(state["policy"]))
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return state


# -- engine flags ------------------------------------------------------------------------------------------


def _flag(field: str) -> str:
    return "--" + field.replace("_", "-")


@pytest.mark.parametrize("command", LOADING_COMMANDS)
def test_every_engine_option_is_a_flag_of_every_command_that_loads_a_judge(command):
    result = run(*command.split(), "--help")
    assert result.exit_code == 0, result.output
    for name, field in EngineOptions.model_fields.items():
        assert _flag(name) in result.output, (command, name)
        if field.annotation is bool:
            assert f"--no-{_flag(name)[2:]}" in result.output, (command, name)


ARGS = {
    "eval": ["d.jsonl", "--metric", "correctness"],
    "score": ["Rate it. Score:", "--low", "1", "--high", "5"],
    "steps": ["--metric", "correctness", "--out", "s.yaml"],
    "demo": [],
    "bias run": ["r.jsonl", "--judge", "x", "--out-dir", "o"],
    "generate": ["p.jsonl", "--model", "x", "--out", "g.jsonl"],
}


@pytest.mark.parametrize("command", LOADING_COMMANDS)
@pytest.mark.parametrize(
    "flag, value, needle",
    [
        ("--token-budget", "0", "greater than 0"),
        ("--tree-tolerance", "1.5", "[0, 1)"),
        ("--dtype", "int3", "int3"),
        # torch's RuntimeError once, from inside the load: exit 1 and a list of twenty device types
        ("--device", "tpu", "'tpu' is not a device; use cpu, cuda or cuda:N"),
        ("--device", "cuda:x", "'cuda:x' is not a device"),
    ],
)
def test_a_bad_engine_flag_is_refused_naming_it_before_any_load(no_load, command, flag, value, needle):
    for name in ("d.jsonl", "r.jsonl", "p.jsonl"):
        Path(name).write_text('{"id": "1", "input": "q", "actual_output": "a"}\n')
    result = run(*command.split(), *ARGS[command], flag, value)
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert line.startswith(f"Error: {flag}: ") and needle in line


def test_engine_flags_reach_the_judge(tmp_path, tiny_tokenizer, monkeypatch):
    """A real (tiny) GGUF judge, loaded by `eval` with every engine flag given; its info records them."""
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))
    gguf = write_tiny_gguf(tmp_path / "tiny.gguf", tiny_tokenizer, tiny_llama(tiny_tokenizer))
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "1", "input": "q", "actual_output": "a", "expected_output": "e"}\n')
    flags = ["--device", "cpu", "--dtype", "bf16", "--token-budget", "123", "--tree-tolerance", "0"]
    result = run("eval", data, "--metric", "correctness", "--judge", gguf, *flags, "--no-reuse-prefix", "--json")
    assert result.exit_code == 0, result.output
    judge = json.loads(result.stdout[result.stdout.index("{") :])["judge"]
    assert (judge["device"], judge["dtype"], judge["token_budget"]) == ("cpu", "bfloat16", 123)
    assert judge["tree_tolerance"] == 0 and judge["reuse_prefix"] is False


def test_bias_analyse_has_no_engine_flags(no_load):
    # analysing judgments loads no model: the judging options are not among its own
    Path("r.jsonl").write_text("")
    Path("v.jsonl").write_text("")
    result = run("bias", "analyse", "r.jsonl", "--judgments", "v.jsonl", "--out-dir", "o", "--no-reuse-prefix")
    assert result.exit_code == 2 and "No such option '--no-reuse-prefix'" in result.output


# -- tune's flags, from TuneOptions and HeadOptions ----------------------------------------------------------


def test_every_tune_setting_is_a_flag_of_tune_with_its_default():
    from localjudge.tune.options import TuneOptions

    result = run("tune", "--help")
    assert result.exit_code == 0, result.output
    lora = result.output[result.output.index("LoRA options") :]
    for name, field in TuneOptions.model_fields.items():
        assert f"{_flag(name)} " in lora and f"[default: {field.default}]" in " ".join(lora.split()), name
    # one flag, one meaning: eval's unscored threshold and the ranking command keep their words
    assert "--min-valid-mass " not in result.output and "--rank " not in result.output


@pytest.mark.parametrize(
    "flags, needle",
    [
        (["--method", "lora", "--lora-rank", "0"], "Error: --lora-rank: tune option lora_rank: Input should be"),
        (["--method", "lora", "--rank-temperature", "0"], "Error: --rank-temperature: tune option rank_temperature"),
        (["--folds", "1"], "Error: --folds: head option folds: Input should be greater than or equal to 2"),
        (["--lora-rank", "8"], "Error: --lora-rank is a LoRA setting; pass --method lora, or drop it"),
    ],
)
def test_a_bad_tune_flag_is_refused_naming_it_before_any_load(no_load, tmp_path, flags, needle):
    data = tmp_path / "c.jsonl"
    data.write_text('{"id": "1", "input": "q", "actual_output": "a", "human": 3}\n')
    result = run("tune", data, "--metric", "consistency", "--judge", "x", "--human", "human", "--out", tmp_path / "t",
                 *flags)  # fmt: skip
    assert result.exit_code == 2 and needle in result.output, result.output


def test_seed_is_not_refused_as_a_lora_setting_with_the_head_method(no_load, tmp_path):
    # --seed seeds the heads' folds too: before #71 a head tune refused it as "a LoRA setting"
    data = tmp_path / "c.jsonl"
    data.write_text('{"id": "1", "input": "q", "actual_output": "a", "human": 3}\n')
    result = run("tune", data, "--metric", "consistency", "--judge", "x", "--human", "human", "--out", tmp_path / "t",
                 "--seed", "3")  # fmt: skip
    assert result.output.startswith("Error: UnscriptedLoad") and "is a LoRA setting" not in result.output  # loads


# -- score: valid JSON ------------------------------------------------------------------------------------------


def _strict_json(line: str) -> dict:
    def refuse(constant: str):
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(line, parse_constant=refuse)


def test_score_prints_null_and_the_reason_for_an_unscored_item(fake):
    fake["policy"] = lambda p: {"no": 1.0} if "odd" in p else {"4": 0.5, "5": 0.5}
    result = run("score", "Rate it. Score:", "An odd one. Score:", "--low", "1", "--high", "5")
    assert result.exit_code == 0, result.output
    scored, unscored = [_strict_json(line) for line in result.stdout.splitlines()]
    assert scored["expected"] == 4.5 and scored["unscored_reason"] is None
    assert unscored["expected"] is None and unscored["normalized"] is None and unscored["std"] is None
    assert unscored["entropy"] is None and unscored["mode"] is None and unscored["valid_mass"] == 0.0
    assert set(unscored["probs"].values()) == {None}
    assert "valid_mass below" in unscored["unscored_reason"]


def test_score_labels_stay_valid_json(fake):
    fake["policy"] = lambda p: {"no": 1.0}
    result = run("score", "Which? Answer:", "--labels", "A,B")
    assert result.exit_code == 0, result.output
    row = _strict_json(result.stdout.strip())
    assert row["mode"] is None and row["unscored_reason"]


# -- steps --out ---------------------------------------------------------------------------------------------------


def test_steps_refuses_an_existing_out_without_overwrite(no_load):
    Path("s.yaml").write_text("mine: keep me\n")
    result = run("steps", "--metric", "correctness", "--out", "s.yaml")
    assert result.exit_code == 2
    assert "Error: s.yaml already exists; pass --overwrite to replace it" in result.output
    assert Path("s.yaml").read_text() == "mine: keep me\n"


def test_steps_overwrite_replaces_it(fake):
    Path("s.yaml").write_text("mine: keep me\n")
    result = run("steps", "--metric", "correctness", "--out", "s.yaml", "--overwrite")
    assert result.exit_code == 0, result.output
    assert "name: correctness" in Path("s.yaml").read_text()


# -- TSV, whatever the case of its suffix ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["labels.tsv", "labels.TSV", "labels.Tsv"])
def test_tsv_tables_are_tab_separated_whatever_the_case(tmp_path, name):
    path = tmp_path / name
    path.write_text("judge\thuman\n1.5\t2\n3,5\t4\n", encoding="utf-8")
    with pytest.raises(Exception, match="line 3"):  # "3,5" is one bad cell, not two columns
        load_pairs(path)
    path.write_text("judge\thuman\n1.5\t2\n3.5\t4\n", encoding="utf-8")
    pairs = load_pairs(path)
    assert pairs.judge.tolist() == [1.5, 3.5] and pairs.human.tolist() == [2.0, 4.0]


def test_chunk_size_changes_the_calls_not_the_records(fake, tmp_path):
    import json

    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i}", "input": f"q{i}", "actual_output": f"a{i}"}) + "\n" for i in range(5)),
        encoding="utf-8",
    )
    fake["policy"] = lambda p: {"1": 1.0} if "a3" in p else {"4": 1.0}
    out = {}
    for size in ("1", "16"):
        result = run("eval", "cases.jsonl", "--metric", "completeness", "--chunk-size", size, "--out", f"r{size}.jsonl")
        assert result.exit_code == 0, result.output
        records = [json.loads(line) for line in (tmp_path / f"r{size}.jsonl").read_text().splitlines()]
        out[size] = [(r["case_id"], r["score"]) for r in records]
    assert out["1"] == out["16"] and len(out["1"]) == 5 and out["1"][3][1] != out["1"][0][1]
    assert run("eval", "cases.jsonl", "--metric", "completeness", "--chunk-size", "0").exit_code == 2
