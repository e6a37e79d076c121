"""Reading `localjudge inspect` reports in tests: run the command, parse its JSON, walk its spellings."""

from __future__ import annotations

import json

from click.testing import CliRunner

from localjudge.cli import main


def run(*args) -> tuple[int, str]:
    """`localjudge inspect ARGS`: its exit code and output."""
    result = CliRunner().invoke(main, ["inspect", *map(str, args)])
    return result.exit_code, result.output


def report_json(output: str) -> dict:
    """The JSON report of `inspect --json`, after the "Loading judge" lines."""
    return json.loads(output[output.index("\n{") + 1 :])


def spelling_paths(report, value) -> list[list[str]]:
    """The token texts of each path that spells `value`."""
    spelling = next(s for s in report["spellings"] if s["value"] == value)
    return [[step["text"] for step in path] for path in spelling["paths"]]


def assert_paths_decode(tokenizer, report) -> None:
    """Every path's ids decode to the outcome, with or without one leading space."""
    for s in report["spellings"]:
        for path in s["paths"]:
            assert tokenizer.decode([t["id"] for t in path]).lstrip(" ") == str(s["value"])
