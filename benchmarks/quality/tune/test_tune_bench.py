"""The tune study's own helpers: the halves, the per-dimension rows and the report of a joint run."""

from __future__ import annotations

from argparse import Namespace

import pytest

from benchmarks.lib.common import SHARED_DATA
from benchmarks.quality.tune.summeval_halves import halves, report, rows
from localjudge.io.cases import TestCase

needs_shared_data = pytest.mark.skipif(
    not SHARED_DATA.is_dir(), reason=f"the human-labelled dev data is not beside the clone ({SHARED_DATA})"
)


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


def test_pair_readings_average_the_orders_and_flag_a_judge_that_follows_position():
    from types import SimpleNamespace

    import numpy as np

    from benchmarks.quality.tune.pairwise_halves import readings

    examples = [SimpleNamespace(case=c) for c in (0, 0, 1, 1)]  # each case: output 1 shown first, then second
    data = SimpleNamespace(
        examples=examples,
        case_ids=["p0", "p1"],
        case_scores=lambda d: np.array([(d[0][0] + d[1][1]) / 2, (d[2][0] + d[3][1]) / 2]),
    )
    # p0: output 1 preferred in both orders; p1: whichever is shown first wins
    dists = np.array([[0.8, 0.2], [0.3, 0.7], [0.9, 0.1], [0.9, 0.1]])
    out = readings(data, dists, np.array([1.0, 0.8, 0.9, 0.9]))
    assert out["p0"] == {"p": pytest.approx(0.75), "flip": False, "mass": pytest.approx(0.9)}
    assert out["p1"]["p"] == pytest.approx(0.5) and out["p1"]["flip"] is True


def test_pair_rows_compare_tuned_untuned_and_longer_on_the_pairs_read_tuned():
    from benchmarks.quality.tune.pairwise_halves import rows

    cases = [
        TestCase(id=f"p{i}", input=f"q{i}", extra={"output_1": "a" * (i + 1), "output_2": "bb", "label": 1 + i % 2})
        for i in range(4)
    ]
    untuned = {c.id: {"p": 0.6, "flip": True, "mass": 0.9} for c in cases}  # always output 1: right on p0, p2
    tuned = {"p0": {"p": 0.7, "flip": False, "mass": 0.95}, "p1": {"p": 0.2, "flip": False, "mass": 0.95}}
    row = rows(cases, {"untuned": untuned, "tuned": tuned}, runs=[])
    assert row["untuned"] == {"accuracy": 0.5, "pairs": 4, "flips": 1.0, "valid_mass": pytest.approx(0.9)}
    assert row["untuned_same_pairs"]["accuracy"] == 0.5 and row["untuned_same_pairs"]["pairs"] == 2
    assert row["tuned"]["accuracy"] == 1.0 and row["tuned"]["flips"] == 0.0
    # p0: output 1 shorter ("a" vs "bb"), label 1 -> wrong; p1: equal length -> half
    assert row["longer_same_pairs"] == {"accuracy": 0.25, "pairs": 2}


def test_the_learning_curve_trains_on_whole_leading_articles():
    from benchmarks.quality.tune.learning_curve import first_articles

    cases = _cases()  # four articles of four summaries
    assert {c.extra["doc_id"] for c in first_articles(cases, 5)} == {"d0", "d1"}
    assert len(first_articles(cases, 4)) == 4 and len(first_articles(cases, 100)) == 16


@needs_shared_data
def test_summedits_lodo_keeps_the_first_documents_of_every_domain():
    from benchmarks.quality.tune.summedits_lodo import DOMAINS, load_cases

    cases = load_cases(1)
    docs = {c.extra["doc_id"] for c in cases}
    assert docs == {f"{d}/0" for d in DOMAINS}
    assert all(c.extra["label"] in (0, 1) for c in cases) and len({c.input for c in cases}) == len(DOMAINS)


def test_summedits_lodo_report_averages_the_folds_and_names_a_fold_that_kept_nothing():
    from benchmarks.quality.tune.summedits_lodo import report

    def fig(auc, ba):
        figures = {"auc": auc, "balanced_accuracy": ba, "threshold": 0.5, "valid_mass": 0.99}
        return {**figures, "cases": 50, "consistent": 0.3}

    ok = {"seconds": 60.0, "best_epoch": 2, "tokens_per_second": 90.0, "peak_memory_gib": 7.0, "history": []}
    folds = {
        "ectsum": {"run": ok, "untuned": fig(0.6, 0.55), "untuned_half": fig(0.6, 0.5), "tuned_half": fig(0.8, 0.75)},
        "qmsumm": {
            "run": {"seconds": 30.0, "failed": "kept no adapter", "history": []},
            "untuned": fig(0.7, 0.65),
            "untuned_half": fig(0.7, 0.5),
        },
    }
    results = {
        "judge": "j",
        "docs": 2,
        "machine": {"cpu": "cpu", "cores": 2, "torch": "t", "torch_threads": 2},
        "settings": {"loss": "ce", "epochs": 2, "patience": 1, "layers": 4, "learning_rate": 2e-4},
        "folds": folds,
    }
    text = report(results)
    assert "| **mean** | | 0.650 | 0.800 | **0.600** | **0.750** | 0.500 |" in text
    assert "| qmsumm | 50 (0.30) | 0.700 | n/a | 0.650 | n/a | 0.500 |" in text and "none kept" in text
    assert "- without qmsumm: kept no adapter" in text


@needs_shared_data
def test_tune_cost_writes_whole_articles_as_tune_reads_them(tmp_path):
    import json

    from benchmarks.quality.tune.tune_cost import write_cases
    from localjudge.io.cases import load_cases

    n = write_cases(tmp_path / "cases.jsonl", 2)
    cases = load_cases(tmp_path / "cases.jsonl")
    assert n == len(cases) == 32 and len({c.extra["doc_id"] for c in cases}) == 2
    raw = [json.loads(x) for x in (tmp_path / "cases.jsonl").read_text().splitlines()]
    assert all(1 <= r["human_consistency"] <= 5 for r in raw)
