"""A hybrid fitted through the command line, as the tests of hybrids (`tests/kinds/`) need one."""

from __future__ import annotations

import json

from click.testing import CliRunner

from localjudge.cli import main


def fit_copy_hybrid(tmp_path, rows: list[dict], other: str):
    """`eval` of rows with a likelihood metric `copy` and `other`, then `calibrate --hybrid copy,OTHER`.

    Rows carry `human` and `doc`; returns the data file, the saved hybrid and calibrate's output.
    """
    data = tmp_path / "cases.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    spec = tmp_path / "copy.yaml"
    spec.write_text("kind: likelihood\nname: copy\ninstruction: Summarise.\nfields: [input]\n")
    res = tmp_path / "r.jsonl"
    run = CliRunner().invoke(
        main, ["eval", str(data), "--metric", str(spec), "--metric", other, "--out", str(res), "--no-progress"]
    )
    assert run.exit_code == 0, run.output
    saved = tmp_path / "hybrid.json"
    cal = CliRunner().invoke(
        main,
        [
            "calibrate",
            "fit-hybrid",
            str(res),
            "--metrics",
            f"copy,{other}",
            "--human",
            "human",
            "--group",
            "doc",
            "--save",
            str(saved),
        ],
    )
    assert cal.exit_code == 0, cal.output
    return data, saved, cal.output
