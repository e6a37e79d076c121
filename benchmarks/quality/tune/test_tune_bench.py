"""The tune study's own helpers: the halves, the per-dimension rows and the report of a joint run."""

from __future__ import annotations

from argparse import Namespace

import pytest

from benchmarks.quality.tune.summeval_halves import halves, report, rows
from localjudge.io.cases import TestCase


def _cases() -> list[TestCase]:
    """Four articles of four summaries each; human consistency rises with the summary's index."""
    return [
        TestCase(
            id=f"d{d}/s{s}", input=f"article {d}", actual_output=f"summary {s}", extra={"doc_id": f"d{d}", "human_c": s}
        )
        for d in range(4)
        for s in range(4)
    ]


def test_the_halves_alternate_whole_articles():
    a, b = halves(_cases())
    assert {c.extra["doc_id"] for c in a} == {"d0", "d2"} and {c.extra["doc_id"] for c in b} == {"d1", "d3"}


def test_rows_score_the_tuned_reading_only_where_an_adapter_read():
    cases = _cases()
    untuned = {c.id: float(-int(c.id[-1])) for c in cases}  # the reverse of the human order: rho -1
    tuned = {c.id: (float(c.id[-1]) if c.extra["doc_id"] in ("d0", "d2") else None) for c in cases}
    mass = {c.id: 0.9 for c in cases}
    row = rows(cases, "c", {"untuned": untuned, "tuned": tuned}, {"untuned": mass, "tuned": mass}, runs=[])
    assert row["untuned"]["spearman"] == pytest.approx(-1.0) and row["untuned"]["articles_used"] == 4
    assert row["tuned"]["spearman"] == pytest.approx(1.0) and row["tuned"]["articles_used"] == 2
    assert row["untuned_same_articles"]["articles_used"] == 2 and row["tuned"]["valid_mass"] == pytest.approx(0.9)


def test_a_joint_report_lists_its_runs_once_with_each_dimensions_agreement():
    def epoch(n, mean, coherence, consistency, loss):
        per = {"coherence": coherence, "consistency": consistency}
        return {"epoch": n, "agreement": mean, "valid_mass": 0.98, "train_loss": loss, "per_metric": per}

    history = [epoch(0, 0.2, 0.1, 0.3, None), epoch(1, 0.3, 0.2, 0.4, 1.2)]
    ok = {"half": 0, "seconds": 10.0, "best_epoch": 1, "tokens_per_second": 200.0, "peak_memory_gib": 9.0}
    runs = [{**ok, "history": history}, {"half": 1, "seconds": 5.0, "failed": "kept no adapter"}]
    fig = {"spearman": 0.25, "articles_used": 2, "valid_mass": 0.99}
    row = {"runs": runs, "untuned": fig, "tuned": fig, "untuned_same_articles": fig}
    results = {
        "judge": "j",
        "machine": {"cpu": "cpu", "cores": 2, "torch": "t", "torch_threads": 2},
        "dims": {"coherence": row, "consistency": row},
    }
    args = Namespace(judge="j", dims=["coherence", "consistency"], loss="ce", epochs=2, layers=4, joint=True)
    text = report(results, args)
    assert "--joint" in text and "every dimension at once" in text
    assert text.count("- all dimensions, half 0:") == 1 and text.count("- all dimensions, half 1: kept no adapter") == 1
    assert "1: 0.300 [cohe 0.200, cons 0.400], 0.980, 1.200" in text
    assert "(1 half failed)" in text
