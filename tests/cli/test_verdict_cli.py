"""The verdict round trip on the command line, with the scripted fake judge.

eval (a token-level likelihood metric and the mean likelihood) -> calibrate --verdict (fit, save)
-> eval --metric verdict.json (the components judged again, pass/fail applied), and the accuracy
the verdict states is the one its fit measured on held-back documents.
"""

from __future__ import annotations

import json
import math
import random

import pytest
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.metrics.spec import VerdictMetric, metric_from_dict
from localjudge.runs.results_file import read_results
from localjudge.testing import fake_judge

WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa".split()
MIN_WORD = """name: min_word
kind: likelihood
instruction: Summarise the report.
fields: [input]
field_labels: {input: Report}
target_label: Summary
aggregation: min
unit: word
"""


@pytest.fixture
def judges(localjudge_scripted):
    made = []

    def load(asked):
        made.append(fake_judge(lambda p: {"3": 1.0}))  # likelihoods come from the fake's copy_lm
        return made[-1]

    localjudge_scripted.add_any(load)
    return made


@pytest.fixture
def data(tmp_path):
    """10 documents with 6 summaries each: copied ones (label 1) and ones with two words not in the document."""
    rng = random.Random(0)
    rows = []
    for d in range(10):
        doc_words = rng.sample(WORDS, 8)
        other = [w for w in WORDS if w not in doc_words]
        for k in range(6):
            said = doc_words[:5] if k % 2 == 0 else doc_words[:3] + rng.sample(other, 2)
            rows.append(
                {
                    "id": f"d{d}-{k}",
                    "input": "The report says " + " ".join(doc_words) + f" met in {1910 + d}.",
                    "actual_output": "The report says " + " ".join(said) + ".",
                    "label": int(k % 2 == 0),
                    "grade": 5 if k % 2 == 0 else 2,
                    "doc_id": f"d{d}",
                }
            )
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "min_word.yaml").write_text(MIN_WORD, encoding="utf-8")
    return tmp_path


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_fit_save_apply_round_trip(judges, data):
    results = data / "r.jsonl"
    first = _run("eval", data / "cases.jsonl", "--metric", data / "min_word.yaml", "--metric",
                 "consistency_likelihood", "--out", results, "--no-progress")  # fmt: skip
    assert first.exit_code == 0, first.output
    # the token-level record names the word that drove the score down
    worst = [r for r in read_results(results) if r.metric == "min_word"][1].detail.tokens.worst[0]
    assert worst.text.strip().rstrip(".") in WORDS and worst.value < 0

    saved = data / "verdict.json"
    fit = _run("calibrate", "fit-verdict", results, "--metrics", "min_word,consistency_likelihood", "--human", "label",
               "--group", "doc_id", "--save", saved, "--seed", "1")  # fmt: skip
    assert fit.exit_code == 0, fit.output
    assert "held-back split (30 cases" in fit.output and "ECE" in fit.output
    verdict = metric_from_dict(json.loads(saved.read_text()))
    assert isinstance(verdict, VerdictMetric)
    held = verdict.fit["held_out"]
    assert verdict.expected_accuracy == held["accuracy"] and f"accuracy           {held['accuracy']:.3f}" in fit.output

    applied = data / "r2.jsonl"
    run = _run("eval", data / "cases.jsonl", "--metric", saved, "--out", applied, "--no-progress", "--json")
    assert run.exit_code == 0, run.output
    summary = next(s for s in json.loads(run.stdout[run.stdout.index("{") :])["summaries"] if s["metric"] == "verdict")
    assert summary["expected_accuracy"] == verdict.expected_accuracy
    assert any("held-back labelled cases" in n for n in summary["notes"])
    recs = read_results(applied)
    parts = {(r.case_id, r.metric): r for r in recs}
    for r in (r for r in recs if r.kind == "verdict"):
        z = verdict.intercept + sum(
            c.weight * (parts[(r.case_id, c.metric["name"])].raw_score - c.mean) / c.std for c in verdict.components
        )
        assert r.score == pytest.approx(1 / (1 + math.exp(-z)))
        assert r.passed == (r.score >= verdict.threshold)
        assert set(r.detail.root) == {c.metric["name"] for c in verdict.components}
    # it tells the consistent summaries from the others on this data
    labels = {r.case_id: r.extra["label"] for r in recs}
    right = [r.passed == bool(labels[r.case_id]) for r in recs if r.kind == "verdict"]
    assert sum(right) / len(right) >= 0.9


def test_graded_labels_need_a_pass_mark(judges, data):
    results = data / "r.jsonl"
    assert _run("eval", data / "cases.jsonl", "--metric", "consistency_likelihood", "--out", results,
                "--no-progress").exit_code == 0  # fmt: skip
    graded = _run("calibrate", "fit-verdict", results, "--metrics", "consistency_likelihood", "--human", "grade")
    assert graded.exit_code == 2 and "--pass-at" in graded.output
    ok = _run("calibrate", "fit-verdict", results, "--metrics", "consistency_likelihood", "--human", "grade",
              "--pass-at", "4", "--group", "doc_id")  # fmt: skip
    assert ok.exit_code == 0 and "acceptable: label >= 4" in ok.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--save", "v.json", "--human", "label"], "Missing option '--metrics'"),
        (["--metrics", "a", "--hybrid", "a,b", "--human", "label"], "No such option '--hybrid'"),
        (["--metrics", "nope", "--human", "label"], "no records of metric"),
        (["--metrics", "consistency_likelihood"], "Missing option '--human'"),
    ],
)
def test_calibrate_verdict_user_errors(judges, data, args, message):
    results = data / "r.jsonl"
    assert _run("eval", data / "cases.jsonl", "--metric", "consistency_likelihood", "--out", results,
                "--no-progress").exit_code == 0  # fmt: skip
    out = _run("calibrate", "fit-verdict", results, *args)
    assert out.exit_code == 2 and message in out.output
