"""Reference metrics (ROUGE-L F1 against a reference field, no model): spec, records, CLI, hybrid part."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from hybrid_cases import fit_copy_hybrid

from localjudge.cli import main
from localjudge.errors import ConfigError
from localjudge.io.cases import TestCase
from localjudge.lexical import rouge_l
from localjudge.metrics import ReferenceMetric, builtin_metric
from localjudge.metrics.spec import components, load_metric_file, metric_from_dict
from localjudge.runs.evaluate import evaluate
from localjudge.runs.results_file import read_results
from localjudge.testing import fake_judge


def test_builtin_and_spec_errors():
    m = builtin_metric("rouge_l")
    assert isinstance(m, ReferenceMetric) and m.required_fields == ["actual_output", "expected_output"]
    for bad, why in [
        ({"target": "input", "reference": "input"}, "same field"),
        ({"measure": "bleu"}, "measure"),
        ({"weights": [1]}, "weights"),
    ]:
        with pytest.raises(ConfigError, match=why):
            metric_from_dict({"kind": "reference", "name": "r", **bad})


def test_records_are_rouge_l_and_unscored_cases_say_why():
    cases = [
        TestCase(id="a", input="q", actual_output="the cat sat on the mat", expected_output="the cat lay on the mat"),
        TestCase(id="b", input="q", actual_output="…!?", expected_output="a cat"),
        TestCase(id="c", input="q", actual_output="a cat"),
        TestCase(id="d", input="the cat", actual_output="x", context=["the cat", "sat here"]),
    ]
    metrics = [
        builtin_metric("rouge_l"),
        ReferenceMetric(kind="reference", name="ctx", target="input", reference="context", threshold=0.5),
    ]
    res = evaluate(cases, metrics, fake_judge(lambda p: {"3": 1.0}), progress=False)
    a = res.get("a", "rouge_l")
    assert a.kind == "reference" and a.score == a.raw_score == pytest.approx(5 / 6)
    assert a.template_version == "rouge-l-v1" and a.metric_spec["measure"] == "rouge_l"
    assert res.get("b", "rouge_l").score is None and "no ASCII letters" in res.get("b", "rouge_l").unscored_reason
    assert res.get("c", "rouge_l").score is None and "expected_output" in res.get("c", "rouge_l").unscored_reason
    d = res.get("d", "ctx")  # a list field is compared as one text
    assert d.score == pytest.approx(rouge_l("the cat", "the cat\nsat here")) and d.passed is True
    assert res.get("a", "ctx").unscored_reason  # no context


@pytest.fixture
def judges(localjudge_scripted):
    localjudge_scripted.add_any(lambda asked: fake_judge(lambda p: {"3": 1.0}))


def test_cli_hybrid_of_likelihood_and_rouge_l_beats_each_part(judges, tmp_path):
    """Human scores planted from two signals: copying the article (likelihood) and matching the reference."""
    rng = np.random.default_rng(0)
    words = "the team won the final on sunday by two goals after a long season".split()
    rows = []
    for i in range(120):
        doc = f"d{i // 8}"
        copied, matched = rng.random() < 0.5, int(rng.integers(0, 4))
        answer = (
            ("the team won the final" if copied else "rain fell on monday")
            + " "
            + " ".join(words[-matched * 3 :] if matched else [])
        )
        rows.append(
            {
                "id": f"c{i}",
                "input": f"Article {doc}: " + " ".join(words[:6]) + ".",
                "actual_output": answer.strip(),
                "expected_output": " ".join(words[6:]),
                "doc": doc,
                "human": 2.0 * copied + 1.0 * matched + rng.normal(scale=0.3),
            }
        )
    data, saved, _ = fit_copy_hybrid(tmp_path, rows, "rouge_l")
    hybrid = load_metric_file(saved)
    assert [m.kind for m in components(hybrid)] == ["likelihood", "reference"]
    held = hybrid.fit["held_out"]
    assert held["hybrid"] > max(held["copy"], held["rouge_l"]) + 0.05, held
    out = tmp_path / "h.jsonl"
    applied = CliRunner().invoke(main, ["eval", str(data), "--metric", str(saved), "--out", str(out), "--no-progress"])
    assert applied.exit_code == 0, applied.output
    recs = {(r.case_id, r.metric): r for r in read_results(out)}
    assert recs[("c0", "rouge_l")].raw_score == pytest.approx(
        rouge_l(rows[0]["actual_output"], rows[0]["expected_output"])
    )
    assert recs[("c0", "hybrid")].detail.root["rouge_l"] == recs[("c0", "rouge_l")].raw_score


def test_cli_metrics_lists_reference_kind():
    out = CliRunner().invoke(main, ["metrics"]).output
    assert "rouge_l" in out and "ROUGE-L F1, no model" in out and "actual_output vs expected_output" in out
