"""Bad input at the command line: exit 2, ONE "Error: ..." line naming the problem, no traceback.

Every command (eval, score, steps, calibrate, models) is fed malformed data files, metric files
and judge registries. Runtime failures (the backend raising) exit 1 with a message. A scripted
fake judge stands in wherever a judge is needed, so the battery runs in seconds.
"""

from __future__ import annotations

import json
import re

import pytest
from cli_checks import (
    GOOD,
    GOOD_ROW,
    METRIC,
    REGISTRY_ENTRY,
    assert_user_error,
    install_fake,
    policy,
    run,
    short_judge,
    write_files,
)
from click.testing import CliRunner

from localjudge.testing import fake_judge


@pytest.fixture
def fake(localjudge_scripted, monkeypatch, tmp_path):
    """`install_fake`, as a fixture (other modules define theirs with it)."""
    return install_fake(localjudge_scripted, monkeypatch, tmp_path)


# -- data files (eval) ---------------------------------------------------------------------------

DATA_CASES = {
    "missing file": ({}, "nope.jsonl", ["nope.jsonl"]),
    "empty file": ({"d.jsonl": ""}, "d.jsonl", ["d.jsonl", "no test cases"]),
    "blank lines only": ({"d.jsonl": "\n  \n"}, "d.jsonl", ["d.jsonl", "no test cases"]),
    "non-UTF-8": ({"d.jsonl": GOOD.encode() + b'{"id": "b", "input": "caf\xe9"}\n'}, "d.jsonl", ["d.jsonl:2", "UTF-8"]),
    "malformed JSONL": ({"d.jsonl": GOOD + '{"id": "b", "input": \n'}, "d.jsonl", ["d.jsonl:2", "invalid JSON"]),
    "deeply nested JSON": (
        {"d.jsonl": "[" * 100_000 + "]" * 100_000 + "\n"},
        "d.jsonl",
        ["d.jsonl:1", "nested too deeply"],
    ),
    "row not an object": ({"d.jsonl": GOOD + "[1, 2]\n"}, "d.jsonl", ["d.jsonl:2", "expected an object", "list"]),
    "text field wrong type": ({"d.jsonl": '{"id": "a", "input": 3}\n'}, "d.jsonl", ["d.jsonl:1", "'input'", "string"]),
    "list field wrong type": ({"d.jsonl": '{"id": "a", "context": [1, 2]}\n'}, "d.jsonl", ["d.jsonl:1", "'context'"]),
    "id wrong type": ({"d.jsonl": '{"id": [1], "input": "q"}\n'}, "d.jsonl", ["d.jsonl:1", "'id'"]),
    "duplicate ids": ({"d.jsonl": GOOD + GOOD}, "d.jsonl", ["d.jsonl:2", "duplicate id 'a'", "line 1"]),
    "json not a list": ({"d.json": json.dumps({"id": "a"})}, "d.json", ["d.json", "list"]),
    "malformed json": ({"d.json": '[{"id": "a"},\n {"id": }]'}, "d.json", ["d.json:2", "invalid JSON"]),
    "csv stray quote": ({"d.csv": 'id,input\na,q\n"b,"c\n'}, "d.csv", ["d.csv:3", "malformed CSV"]),
    "csv more values": ({"d.csv": "id,input\na,q,extra\n"}, "d.csv", ["d.csv:2", "more values"]),
    "csv fewer values": (
        {"d.csv": "id,input,actual_output\na,q\n"},
        "d.csv",
        ["d.csv:2", "fewer values", "'actual_output'"],
    ),
    "csv repeated column": ({"d.csv": "id,input,input\na,q,r\n"}, "d.csv", ["d.csv:1", "'input'"]),
    "csv duplicate ids": ({"d.csv": "id,input\na,q\na,r\n"}, "d.csv", ["d.csv:3", "duplicate id 'a'"]),
    "csv non-UTF-8": ({"d.csv": b"id,input\na,\xff\n"}, "d.csv", ["d.csv:2", "UTF-8"]),
    "unknown format": ({"d.txt": GOOD}, "d.txt", ["d.txt", "'.txt'"]),
}


@pytest.mark.parametrize("files, data, needles", DATA_CASES.values(), ids=DATA_CASES.keys())
def test_eval_bad_data(fake, files, data, needles):
    write_files(files)
    assert_user_error(run("eval", data, "--metric", "correctness"), *needles)
    assert not fake.backend.calls  # nothing judged on bad input


def test_eval_data_is_a_directory(fake, tmp_path):
    assert_user_error(run("eval", str(tmp_path), "--metric", "correctness"), str(tmp_path), "directory")


def test_missing_fields_are_unscored_not_errors(fake):
    """A case without a field the metric needs is kept, unscored with the reason; the others are scored."""
    write_files({"d.jsonl": GOOD + json.dumps({"id": "b", "input": "q", "actual_output": ""}) + "\n"})
    result = run("eval", "d.jsonl", "--metric", "correctness", "--out", "r.jsonl")
    assert result.exit_code == 0, result.output
    recs = {r["case_id"]: r for r in map(json.loads, open("r.jsonl"))}
    assert recs["a"]["score"] is not None
    assert recs["b"]["score"] is None and "actual_output" in recs["b"]["unscored_reason"]
    assert "expected_output" in recs["b"]["unscored_reason"]


def test_skip_invalid_lists_each_row_and_scores_the_rest(fake):
    rows = [
        GOOD,
        '{"id": "b", "input": \n',
        json.dumps({"id": "c", **GOOD_ROW}) + "\n",
        '{"id": "d", "input": 7}\n',
        GOOD,
    ]  # line 5 repeats id "a"
    write_files({"d.jsonl": "".join(rows)})
    result = run("eval", "d.jsonl", "--metric", "correctness", "--skip-invalid", "--out", "r.jsonl")
    assert result.exit_code == 0, result.output
    skipped = [line for line in result.output.splitlines() if line.startswith("skipped:")]
    assert len(skipped) == 3
    assert "d.jsonl:2" in skipped[0] and "invalid JSON" in skipped[0]
    assert "d.jsonl:4" in skipped[1] and "'input'" in skipped[1]
    assert "d.jsonl:5" in skipped[2] and "duplicate id 'a'" in skipped[2]
    recs = [json.loads(line) for line in open("r.jsonl")]
    assert sorted(r["case_id"] for r in recs) == ["a", "c"]
    assert all(r["score"] is not None for r in recs)


def test_skip_invalid_csv_rows(fake):
    write_files({"d.csv": "id,input,actual_output,expected_output\na,q,x,y\nb,q\nc,q,x,y,z\nd,q,x,y\n"})
    result = run("eval", "d.csv", "--metric", "correctness", "--skip-invalid", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{") :])
    assert [s.split(":")[1] for s in summary["skipped_rows"]] == ["3", "4"]
    assert summary["summaries"][0]["n"] == 2


@pytest.mark.parametrize(
    "name, content, lines",
    [
        ("d.jsonl", '{"id": 1, "input": 2}\n{"id": \n[3]\n', ["d.jsonl:1", "d.jsonl:2", "d.jsonl:3"]),
        ("d.json", '[{"id": 1, "input": 2}, [3]]', ["d.json:1", "d.json:2"]),
        ("d.csv", "id,input,actual_output\na,q\nb,q,x,y\n", ["d.csv:2", "d.csv:3"]),  # every row ragged
    ],
    ids=["jsonl", "json", "csv"],
)
def test_skip_invalid_with_nothing_valid_lists_every_row_then_fails(fake, name, content, lines):
    """Regression: with every row invalid the run stopped without listing what it skipped, and a
    CSV (or JSONL) whose rows were all malformed was reported as holding no test cases at all."""
    write_files({name: content})
    result = run("eval", name, "--metric", "correctness", "--skip-invalid")
    assert_user_error(result, name, "no valid test cases", f"all {len(lines)} rows are invalid")
    skipped = [line for line in result.output.splitlines() if line.startswith("skipped:")]
    assert [s.split()[1].rstrip(":") for s in skipped] == lines
    assert not fake.backend.calls


def test_existing_results_are_not_lost(fake):
    write_files({"d.jsonl": GOOD, "r.jsonl": '{"keep": "me"}\n'})
    assert_user_error(
        run("eval", "d.jsonl", "--metric", "correctness", "--out", "r.jsonl"), "r.jsonl", "--resume", "--overwrite"
    )
    assert open("r.jsonl").read() == '{"keep": "me"}\n'


@pytest.mark.parametrize(
    "args, needles",
    [
        (["--resume"], ["--resume needs --out"]),
        (["--resume", "--overwrite", "--out", "r.jsonl"], ["--resume", "--overwrite"]),
        (["--limit", "0"], ["--limit"]),
        (["--limit", "x"], ["--limit"]),
        (["--reasoning", "sideways"], ["--reasoning"]),
        (["--dtype", "int3"], ["--dtype"]),
        (["--style-guide", "nofile.md"], ["nofile.md"]),
    ],
    ids=["resume-no-out", "resume-overwrite", "limit-0", "limit-text", "reasoning", "dtype", "style-guide"],
)
def test_eval_bad_options(fake, args, needles):
    write_files({"d.jsonl": GOOD})
    assert_user_error(run("eval", "d.jsonl", "--metric", "correctness", *args), *needles)


def test_resume_with_a_file_that_is_not_results(fake):
    write_files({"d.jsonl": GOOD, "r.jsonl": '{"not": "a record"}\n'})
    assert_user_error(
        run("eval", "d.jsonl", "--metric", "correctness", "--out", "r.jsonl", "--resume"),
        "r.jsonl:1",
        "not a localjudge result record",
    )


# -- metric files (eval and steps) ----------------------------------------------------------------

METRIC_CASES = {
    "empty file": ("", ["m.yaml", "mapping"]),
    "a list": ("- a\n- b\n", ["m.yaml", "mapping"]),
    "malformed YAML": ("name: m\ntask: [\n", ["m.yaml:3", "invalid YAML"]),
    "non-UTF-8": (b"name: m\xff\n", ["m.yaml"]),
    "missing criteria": (METRIC.replace("criteria: Is it right?\n", ""), ["criteria", "Field required"]),
    "empty task": (METRIC.replace("task: Judge it.", "task: ''"), ["task"]),
    "fields not a list": (METRIC.replace("[input, actual_output]", "input"), ["fields", "list"]),
    "unknown field": (METRIC.replace("[input, actual_output]", "[inptu]"), ["fields.0", "'input'"]),
    "low not an integer": (METRIC + "low: one\n", ["low", "integer"]),
    "reversed scale": (METRIC + "low: 5\nhigh: 1\n", ["invalid scale 5..1"]),
    "empty scale": (METRIC + "low: 3\nhigh: 3\n", ["invalid scale 3..3"]),
    "scale above 100": (METRIC + "low: 0\nhigh: 1000\n", ["invalid scale 0..1000"]),
    "negative scale": (METRIC + "low: -1\nhigh: 5\n", ["invalid scale -1..5"]),
    "threshold above 1": (METRIC + "threshold: 2\n", ["threshold"]),
    "rubric overlap": (
        METRIC + "rubric: [{low: 1, high: 3, description: a}, {low: 3, high: 5, description: b}]\n",
        ["rubric ranges 1-3 and 3-5 overlap"],
    ),
    "rubric reversed": (METRIC + "rubric: [{low: 4, high: 2, description: a}]\n", ["rubric range 4-2 is reversed"]),
    "rubric outside scale": (
        METRIC + "rubric: [{low: 1, high: 7, description: a}]\n",
        ["1-7", "outside the scale 1..5"],
    ),
    "rubric no description": (METRIC + "rubric: [{low: 1, high: 2}]\n", ["rubric.0.description"]),
    "rubric not a list": (METRIC + "rubric: bad\n", ["rubric"]),
    "empty steps": (METRIC.replace("steps: [Check it.]", "steps: []"), ["steps"]),
    "unknown key": (METRIC + "bogus_key: 1\n", ["bogus_key"]),
    "required not in fields": (METRIC + "required: [expected_output]\n", ["required"]),
}


@pytest.mark.parametrize("content, needles", METRIC_CASES.values(), ids=METRIC_CASES.keys())
@pytest.mark.parametrize("command", ["eval", "steps"])
def test_bad_metric_file(fake, command, content, needles):
    write_files({"d.jsonl": GOOD, "m.yaml": content})
    args = (
        ["eval", "d.jsonl", "--metric", "m.yaml"]
        if command == "eval"
        else ["steps", "--metric", "m.yaml", "--out", "o.yaml"]
    )
    assert_user_error(run(*args), *needles)


def test_bad_json_metric_file(fake):
    write_files({"d.jsonl": GOOD, "m.json": '{"name": "m",'})
    assert_user_error(run("eval", "d.jsonl", "--metric", "m.json"), "m.json")


@pytest.mark.parametrize(
    "metric, needles",
    [
        ("correctnes", ["unknown metric 'correctnes'", "'correctness'"]),
        ("fluensy", ["unknown metric 'fluensy'", "'fluency'"]),
        ("nofile.yaml", ["nofile.yaml"]),
        ("style", ["--style-guide"]),
    ],
)
@pytest.mark.parametrize("command", ["eval", "steps"])
def test_unknown_metric(fake, command, metric, needles):
    write_files({"d.jsonl": GOOD})
    args = (
        ["eval", "d.jsonl", "--metric", metric]
        if command == "eval"
        else ["steps", "--metric", metric, "--out", "o.yaml"]
    )
    assert_user_error(run(*args), *needles)


def test_steps_of_a_pairwise_metric(fake):
    assert_user_error(run("steps", "--metric", "pairwise", "--out", "o.yaml"), "G-Eval")


def test_steps_judge_writes_no_steps(localjudge_scripted, monkeypatch, tmp_path):
    judge = fake_judge(policy, generator=lambda prompt: "")
    localjudge_scripted.add_any(judge)
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    write_files({"m.yaml": METRIC.replace("steps: [Check it.]\n", "")})
    assert_user_error(run("steps", "--metric", "m.yaml", "--out", "o.yaml"), "no usable evaluation steps", "steps:")
    assert not (tmp_path / "o.yaml").exists()


# -- judges and models.yaml -------------------------------------------------------------------------

REGISTRY_CASES = {
    "missing file": (None, ["nofile.yaml"]),
    "malformed YAML": ("default: x\njudges: [\n", ["models.yaml:3", "invalid YAML"]),
    "non-UTF-8": (b"default: x\xff\n", ["models.yaml"]),
    "not a mapping": ("- x\n", ["models.yaml"]),
    "no judges": ("default: x\n", ["models.yaml", "judges"]),
    "missing revision": (
        "default: x\njudges:\n - {name: x, family: f, source: {kind: hub, repo: a/b}, context_length: 9}\n",
        ["judges.0.source.hub.revision", "Field required"],
    ),
    "context_length wrong type": (
        f"default: x\njudges:\n - {REGISTRY_ENTRY.replace('64', 'long')}\n",
        ["judges.0.context_length"],
    ),
    "context_length zero": (
        f"default: x\njudges:\n - {REGISTRY_ENTRY.replace('64', '0')}\n",
        ["judges.0.context_length", "greater than 0"],
    ),
    "unknown source kind": (
        "default: x\njudges:\n - {name: x, family: f, source: {kind: ftp}, context_length: 9}\n",
        ["judges.0.source", "'ftp'"],
    ),
    "unknown key": (f"default: x\njudges:\n - {REGISTRY_ENTRY[:-1]}, speed: fast}}\n", ["judges.0.speed"]),
    "trust_remote_code not a bool": (
        f"default: x\njudges:\n - {REGISTRY_ENTRY[:-1]}, trust_remote_code: maybe}}\n",
        ["judges.0.trust_remote_code"],
    ),
    "repeated names": (f"default: x\njudges:\n - {REGISTRY_ENTRY}\n - {REGISTRY_ENTRY}\n", ["repeated", "'x'"]),
    "unknown default": (f"default: y\njudges:\n - {REGISTRY_ENTRY}\n", ["unknown judge 'y'"]),
}


@pytest.mark.parametrize("content, needles", REGISTRY_CASES.values(), ids=REGISTRY_CASES.keys())
def test_bad_registry_models_command(tmp_path, monkeypatch, content, needles):
    monkeypatch.chdir(tmp_path)
    name = "nofile.yaml" if content is None else "models.yaml"
    if content is not None:
        write_files({name: content})
    assert_user_error(run("models", "--registry", name), *needles)


@pytest.mark.parametrize("key", ["malformed YAML", "missing revision", "unknown default"])
def test_bad_registry_eval(tmp_path, monkeypatch, key):
    """`eval --registry FILE` reads the registry through the real `load_judge` (fails before any weights)."""
    monkeypatch.chdir(tmp_path)
    content, needles = REGISTRY_CASES[key]
    write_files({"models.yaml": content, "d.jsonl": GOOD})
    assert_user_error(run("eval", "d.jsonl", "--metric", "correctness", "--registry", "models.yaml"), *needles)


@pytest.mark.parametrize(
    "judge, needles",
    [
        ("smolm2-135m", ["unknown judge 'smolm2-135m'", "'smollm2-135m'"]),
        ("gemma-270m", ["unknown judge 'gemma-270m'", "'gemma3-270m'"]),
        ("no/such/dir", ["'no/such/dir'"]),
        ("missing.gguf", ["missing.gguf", "does not exist"]),
    ],
)
def test_unknown_judge(tmp_path, monkeypatch, judge, needles):
    monkeypatch.chdir(tmp_path)
    write_files({"d.jsonl": GOOD})
    assert_user_error(run("eval", "d.jsonl", "--metric", "correctness", "--judge", judge), *needles)


def test_cuda_requested_without_cuda(tmp_path, monkeypatch):
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    monkeypatch.chdir(tmp_path)
    write_files({"d.jsonl": GOOD})
    assert_user_error(run("eval", "d.jsonl", "--metric", "correctness", "--device", "cuda"), "CUDA", "--device cpu")


# -- context length -----------------------------------------------------------------------------------


def test_too_long_input_names_case_and_tokens(localjudge_scripted, fake):
    judge = short_judge(localjudge_scripted, 3000)
    long = {"id": "long-one", **GOOD_ROW, "input": "word " * 1000}
    write_files({"d.jsonl": GOOD + json.dumps(long) + "\n"})
    line = assert_user_error(
        run("eval", "d.jsonl", "--metric", "correctness", "--out", "r.jsonl"), "case 'long-one'", "3000", "--truncate"
    )
    n = int(re.search(r"has (\d+) tokens", line).group(1))
    assert n > 3000
    assert not judge.backend.calls  # checked before any scoring


def test_truncate_records_what_it_cut(localjudge_scripted, fake):
    short_judge(localjudge_scripted, 3000)
    long = {"id": "long-one", **GOOD_ROW, "input": "word " * 1000}
    write_files({"d.jsonl": GOOD + json.dumps(long) + "\n"})
    result = run("eval", "d.jsonl", "--metric", "correctness", "--out", "r.jsonl", "--truncate")
    assert result.exit_code == 0, result.output
    recs = {r["case_id"]: r for r in map(json.loads, open("r.jsonl"))}
    assert recs["a"]["truncated"] is None
    cut = recs["long-one"]["truncated"]
    assert cut and re.search(r"input cut from 5000 to \d+ characters", cut), cut
    assert recs["long-one"]["prompt_tokens"] <= 3000
    assert recs["long-one"]["score"] is not None
    assert "long-one" in result.output and "cut from 5000" in result.output  # said, not only recorded


# -- score and calibrate -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, files, needles",
    [
        ([], {}, ["give prompts"]),
        (["hi"], {}, ["--low and --high"]),
        (["hi", "--low", "5", "--high", "1"], {}, ["invalid score scale 5..1"]),
        (["hi", "--low", "0", "--high", "101"], {}, ["0..101"]),
        (["hi", "--low", "x", "--high", "5"], {}, ["--low"]),
        (["hi", "--labels", "A,A"], {}, ["'A'"]),
        (["hi", "--labels", ","], {}, ["labels"]),
        (["--file", "p.jsonl", "--low", "1", "--high", "5"], {"p.jsonl": b'"ok"\n"caf\xe9"\n'}, ["p.jsonl", "UTF-8"]),
        (
            ["--file", "p.jsonl", "--low", "1", "--high", "5"],
            {"p.jsonl": '"ok"\n{"text": \n'},
            ["p.jsonl:2", "invalid JSON"],
        ),
        (["--file", "p.jsonl", "--low", "1", "--high", "5"], {"p.jsonl": '{"txt": "a"}\n'}, ["p.jsonl:1", "'text'"]),
        (["--file", "p.jsonl", "--low", "1", "--high", "5"], {"p.jsonl": "[1]\n"}, ["p.jsonl:1", "list"]),
        (["--file", "nofile.jsonl", "--low", "1", "--high", "5"], {}, ["nofile.jsonl"]),
    ],
    ids=[
        "no-prompts",
        "no-scale",
        "reversed",
        "too-wide",
        "low-text",
        "dup-labels",
        "empty-labels",
        "file-utf8",
        "file-json",
        "file-no-text",
        "file-type",
        "file-missing",
    ],
)
def test_score_bad_input(fake, args, files, needles):
    write_files(files)
    assert_user_error(run("score", *args), *needles)


@pytest.mark.parametrize(
    "files, args, needles",
    [
        ({}, ["nofile.csv"], ["nofile.csv"]),
        ({"c.csv": ""}, ["c.csv"], ["c.csv"]),
        ({"c.csv": "judge,human\n1,x\n2,3\n3,3\n"}, ["c.csv"], ["c.csv", "line 2", "'x'"]),
        ({"c.csv": "a,b\n1,2\n"}, ["c.csv"], ["no column 'judge'"]),
        ({"c.csv": b"judge,human\n1,\xff\n"}, ["c.csv"], ["c.csv"]),
        ({"c.jsonl": '{"judge": 1, "human": 2}\n{"judge": 1\n'}, ["c.jsonl"], ["c.jsonl", "line 2", "invalid JSON"]),
        ({"c.csv": "judge,human\n1,2\n2,3\n3,4\n4,4\n"}, ["c.csv", "--target", "2"], ["target"]),
        ({"c.csv": "judge,human\n1,2\n2,3\n3,4\n4,4\n"}, ["c.csv", "--judge-scale", "5", "1"], ["judge_scale"]),
    ],
    ids=["missing", "empty", "not-a-number", "no-column", "utf8", "jsonl", "target", "scale"],
)
def test_calibrate_bad_input(tmp_path, monkeypatch, files, args, needles):
    monkeypatch.chdir(tmp_path)
    write_files(files)
    assert_user_error(run("calibrate", "agreement", *args, "--no-plots"), *needles)


# -- runtime failures -----------------------------------------------------------------------------------


def test_backend_failure_exits_1_with_message(localjudge_scripted, fake, monkeypatch):
    def explode(prompt):
        raise RuntimeError("backend exploded")

    judge = fake_judge(explode)
    localjudge_scripted.add_any(judge)
    monkeypatch.delenv("LOCALJUDGE_DEBUG", raising=False)
    write_files({"d.jsonl": GOOD})
    assert_user_error(
        run("eval", "d.jsonl", "--metric", "correctness"),
        "RuntimeError",
        "backend exploded",
        "LOCALJUDGE_DEBUG",
        code=1,
    )
    assert_user_error(run("score", "hi", "--low", "1", "--high", "5"), "backend exploded", code=1)


def test_good_input_still_works(fake):
    """The control: the same fixture with good input exits 0 and scores."""
    write_files({"d.jsonl": GOOD})
    result = run("eval", "d.jsonl", "--metric", "correctness", "--out", "r.jsonl")
    assert result.exit_code == 0, result.output
    (rec,) = [json.loads(line) for line in open("r.jsonl")]
    assert rec["score"] == pytest.approx((4.3 - 1) / 4)


def test_too_long_likelihood_case_names_case_and_truncates(localjudge_scripted, fake):
    short_judge(localjudge_scripted, 3000)
    long = {"id": "long-one", **GOOD_ROW, "input": "word " * 1000}
    write_files({"d.jsonl": GOOD + json.dumps(long) + "\n"})
    assert_user_error(
        run("eval", "d.jsonl", "--metric", "likelihood", "--out", "r.jsonl"), "case 'long-one'", "3000", "--truncate"
    )
    result = run("eval", "d.jsonl", "--metric", "likelihood", "--out", "r2.jsonl", "--truncate", "--no-progress")
    assert result.exit_code == 0, result.output
    assert "truncated: case 'long-one' (likelihood): input cut from" in result.output


def test_ctrl_c_inside_a_serializer_callback_exits_130():
    """pydantic turns a KeyboardInterrupt raised in a serializer callback (a record's detail layout, say)
    into PydanticSerializationError; the CLI's boundary still reports an interruption (exit 130)."""
    import click
    from pydantic import BaseModel, model_serializer

    from localjudge.cli import _Group

    class Record(BaseModel):
        score: float = 0.5

        @model_serializer(mode="wrap")
        def _omit(self, handler):
            raise KeyboardInterrupt  # Ctrl-C arriving while pydantic runs this callback

    @click.group(cls=_Group)
    def cli():
        pass

    @cli.command()
    def write():
        Record().model_dump_json()

    @cli.command()
    def fail():
        raise ValueError("Error calling function `f`: not an interrupt")

    result = CliRunner().invoke(cli, ["write"])
    assert result.exit_code == 130 and "Interrupted" in result.stderr, result.output
    other = CliRunner().invoke(cli, ["fail"])
    assert other.exit_code == 1 and "Error: ValueError" in other.stderr
