"""`localjudge inspect JUDGE` and `inspect_judge`: on the fake judge and a model directory; bad arguments
exit 2 with one line before any model loads (the embedded judge and its .gguf: `tests/real/test_inspect_real.py`)."""

from __future__ import annotations

import copy

import pytest
from cli_checks import assert_user_error
from click.testing import CliRunner
from inspect_report import assert_paths_decode, report_json, run, spelling_paths

from localjudge import load_judge
from localjudge.cli import main
from localjudge.runs.inspection import inspect_judge
from localjudge.testing import fake_judge
from localjudge.testing.tiny_models import tiny_llama

pytestmark = pytest.mark.usefixtures("torch_one_thread")

TEMPLATE = (
    "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


# -- the fake judge: the report's parts --------------------------------------------------------------------


def test_fake_judge_report():
    judge = fake_judge(lambda prompt: {"4": 0.3, " 5": 0.3} if "Paris" in prompt else {"1": 0.6})
    report = inspect_judge(judge, low=1, high=5)
    assert report.scale == "1-5" and report.judge == judge.info
    assert [s.value for s in report.spellings] == [1, 2, 3, 4, 5]
    assert [[t.text for t in p] for p in report.spellings[4].paths] == [["5"], [" ", "5"]]
    right, wrong = report.probes
    assert "Paris" in right.prompt and "Lyon" in wrong.prompt and right.prompt.endswith("Score:")
    assert (right.valid_mass, right.mode, right.expected) == (pytest.approx(0.6), 4, pytest.approx(4.5))
    assert (wrong.valid_mass, wrong.mode, wrong.scored) == (pytest.approx(0.6), 1, True)
    labels = inspect_judge(judge, labels=["A", "B"], probes=["x Answer:"])
    assert labels.scale == "A,B" and [p.prompt for p in labels.probes] == ["x Answer:"]
    assert not labels.probes[0].scored and labels.probes[0].expected is None
    assert {tuple(t.text for t in p) for p in labels.spellings[0].paths} == {("A",), (" ", "A"), ("a",), (" ", "a")}


def test_fake_judge_cli_text_and_json(localjudge_scripted):
    judge = fake_judge(lambda prompt: {"7": 0.9})
    localjudge_scripted.add_any(judge)
    code, text = run("fake", "--low", "0", "--high", "10")
    assert code == 0, text
    assert "scale 0-10: 22 token paths, 24 tree nodes" in text  # "0".."9", "1"+"0"; each also after " "
    assert '  10: 17 "1" + 16 "0" | 0 " " + 17 "1" + 16 "0"' in text
    assert "probe 1: valid mass 0.900 (scored, expected 7.00)" in text
    code, out = run("fake", "--labels", "Yes,No", "--json")
    assert code == 0, out
    report = report_json(out)
    assert report["scale"] == "Yes,No" and report["judge"]["name"] == "fake"
    assert {"".join(p) for p in spelling_paths(report, "Yes")} == {"Yes", " Yes", "yes", " yes", "YES", " YES"}


def test_judge_is_required_as_the_usage_says(localjudge_scripted):
    localjudge_scripted.add_any(lambda asked: pytest.fail("no judge was named"))
    result = CliRunner().invoke(main, ["inspect", "--low", "1", "--high", "5"])
    assert result.exit_code == 2 and "Missing argument 'JUDGE'" in result.output
    assert "Usage:" in CliRunner().invoke(main, ["inspect", "--help"]).output.splitlines()[0]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--labels", "A,B", "--low", "1"], "not both"),
        (["--low", "5", "--high", "1"], "invalid score scale 5..1"),
        (["--low", "3"], "give a scale with --low and --high"),
        (["--labels", "A,a"], "share the spelling"),
        (["--probe", " "], "a --probe is empty"),
    ],
)
def test_bad_arguments_exit_2_before_loading(no_load, args, needle):
    assert_user_error(CliRunner().invoke(main, ["inspect", "smollm2-135m", *args]), needle)


def test_unavailable_judges_exit_2(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    missing = tmp_path / "judge.gguf"
    assert_user_error(CliRunner().invoke(main, ["inspect", str(missing)]), "does not exist")
    assert_user_error(CliRunner().invoke(main, ["inspect", "localjudge-tests/no-such-model"]), "not in the local cache")
    assert_user_error(CliRunner().invoke(main, ["inspect", "no-such-judge"]), "unknown judge")


# -- a model directory ---------------------------------------------------------------------------------------


def test_model_directory(tmp_path, tiny_tokenizer):
    tok = copy.deepcopy(tiny_tokenizer)
    tok.chat_template = TEMPLATE
    tiny_llama(tok).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    code, out = run(tmp_path, "--json", "--dtype", "float32", "--device", "cpu")
    assert code == 0, out
    report = report_json(out)
    info, model = report["judge"], report["model"]
    assert (info["source"], info["provenance"], info["family"]) == (f"dir:{tmp_path}", "revision:local", "unknown")
    assert (info["dtype"], info["device"], info["context_length"], info["chat_template"]) == (
        "float32",
        "cpu",
        4096,
        True,
    )
    assert (model["architecture"], model["chat_template"], model["vocab_size"]) == ("llama", TEMPLATE, len(tok))
    assert model["logit_rows"] == len(tok) and model["parameters"] > 0
    # the tiny tokenizer merges numerals: "10" is one token or two; " 10" one, two or three
    assert sorted(map(len, spelling_paths(report, 10))) == [1, 1, 2, 2, 2, 3]
    assert_paths_decode(tok, report)
    probe = report["probes"][0]
    assert probe["prompt"].startswith("<|system|>\n") and probe["prompt"].endswith("<|assistant|>\nScore:")
    again = load_judge(str(tmp_path)).score_texts([probe["prompt"]], 1, 10, min_valid_mass=0.0)[0]
    assert probe["valid_mass"] == pytest.approx(again.valid_mass, abs=1e-6)  # batched with the other probe
