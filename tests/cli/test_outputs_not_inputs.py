"""Input data is never overwritten: an output that is an input (same path, symlink, hard link) is
a user error, exit 2, with or without --overwrite, and the input keeps its bytes.

Covered for every command that writes: eval (data, metric files, style guide, registry),
steps (metric file, style guide), generate (prompts), bias (responses, metric files) and
calibrate (its input, from --out or a plot). No judge loads: the check comes first.
"""

from __future__ import annotations

import json
import os

import pytest
from cli_checks import GOOD, METRIC, assert_user_error, run, write_files

from localjudge.errors import ConfigError
from localjudge.io.files import refuse_overwriting

REGISTRY = (
    "default: x\njudges:\n - {name: x, family: f, source: {kind: hub, repo: a/b, revision: main}, context_length: 64}\n"
)
CALIB = "judge,human\n1,1\n2,3\n3,2\n4,4\n"


@pytest.fixture
def no_load(no_load):
    """conftest's `no_load` (no model loads, in tmp_path), with every command's inputs written there."""
    write_files(
        {
            "d.jsonl": GOOD,
            "m.yaml": METRIC,
            "g.md": "Be brief.\n",
            "r.yaml": REGISTRY,
            "p.jsonl": GOOD,
            "resp.jsonl": "",
            "c.csv": CALIB,
        }
    )
    os.mkdir("out")


# (input file, command line with OUT where the output goes)
CASES = {
    "eval data": ("d.jsonl", ["eval", "d.jsonl", "--metric", "correctness", "--out", "OUT"]),
    "eval data --overwrite": ("d.jsonl", ["eval", "d.jsonl", "--metric", "correctness", "--out", "OUT", "--overwrite"]),
    "eval data --resume": ("d.jsonl", ["eval", "d.jsonl", "--metric", "correctness", "--out", "OUT", "--resume"]),
    "eval metric file": (
        "m.yaml",
        ["eval", "d.jsonl", "--metric", "correctness", "--metric", "m.yaml", "--out", "OUT", "--overwrite"],
    ),
    "eval style guide": (
        "g.md",
        ["eval", "d.jsonl", "--metric", "style", "--style-guide", "g.md", "--out", "OUT", "--overwrite"],
    ),
    "eval registry": (
        "r.yaml",
        ["eval", "d.jsonl", "--metric", "correctness", "--registry", "r.yaml", "--out", "OUT", "--overwrite"],
    ),
    "steps metric file": ("m.yaml", ["steps", "--metric", "m.yaml", "--out", "OUT"]),
    "steps style guide": ("g.md", ["steps", "--metric", "style", "--style-guide", "g.md", "--out", "OUT"]),
    "generate prompts": ("p.jsonl", ["generate", "p.jsonl", "--model", "g", "--out", "OUT", "--overwrite"]),
    "calibrate --out": ("c.csv", ["calibrate", "agreement", "c.csv", "--out", "OUT", "--no-plots"]),
}


def _link(kind: str, target: str, name: str) -> str:
    if kind == "symlink":
        os.symlink(os.path.abspath(target), name)
    elif kind == "hard link":
        os.link(target, name)
    else:
        return target
    return name


@pytest.mark.parametrize("kind", ["same path", "symlink", "hard link"])
@pytest.mark.parametrize("key", CASES, ids=CASES)
def test_output_that_is_an_input_is_refused(no_load, key, kind):
    target, args = CASES[key]
    before = open(target, "rb").read()
    out = _link(kind, target, "out/alias" + os.path.splitext(target)[1])
    line = assert_user_error(run(*[out if a == "OUT" else a for a in args]), out, target, "never writes over")
    assert len(line) < 300
    assert open(target, "rb").read() == before


def test_bias_out_dir_files_are_checked(no_load):
    """The responses file hard-linked as a file the study writes, or the pairwise metric file there."""
    os.link("resp.jsonl", "out/report.md")
    assert_user_error(
        run("bias", "run", "resp.jsonl", "--judge", "j", "--out-dir", "out"), "out/report.md", "resp.jsonl"
    )
    os.remove("out/report.md")
    write_files({"pw.yaml": "kind: pairwise\nname: pw\ntask: Compare.\ncriteria: Which is better?\n"})
    os.makedirs("out/records")
    os.symlink(os.path.abspath("pw.yaml"), "out/records/j.pw.jsonl")
    assert_user_error(
        run("bias", "run", "resp.jsonl", "--judge", "j", "--metric", "pw.yaml", "--out-dir", "out"),
        "j.pw.jsonl",
        "pw.yaml",
    )


def test_calibrate_plot_that_is_the_input_is_refused(no_load):
    os.makedirs("plots")
    os.link("c.csv", "plots/calibration_scatter.png")
    assert_user_error(run("calibrate", "agreement", "c.csv", "--plots", "plots"), "calibration_scatter.png", "c.csv")
    assert open("c.csv").read() == CALIB


def test_a_file_inside_a_model_folder_is_an_input(tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    with pytest.raises(ConfigError, match="is in the judge model"):
        refuse_overwriting([tmp_path / "model" / "config.json"], [("judge model", tmp_path / "model")])
    refuse_overwriting(
        [tmp_path / "model" / "new.jsonl", tmp_path / "other.jsonl"],
        [("judge model", tmp_path / "model"), ("data file", None)],
    )  # not inputs: fine


def test_other_outputs_still_work(localjudge_scripted, no_load):
    """The control: a fresh output path is accepted (here up to the point where a judge would load)."""
    from localjudge.testing import fake_judge

    localjudge_scripted.add_any(lambda asked: fake_judge(lambda p: {"4": 1.0}))
    result = run("eval", "d.jsonl", "--metric", "correctness", "--out", "out/r.jsonl")
    assert result.exit_code == 0, result.output
    assert json.loads(open("out/r.jsonl").readline())["case_id"] == "a"
    assert open("d.jsonl").read() == GOOD
