"""The faithfulness benchmarks' own checks: readings storage, scorers equal to the metrics, the figures.

Nothing here loads a real judge: the scripted fake judge takes the readings, and the figures
are checked on hand-built data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchmarks.lib.readings import Store, read_likelihoods
from benchmarks.quality.faithfulness import _faithful_data as D
from benchmarks.quality.faithfulness import _faithful_eval as E
from benchmarks.quality.faithfulness._faithful_scores import lexical, token_scorers
from localjudge.io.cases import TestCase
from localjudge.metrics import builtin_metric
from localjudge.runs.evaluate import evaluate
from localjudge.testing import fake_judge

HERE = Path(__file__).resolve().parent

DOC = "Profit rose to 13 million in March. The board kept the dividend."
SUMMARIES = {"a": ("Profit rose to 13 million.", 1.0), "b": ("Profit rose to 15 million.", 0.0)}


def _items() -> list[D.Item]:
    return [D.Item(k, "d0", "dom", DOC, s, y) for k, (s, y) in SUMMARIES.items()]


def test_store_keeps_chunks_and_skips_a_torn_line(tmp_path):
    store = Store(tmp_path)
    store.append("given", [{"id": "a", "lp": [-1.0]}])
    with open(tmp_path / "given.jsonl", "a") as f:
        f.write('{"id": "b", "lp": [-')  # a writer killed mid-line
    assert set(store.load("given")) == {"a"}
    store.add_time("given", 1.25)
    store.add_time("given", 1.0)
    assert store.timing() == {"given": 2.2}


def test_benchmark_scorers_equal_the_metrics_raw_scores(tmp_path):
    """pmi:stmin from saved readings is the raw_score `localjudge eval --metric consistency_tokens` records."""
    judge = fake_judge(lambda p: {})
    items = _items()
    store = Store(tmp_path)
    for cond in ("given", "nodoc"):
        read_likelihoods(judge, store, cond, D.ll_items(judge, cond, items), lambda m: None)
    scores = token_scorers(store, items, {"given", "nodoc"})
    cases = [TestCase(id=it.id, input=it.doc, actual_output=it.summary) for it in items]
    recs = evaluate(cases, [builtin_metric("consistency_tokens"), builtin_metric("consistency_likelihood")], judge,
                    progress=False)  # fmt: skip
    for it in items:
        assert scores["pmi:stmin"][it.id] == recs.get(it.id, "consistency_tokens").raw_score
        assert scores["ll:mean"][it.id] == pytest.approx(recs.get(it.id, "consistency_likelihood").raw_score, abs=1e-12)
    # a rerun reads nothing again
    calls = len(judge.backend.calls)
    read_likelihoods(judge, store, "given", D.ll_items(judge, "given", items), lambda m: None)
    assert len(judge.backend.calls) == calls


def test_lexical_baseline_counts_words_the_document_lacks():
    got = lexical(_items())
    assert got["a"] == 0.0 and got["b"] == pytest.approx(-1 / 5)  # "15" of 5 words


def _synthetic(seed=0):
    rng = np.random.default_rng(seed)
    items, good, noise = [], {}, {}
    for d in range(5):
        for doc in range(4):
            for k in range(12):
                it = D.Item(f"{d}-{doc}-{k}", f"{d}/{doc}", f"dom{d}", "doc", "s", float(k % 2))
                items.append(it)
                good[it.id] = it.label + rng.normal(0, 0.8) + d * 0.1  # a domain offset the threshold must carry
                noise[it.id] = rng.normal()
    return items, {"good": good, "noise": noise}


def test_leave_one_domain_out_and_nested_choice():
    items, scores = _synthetic()
    good = E.scorer_figures(scores["good"], items)
    noise = E.scorer_figures(scores["noise"], items)
    assert set(good["domains"]) == {f"dom{d}" for d in range(5)}
    assert good["lodo_bal_acc"] > 0.65 > noise["lodo_bal_acc"]
    assert good["within_auc"] > 0.7
    nested = E.nested_choice(scores, ["noise", "good"], items)
    assert {v["chosen"] for v in nested["domains"].values()} == {"good"}
    assert nested["bal_acc"] == pytest.approx(good["lodo_bal_acc"])


def test_lodo_verdict_reports_calibration_per_held_out_domain():
    items, scores = _synthetic()
    v = E.lodo_verdict(scores, ["good", "noise"], items)
    assert set(v["domains"]) == {f"dom{d}" for d in range(5)}
    assert 0.6 < v["accuracy"] < 1 and 0 <= v["ece"] < 0.3
    fit = E.document_verdict(scores, ["good", "noise"], items)
    assert fit["chosen"] == "good alone" and fit["held_out"]["items"] > 0


def test_judges_of_different_coverage_are_compared_on_the_summaries_both_read():
    from benchmarks.quality.faithfulness import summedits

    items, scores = _synthetic()
    small = {"ll:mean": scores["good"]}
    part = {i: v for i, v in scores["good"].items() if i.split("-")[1] in ("0", "1")}  # 2 of 4 documents
    a, b = summedits.BOTH  # `both` averages the two small judges, by name
    per_judge = {a: {"scores": small}, b: {"scores": {"ll:mean": part}}}
    same = summedits.same_items(per_judge, summedits.with_both(per_judge), items)
    assert same is not None and same["n"] == len(part) and same["documents"] == 10
    assert set(same["judges"]) == {a, b, "both"}
    assert all(f["n"] == len(part) for figs in same["judges"].values() for f in figs.values())
    assert same["judges"][a]["ll:mean"] == same["judges"][b]["ll:mean"]  # the same values on the same items
    other = {"x": {"scores": small}, "y": {"scores": {"ll:mean": part}}}  # larger judges: no average of them
    assert set(summedits.same_items(other, summedits.with_both(other), items)["judges"]) == {"x", "y"}
    full = {a: {"scores": small}, b: {"scores": small}}
    assert summedits.same_items(full, summedits.with_both(full), items) is None  # same coverage: nothing to add


def test_size_contrast_subtracts_token_by_token_where_the_tokens_agree(tmp_path, monkeypatch):
    from benchmarks.quality.faithfulness import summedits

    monkeypatch.setattr(summedits, "READINGS", tmp_path)
    big, small = (Store(tmp_path / j / "summedits") for j in summedits.CONTRAST)
    tokens = [{"id": "a", "ids": [1, 2], "surfaces": ["x", "y"]}, {"id": "b", "ids": [3], "surfaces": ["z"]}]
    big.append("tokens", tokens)
    small.append("tokens", [tokens[0], {"id": "b", "ids": [4], "surfaces": ["z"]}])  # b: other tokens
    big.append("given", [{"id": "a", "lp": [-1.0, -4.0]}, {"id": "b", "lp": [-2.0]}])
    small.append("given", [{"id": "a", "lp": [-1.5, -3.0]}, {"id": "b", "lp": [-1.0]}])
    big.append("nodoc", [{"id": "a", "lp": [-2.0, -2.0]}])  # the amateur has no nodoc reading: no pmi rows
    assert summedits.contrast_readings()
    out = Store(tmp_path / summedits.CONTRAST_NAME / "summedits")
    assert out.load("given") == {"a": {"id": "a", "lp": [0.5, -1.0]}}
    assert set(out.load("tokens")) == {"a"} and not out.load("nodoc")
    # a rerun starts from nothing: readings the judges no longer share are not kept
    (small.root / "tokens.jsonl").write_text("")
    assert not summedits.contrast_readings() and not out.load("given")
