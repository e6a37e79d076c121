"""`localjudge bias analyse --judgments`: analyse judgments already on disk without loading any model.

The finished study of benchmarks/bias, copied to tests/data/bias_study (two embedded judges, 40
prompts, pointwise and pairwise) is analysed again from its judgment files: the reports must equal
the ones the judging run wrote, no model may load, and torch must not even be imported.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from localjudge.bias.results import BiasReport
from localjudge.cli import main

STUDY = Path(__file__).resolve().parents[1] / "data" / "bias_study"  # a copy of benchmarks/bias
RESPONSES = STUDY / "responses.jsonl"


def _invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result, [line for line in result.output.splitlines() if line.startswith("Error:")]


def test_reanalysis_of_a_finished_study_gives_its_reports(tmp_path, no_load):
    out = tmp_path / "again"
    res, _ = _invoke("bias", "analyse", RESPONSES, "--judgments", STUDY, "--out-dir", out)
    assert res.exit_code == 0, res.output
    before, after = json.loads((STUDY / "report.json").read_text()), json.loads((out / "report.json").read_text())
    assert before["pointwise"]["settings"]["n_bootstrap"] == after["pointwise"]["settings"]["n_bootstrap"] == 1000
    for part in ("pointwise", "pairwise"):
        assert after[part] == BiasReport.model_validate(before[part]).model_dump(mode="json")
        assert after[part]["findings"] == before[part]["findings"]
    assert after["generators"] == before["generators"] and after["responses_sha256"] == before["responses_sha256"]
    assert [(j["name"], j["family"]) for j in after["judges"]] == [("gemma3-270m", "gemma"), ("smollm2-135m", "smollm")]
    assert after["judgments_files"] == [str(STUDY / "pointwise_records.jsonl"), str(STUDY / "pairwise_records.jsonl")]
    assert after["notes"] == [] and after["metric"] is None
    md = (out / "report.md").read_text()
    assert "Analysis only, of the judgments in" in md and "Pointwise metric: not recorded" in md
    assert (out / "heatmap.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "pointwise_records.jsonl").read_bytes() == (STUDY / "pointwise_records.jsonl").read_bytes()


def test_analysis_only_imports_no_torch(tmp_path):
    code = (
        "import sys\nfrom localjudge.cli import main\n"
        f"main(['bias', 'analyse', {str(RESPONSES)!r}, '--judgments', {str(STUDY / 'pointwise_records.jsonl')!r}, "
        f"'--out-dir', {str(tmp_path / 'out')!r}, '--metric', 'correctness', '--bootstrap', '200'], "
        "standalone_mode=False)\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'accelerate') if m in sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    study = json.loads((tmp_path / "out" / "report.json").read_text())
    assert study["metric"]["name"] == "correctness" and study["pairwise"] is None


def _judgments_without_perplexity(tmp_path: Path) -> Path:
    rows = [json.loads(line) for line in (STUDY / "pointwise_records.jsonl").read_text().splitlines()]
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "judge_logppl"}) + "\n" for r in rows))
    return path


def test_judgments_without_perplexity_skip_that_analysis_and_say_so(tmp_path, no_load):
    res, _ = _invoke(
        "bias",
        "analyse",
        RESPONSES,
        "--judgments",
        _judgments_without_perplexity(tmp_path),
        "--out-dir",
        tmp_path / "out",
        "--bootstrap",
        "200",
    )
    assert res.exit_code == 0, res.output
    assert "[note] perplexity covariate skipped for gemma3-270m, smollm2-135m" in res.output
    study = json.loads((tmp_path / "out" / "report.json").read_text())
    assert study["pointwise"]["perplexity"] == [] and len(study["notes"]) == 1
    assert "Note: perplexity covariate skipped" in (tmp_path / "out" / "report.md").read_text()


def test_unknown_families_in_judgments_are_filled_by_family_or_refused(tmp_path, no_load):
    responses = tmp_path / "responses.jsonl"
    responses.write_text(RESPONSES.read_text().replace('"generator_family": "smollm"', '"generator_family": "unknown"'))
    judgments = tmp_path / "v.jsonl"
    judgments.write_text((STUDY / "pointwise_records.jsonl").read_text().replace('"smollm"', '"unknown"'))
    res, errors = _invoke("bias", "analyse", responses, "--judgments", judgments, "--out-dir", tmp_path / "a")
    assert res.exit_code == 2 and "has no model family" in errors[0] and "--family" in errors[0]
    res, _ = _invoke(
        "bias",
        "analyse",
        responses,
        "--judgments",
        judgments,
        "--out-dir",
        tmp_path / "b",
        "--bootstrap",
        "200",
        "--family",
        "smollm2-135m=smollm",
    )
    assert res.exit_code == 0, res.output
    study = json.loads((tmp_path / "b" / "report.json").read_text())
    assert {j["family"] for j in study["judges"]} == {"gemma", "smollm"}


@pytest.mark.parametrize(
    "setup, args, needles",
    [
        ("bad line", [], ["v.jsonl:2", "not a pointwise judgment"]),
        ("foreign item", [], ["item 'p99'", "does not hold"]),
        ("empty dir", [], ["holds no pointwise_records.jsonl"]),
        (None, ["--judge", "smollm2-135m"], ["No such option '--judge'"]),
        (None, ["--device", "cpu"], ["No such option '--device'"]),
        (None, ["--pairwise"], ["No such option '--pairwise'"]),
        ("same dir", [], ["never writes over", "pointwise_records.jsonl"]),
    ],
    ids=["bad-line", "foreign-item", "empty-dir", "with-judge", "with-device", "with-pairwise", "out-is-input"],
)
def test_analysis_only_user_errors(tmp_path, no_load, setup, args, needles):
    judgments, out = tmp_path / "v.jsonl", tmp_path / "out"
    lines = (STUDY / "pointwise_records.jsonl").read_text().splitlines(keepends=True)
    if setup == "bad line":
        judgments.write_text(lines[0] + '{"item_id": "p01", "judge": "x"}\n')
    elif setup == "foreign item":
        judgments.write_text(lines[0] + lines[1].replace('"p02"', '"p99"'))
    elif setup == "empty dir":
        judgments = tmp_path / "empty"
        judgments.mkdir()
    elif setup == "same dir":
        shutil.copy(STUDY / "pointwise_records.jsonl", tmp_path / "pointwise_records.jsonl")
        judgments = out = tmp_path
    else:
        judgments.write_text("".join(lines))
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    res, errors = _invoke("bias", "analyse", RESPONSES, "--judgments", judgments, "--out-dir", out, *args)
    assert res.exit_code == 2 and len(errors) == 1, res.output
    assert all(n in errors[0] for n in needles), errors[0]
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_human_field_refills_human_scores(tmp_path, no_load):
    responses = tmp_path / "responses.jsonl"
    rows = [json.loads(line) for line in RESPONSES.read_text().splitlines()]
    for r in rows:
        r["extra"]["stars"] = len(r["response"]) % 5 + 1
    responses.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res, _ = _invoke(
        "bias",
        "analyse",
        responses,
        "--judgments",
        STUDY,
        "--out-dir",
        tmp_path / "out",
        "--bootstrap",
        "200",
        "--human-field",
        "stars",
        "--json",
    )
    assert res.exit_code == 0, res.output
    point = [json.loads(line) for line in (tmp_path / "out" / "pointwise_records.jsonl").read_text().splitlines()]
    assert all(p["human_score"] == p["response_length"] % 5 + 1 for p in point)
    assert json.loads(res.output)["pointwise"]["equal_opportunity"]  # analysed with the human scores


def test_the_lab_runs_without_the_command_line(tmp_path, no_load):
    """The orchestration lives in the lab (`bias.lab`); the command only parses flags and prints."""
    from localjudge.bias import lab
    from localjudge.bias.options import BiasOptions
    from localjudge.bias.study import write_study

    settings = BiasOptions(n_bootstrap=200, ci_level=0.9)
    study = lab.analyse_only(RESPONSES, [STUDY], metric_name="correctness", settings=settings)
    assert study.study.pointwise is not None and study.study.pointwise.settings == settings
    files = write_study(study.study, study.judgments, tmp_path / "out")
    assert files and (tmp_path / "out" / "report.json").is_file()
    # the command's --bootstrap (calibrate's name) sets the setting; --resamples, its first name, is gone
    out = tmp_path / "bootstrap"
    res, _ = _invoke(
        "bias", "analyse", RESPONSES, "--judgments", STUDY, "--out-dir", out, "--bootstrap", "200", "--json"
    )
    assert res.exit_code == 0, res.output
    assert json.loads((out / "report.json").read_text())["pointwise"]["settings"]["n_bootstrap"] == 200
    res, _ = _invoke(
        "bias", "analyse", RESPONSES, "--judgments", STUDY, "--out-dir", tmp_path / "r", "--resamples", "200"
    )
    assert res.exit_code == 2 and "No such option '--resamples'" in res.output
