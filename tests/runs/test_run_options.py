"""`RunOptions`: the run settings every command shares, one output-mode check, one judge identity check."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.errors import ConfigError
from localjudge.io.cases import TestCase
from localjudge.metrics import builtin_metric
from localjudge.runs.evaluate import evaluate
from localjudge.runs.generation import generate_responses
from localjudge.runs.options import RunOptions, ScoringOptions
from localjudge.testing import fake_judge


def test_modes_and_the_combination_refused(tmp_path):
    assert RunOptions().mode == "new"
    assert RunOptions(out=tmp_path / "r.jsonl", overwrite=True).mode == "overwrite"
    assert RunOptions(out=tmp_path / "r.jsonl", resume=True).mode == "resume"
    with pytest.raises(ConfigError, match="--resume and --overwrite exclude each other"):
        RunOptions(resume=True, overwrite=True)
    with pytest.raises(ConfigError, match="--resume needs --out"):
        RunOptions(resume=True).check_output()
    with pytest.raises(ConfigError, match="run option resmue: Extra inputs"):  # a misspelt setting is refused
        RunOptions(resmue=True)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "resumable, hint", [(True, "pass --resume to continue it or --overwrite"), (False, "pass --overwrite to replace")]
)
def test_one_output_mode_check(tmp_path, resumable, hint):
    out = tmp_path / "r.jsonl"
    RunOptions(out=out).check_output(resumable)  # absent: fine
    out.write_text("")
    RunOptions(out=out).check_output(resumable)  # empty: fine
    out.write_text("x\n")
    with pytest.raises(ConfigError, match=f"already exists; {hint}"):
        RunOptions(out=out).check_output(resumable)
    RunOptions(out=out, overwrite=True).check_output(resumable)
    RunOptions(out=out, resume=True).check_output(resumable)


def test_every_writer_gives_the_same_refusal(tmp_path):
    out = tmp_path / "r.jsonl"
    out.write_text("x\n")
    case = TestCase(id="c", input="q", actual_output="a", expected_output="a")
    judge = fake_judge(lambda p: {"4": 1.0})
    expected = f"{out} already exists; pass --resume to continue it or --overwrite to replace it"
    with pytest.raises(ConfigError) as by_evaluate:
        evaluate([case], [builtin_metric("correctness")], judge, out=out, progress=False)
    with pytest.raises(ConfigError) as by_generation:
        generate_responses([case], judge, RunOptions(out=out, progress=False))
    assert str(by_evaluate.value) == str(by_generation.value) == expected
    assert judge.backend.calls == []  # refused before any model call
    with pytest.raises(ConfigError, match="exclude each other"):
        evaluate([case], [builtin_metric("correctness")], judge, out=out, resume=True, overwrite=True)


@pytest.mark.parametrize("command", [["eval", "DATA", "--metric", "correctness"], ["generate", "DATA", "--model", "m"]])
def test_the_cli_flags_build_one_run_options(tmp_path, no_load, command):
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "c", "input": "q", "actual_output": "a", "expected_output": "a"}\n')
    args = [str(data) if a == "DATA" else a for a in command]
    res = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "o.jsonl"), "--resume", "--overwrite"])
    assert res.exit_code == 2 and "Error: --resume and --overwrite exclude each other" in res.output
    (tmp_path / "o.jsonl").write_text("x\n")
    res = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "o.jsonl")])
    assert res.exit_code == 2 and "already exists; pass --resume to continue it" in res.output


def test_one_judge_identity_check(tmp_path):
    case = TestCase(id="c", input="q", actual_output="a", expected_output="a")
    out = tmp_path / "r.jsonl"
    evaluate([case], [builtin_metric("correctness")], fake_judge(lambda p: {"4": 1.0}), out=out, progress=False)
    other = fake_judge(lambda p: {"4": 1.0}, name="other")
    with pytest.raises(ConfigError, match=r"holds results of judge 'fake'.*resume with the same judge and dtype"):
        evaluate([case], [builtin_metric("faithfulness")], other, out=out, resume=True, progress=False)
    # generation resumes through the same check: other weights (provenance) are refused
    responses = tmp_path / "g.jsonl"
    generate_responses([case], fake_judge(lambda p: {}), RunOptions(out=responses, progress=False))
    moved = fake_judge(lambda p: {})
    moved.info = moved.info.model_copy(update={"provenance": "other-weights"})
    with pytest.raises(ConfigError, match="holds results of judge 'fake' \\('fake', 'float32'\\)"):
        generate_responses(
            [case, TestCase(id="d", input="q2")], moved, RunOptions(out=responses, resume=True, progress=False)
        )


def test_scoring_options_and_the_keywords_that_build_them(tmp_path):
    case = TestCase(id="c", input="q", actual_output="a", expected_output="a")
    metric = builtin_metric("correctness")
    with pytest.raises(
        ConfigError, match=re.escape("min_valid_mass 2 is not a share of probability; give one in 0..1")
    ):
        ScoringOptions(min_valid_mass=2)
    with pytest.raises(ConfigError, match="scoring option hardend: Extra inputs are not permitted"):
        ScoringOptions(hardend=False)  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match="scoring option chunk_size: Input should be a valid integer"):
        ScoringOptions(chunk_size="many")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="scoring option chunk_size: Input should be greater than or equal to 1"):
        ScoringOptions(chunk_size=0)  # not the default chunk, as `chunk_size or 16` read it
    # the object or its fields as keywords (typed: `EvaluateKeywords`): the same records
    scoring = ScoringOptions(hardened=False, min_valid_mass=0.3)
    by_object = evaluate(
        [case], [metric], fake_judge(lambda p: {"4": 1.0}), scoring=scoring, run=RunOptions(progress=False)
    )
    by_keywords = evaluate(
        [case], [metric], fake_judge(lambda p: {"4": 1.0}), hardened=False, min_valid_mass=0.3, progress=False
    )
    assert by_object.records == by_keywords.records
    assert by_object.records[0].min_valid_mass == 0.3
    # never both, even with equal values: one call has one place for each setting
    run = RunOptions(out=tmp_path / "r.jsonl", progress=False)
    for given in ({"scoring": scoring}, {"run": run}):
        with pytest.raises(ConfigError, match=re.escape("evaluate: give run= and scoring=, or their fields")):
            evaluate([case], [metric], fake_judge(lambda p: {}), **given, min_valid_mass=0.3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="evaluate\\(\\) got an unexpected keyword argument 'skip_invalid'"):
        evaluate([case], [metric], fake_judge(lambda p: {}), skip_invalid=True)  # type: ignore[call-arg]


def test_the_typed_keywords_are_the_options_fields():
    from localjudge.runs.options import EvaluateKeywords

    run_fields = set(RunOptions.model_fields) - {"skip_invalid"}  # a loading setting: evaluate reads no file
    assert EvaluateKeywords.__optional_keys__ == run_fields | set(ScoringOptions.model_fields)


def test_every_options_model_words_its_errors_alike():
    from localjudge.engine.options import EngineOptions

    for model, label in (
        (EngineOptions, "engine option"),
        (RunOptions, "run option"),
        (ScoringOptions, "scoring option"),
    ):
        with pytest.raises(ConfigError) as err:
            model(nope=1)
        assert str(err.value) == (
            f"{label} nope: Extra inputs are not permitted (got 1); valid options: {', '.join(model.model_fields)}"
        )


def test_the_engine_keywords_are_the_engine_options_fields():
    from localjudge.engine.options import RUNTIME_FIELDS, EngineKeywords, EngineOptions, RuntimeKeywords

    assert RuntimeKeywords.__optional_keys__ == set(RUNTIME_FIELDS)
    assert EngineKeywords.__optional_keys__ == set(EngineOptions.model_fields)
