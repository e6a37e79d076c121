"""Bad bytes in any file any command reads: exit 2, one line naming the file and the line.

Every file a user hands to a command (data, prompts, metric files, style guides, registries,
responses, calibration tables) is fed non-UTF-8 bytes, binary content (NUL bytes) and, where
it is JSON or YAML, a 5,000-digit integer that Python refuses to convert. Each must name the
file and the line (or byte offset), never exit 1 with a codec error or a traceback.
"""

from __future__ import annotations

import json
import re

import pytest
from cli_checks import GOOD, assert_user_error, install_fake, run, write_files

from localjudge.errors import DataError
from localjudge.io.files import decode_text, parse_json

HUGE = "1" * 5000
REGISTRY = (
    "default: x\njudges:\n - {name: x, family: f, source: {kind: hub, repo: a/b, revision: main}, context_length: 64}\n"
)
RESPONSE = (
    json.dumps(
        {
            "id": "p1",
            "input": "q",
            "generator": "g",
            "generator_family": "f",
            "response": "r",
            "prompt_style": "chat",
            "max_new_tokens": 8,
            "batch_size": 1,
            "generator_info": {},
            "localjudge_version": "0.1.0",
        }
    )
    + "\n"
)

VERDICT = (
    json.dumps(
        {
            "item_id": "p1",
            "judge": "j",
            "judge_family": "f",
            "generator": "g",
            "generator_family": "f",
            "score": 3.0,
            "response_length": 1,
        }
    )
    + "\n"
)

# (file name, good first line, command line using it); the second line of the file is made bad
FILES = {
    "eval data jsonl": ("d.jsonl", GOOD, ["eval", "d.jsonl", "--metric", "correctness"]),
    "eval data json": ("d.json", "[" + GOOD.strip() + ",\n", ["eval", "d.json", "--metric", "correctness"]),
    "eval data csv": ("d.csv", "id,input\n", ["eval", "d.csv", "--metric", "correctness"]),
    "eval metric yaml": ("m.yaml", "name: m\n", ["eval", "d0.jsonl", "--metric", "m.yaml"]),
    "eval metric json": ("m.json", '{"name": "m",\n', ["eval", "d0.jsonl", "--metric", "m.json"]),
    "eval style guide": ("g.md", "Be brief.\n", ["eval", "d0.jsonl", "--metric", "style", "--style-guide", "g.md"]),
    "eval registry": (
        "r.yaml",
        "default: x\n",
        ["eval", "d0.jsonl", "--metric", "correctness", "--registry", "r.yaml"],
    ),
    "steps metric": ("m.yaml", "name: m\n", ["steps", "--metric", "m.yaml", "--out", "o.yaml"]),
    "steps style guide": (
        "g.md",
        "Be brief.\n",
        ["steps", "--metric", "style", "--style-guide", "g.md", "--out", "o.yaml"],
    ),
    "score prompts": ("p.jsonl", '"ok"\n', ["score", "--file", "p.jsonl", "--low", "1", "--high", "5"]),
    "models registry": ("r.yaml", "default: x\n", ["models", "--registry", "r.yaml"]),
    "generate prompts": ("p.jsonl", GOOD, ["generate", "p.jsonl", "--model", "g", "--out", "o.jsonl"]),
    "bias responses": ("resp.jsonl", RESPONSE, ["bias", "run", "resp.jsonl", "--judge", "j", "--out-dir", "out"]),
    "bias judgments": (
        "v.jsonl",
        VERDICT,
        ["bias", "analyse", "resp0.jsonl", "--judgments", "v.jsonl", "--out-dir", "out"],
    ),
    "eval --resume results": (
        "r.jsonl",
        "",
        ["eval", "d0.jsonl", "--metric", "correctness", "--out", "r.jsonl", "--resume"],
    ),
    "calibrate csv": ("c.csv", "judge,human\n", ["calibrate", "agreement", "c.csv", "--no-plots"]),
    "calibrate jsonl": ("c.jsonl", '{"judge": 1, "human": 2}\n', ["calibrate", "agreement", "c.jsonl", "--no-plots"]),
    "calibrate json": ("c.json", '[{"judge": 1, "human": 2},\n', ["calibrate", "agreement", "c.json", "--no-plots"]),
}
TEXT_ONLY = {"eval data csv", "eval style guide", "steps style guide", "calibrate csv"}  # no numbers parsed


@pytest.fixture
def fake(localjudge_scripted, monkeypatch, tmp_path):
    """The fake judge of test_cli_errors, loaded by every command."""
    return install_fake(localjudge_scripted, monkeypatch, tmp_path)


def _first(key: str, first: str) -> str:
    """The good first line; a results file's is a real record, made by a first run."""
    if key != "eval --resume results":
        return first
    write_files({"d0.jsonl": GOOD})
    assert run("eval", "d0.jsonl", "--metric", "correctness", "--out", "r.jsonl").exit_code == 0
    return open("r.jsonl").read()


@pytest.mark.parametrize("key", FILES, ids=FILES)
@pytest.mark.parametrize(
    "bad, needles",
    [
        (b'"caf\xe9"\n', ["UTF-8", "byte offset"]),
        (b'"a\x00b"\n', ["binary", "byte offset"]),
    ],
    ids=["non-utf8", "binary"],
)
def test_bad_bytes_name_file_and_line(fake, key, bad, needles):
    name, first, args = FILES[key]
    write_files({"d0.jsonl": GOOD, "resp0.jsonl": RESPONSE, name: _first(key, first).encode() + bad})
    fake.backend.calls.clear()
    assert_user_error(run(*args), f"{name}:2", *needles)
    assert not fake.backend.calls


@pytest.mark.parametrize("key", [k for k in FILES if k not in TEXT_ONLY], ids=[k for k in FILES if k not in TEXT_ONLY])
def test_integer_too_long_to_parse_names_file_and_line(fake, key):
    name, first, args = FILES[key]
    second = {
        "eval metric yaml": f"low: {HUGE}\n",
        "steps metric": f"low: {HUGE}\n",
        "eval registry": f"x: {HUGE}\n",
        "models registry": f"x: {HUGE}\n",
        "eval metric json": f'"low": {HUGE}}}\n',
        "score prompts": f"{HUGE}\n",
    }.get(key, f'{{"id": "b", "n": {HUGE}}}\n')
    write_files({"d0.jsonl": GOOD, "resp0.jsonl": RESPONSE, name: _first(key, first) + second})
    line = assert_user_error(run(*args))
    assert "digits" in line or "number out of range" in line, line
    assert re.search(rf"{re.escape(name)}:(line )?2: ", line), line
    assert len(line) < 300  # the number is not quoted


def test_a_bom_is_dropped_and_offsets_count_from_the_file_start(tmp_path):
    assert decode_text(b"\xef\xbb\xbfok\n", "f") == "ok\n"
    with pytest.raises(DataError, match=r"f:2: not valid UTF-8 \(byte offset 6\)"):
        decode_text(b"\xef\xbb\xbfok\n\xff", "f")
    with pytest.raises(DataError, match=r"f:1: binary content \(a NUL byte at byte offset 1\)"):
        decode_text(b"a\x00\xff", "f")  # the first bad byte is what the message names


def test_long_number_in_a_whole_json_file_names_its_line():
    with pytest.raises(DataError, match=r"f\.json:3: a number has more than \d+ digits"):
        parse_json(f"[\n1,\n{HUGE}]", "f.json")
