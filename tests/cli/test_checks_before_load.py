"""Argument errors that need no model are reported before a judge loads (loading takes minutes).

The loader is replaced by one that fails the test, so each case proves its error came first.
"""

from __future__ import annotations

import json

import pytest
from cli_checks import GOOD, METRIC, assert_user_error, run, write_files

RESPONSE = {
    "id": "p1",
    "input": "q",
    "reference": "a",
    "generator": "g",
    "generator_family": "f",
    "response": "r",
    "prompt_style": "chat",
    "max_new_tokens": 8,
    "batch_size": 1,
    "generator_info": {},
    "localjudge_version": "0.1.0",
    "extra": {"human": "great"},
}


CASES = {
    "reversed scale": ({}, ["score", "hi", "--low", "5", "--high", "1"], ["invalid score scale 5..1"]),
    "scale too wide": ({}, ["score", "hi", "--low", "0", "--high", "101"], ["0..101"]),
    "empty prompt": ({}, ["score", "", "--low", "1", "--high", "5"], ["prompt 1 is empty"]),
    "blank prompt": ({}, ["score", "ok", "  ", "--low", "1", "--high", "5"], ["prompt 2 is empty"]),
    "empty prompt in a file": (
        {"p.jsonl": '"ok"\n{"text": ""}\n'},
        ["score", "--file", "p.jsonl", "--low", "1", "--high", "5"],
        ["p.jsonl:2", "empty"],
    ),
    "repeated labels": ({}, ["score", "hi", "--labels", "A,a"], ["'A'", "'a'"]),
    "one label": ({}, ["score", "hi", "--labels", "A"], ["two labels"]),
    "labels and a scale": ({}, ["score", "hi", "--labels", "A,B", "--low", "1", "--high", "5"], ["not both"]),
    "repeated --metric": (
        {"d.jsonl": GOOD},
        ["eval", "d.jsonl", "--metric", "correctness", "--metric", "correctness"],
        ["'correctness' given twice"],
    ),
    "metric file named like a built-in": (
        {"d.jsonl": GOOD, "m.yaml": METRIC.replace("name: m", "name: fluency")},
        ["eval", "d.jsonl", "--metric", "fluency", "--metric", "m.yaml"],
        ["'fluency' given twice"],
    ),
    "generation prompt without input": (
        {"p.jsonl": GOOD + json.dumps({"id": "b", "actual_output": "x"}) + "\n"},
        ["generate", "p.jsonl", "--model", "g", "--out", "o.jsonl"],
        ["prompt 'b' has no 'input'"],
    ),
    "generation reference not a string": (
        {"p.jsonl": json.dumps({"id": "b", "input": "q", "reference": 3}) + "\n"},
        ["generate", "p.jsonl", "--model", "g", "--out", "o.jsonl"],
        ["'reference' must be a string"],
    ),
    "bias human field not a number": (
        {"r.jsonl": json.dumps(RESPONSE) + "\n"},
        ["bias", "run", "r.jsonl", "--judge", "j", "--out-dir", "out", "--human-field", "human"],
        ["human field 'human'", "'great'", "not a number"],
    ),
}


@pytest.mark.parametrize("key", CASES, ids=CASES)
def test_rejected_before_any_model_loads(no_load, key):
    files, args, needles = CASES[key]
    write_files(files)
    result = run(*args)
    assert_user_error(result, *needles)
    assert "Loading" not in result.output
