"""benchmarks/quality/summeval/summeval.py: summary-level correlation, the naive parser, an end-to-end fake run.

The benchmark's own self-check, beside it: nothing under tests/ imports a benchmark script.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from scipy import stats

from benchmarks.quality.summeval import summeval as S
from localjudge.testing import fake_judge


def _row(doc: str, system: str, out: str, coh: float, flu: float = 2.0) -> dict:
    return {
        "doc_id": doc,
        "system_id": system,
        "source": f"Article {doc} text.",
        "reference": "ref",
        "system_output": out,
        "scores": {"coherence": coh, "consistency": 3.0, "fluency": flu, "relevance": coh, "overall": 3.0},
    }


@pytest.fixture
def two_articles(tmp_path: Path) -> Path:
    rows = [_row("d1", f"M{i}", f"summary {i}" + "x" * i, coh) for i, coh in enumerate([1.0, 2.0, 3.0, 5.0])]
    rows += [_row("d2", f"M{i}", f"other {i}", 3.0) for i in range(4)]  # constant human scores
    path = tmp_path / "mini.json"
    path.write_text(json.dumps(rows))
    return path


@pytest.mark.parametrize(
    "text, low, high, want",
    [
        ("4", 1, 5, 4),
        (" 4/5", 1, 5, 4),
        ("Score: 3", 1, 5, 3),
        ("four", 1, 5, None),
        ("10", 1, 5, None),
        ("3.5", 1, 5, None),
        ("", 1, 3, None),
        ("4", 1, 3, None),
    ],
)
def test_parse_first_number(text, low, high, want):
    assert S.parse_first_number(text, low, high) == want


def test_agreement_matches_hand_computed_and_skips_constant_articles():
    docs = ["a"] * 4 + ["b"] * 4 + ["c"] * 3
    judge = [1, 2, 4, 3, 5, 5, 5, 5, 2, None, 1]  # b: judge constant; c: one unscored → 2 items
    human = [1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3]
    got = S.agreement(judge, human, docs)
    # only article a is usable: ranks 1 2 4 3 vs 1 2 3 4 → ρ = 1 - 6·2/(4·15) = 0.8, τ = (5-1)/6
    assert got["spearman"] == pytest.approx(0.8)
    assert got["kendall_tau_b"] == pytest.approx(4 / 6)
    assert got["spearman"] == pytest.approx(stats.spearmanr([1, 2, 4, 3], [1, 2, 3, 4]).statistic)
    assert (got["articles_used"], got["articles_skipped"], got["unscored"]) == (1, 2, 1)


def test_load_summeval_takes_first_articles(two_articles: Path):
    cases = S.load_summeval(two_articles, docs=1)
    assert [c.extra["doc_id"] for c in cases] == ["d1"] * 4
    assert cases[0].input.startswith("Article d1") and cases[3].extra["human_coherence"] == 5.0


def test_run_end_to_end_with_fake_judge(two_articles: Path):
    # summary i gets more mass on high scores, so the fake agrees with coherence on d1
    def policy(prompt: str) -> dict[str, float]:
        k = int(re.search(r"summary (\d)", prompt).group(1))
        return {"1": 0.4 - 0.1 * k, "2": 0.3, "3": 0.3 + 0.1 * k}

    judge = fake_judge(policy, generator=lambda p: "Score: 3" if "summary 3" in p or "summary 2" in p else "four")
    res = S.run({"fake": judge}, two_articles, docs=1)
    assert res["articles"] == 1 and res["summaries"] == 4
    coh = res["judges"]["fake"]["dimensions"]["coherence"]
    assert coh["expected"]["spearman"] == pytest.approx(1.0)
    assert coh["naive"]["unscored"] == 2  # "four" twice: counted, excluded
    assert coh["naive"]["articles_used"] == 0  # the two parsed scores are too few to correlate
    md = S.render_md(res)
    assert "G-Eval-4" in md and "fake (float32) expected" in md


def test_likelihood_scorers_equal_eval_records_and_runs_merge(two_articles: Path, tmp_path: Path):
    from localjudge.runs.evaluate import evaluate

    cases = S.load_summeval(two_articles)
    judge = fake_judge(lambda p: {"3": 1.0})
    scores, seconds = S.LL.likelihood_scores(judge, cases)
    assert set(seconds) == {"given_article", "without_article"}
    for dim in S.DIMENSIONS:
        recs = evaluate(cases, [S.LL.likelihood_metric(dim, pmi=True)], judge, progress=False).records
        assert scores["ll-pmi"][dim] == pytest.approx([r.raw_score for r in recs])
        assert scores["ll-mean"][dim] == pytest.approx([r.detail.given_source.mean for r in recs])
        assert scores["ll-sum"][dim] == pytest.approx([r.detail.given_source.sum for r in recs])
    # a likelihood-only run, then a G-Eval-only run: the scores file holds both, hybrids see both
    first = S.run({"fake": judge}, two_articles, None, geval=False, scores_dir=tmp_path)
    assert "expected" not in first["judges"]["fake"]["dimensions"]["coherence"]
    second = S.run({"fake": judge}, two_articles, None, likelihood=False, naive=False, scores_dir=tmp_path)
    saved = json.loads((tmp_path / "fake-float32.json").read_text())
    assert {"expected", "argmax", "ll-mean", "ll-pmi", "ll-sum"} <= set(saved["items"])
    # 8 summaries are too few to fit and test a hybrid: the run says so instead of inventing one
    assert "label more" in second["judges"]["fake"]["hybrid"]["coherence"]["error"]
    assert "fake (float32) ll-mean" in S.render_md(first)


def test_cross_judge_hybrid_from_two_judges_saved_scores(tmp_path: Path, monkeypatch):
    import numpy as np

    monkeypatch.setattr(S.LL, "SPLITS", 3)  # 20 splits in the benchmark; 3 show the bookkeeping
    rng = np.random.default_rng(0)
    rows = [
        _row(
            f"d{a}",
            f"M{i}",
            " ".join(["the", "cat", "sat", "on", "a", "mat"][: i + 1]),
            float(rng.integers(1, 6)),
            float(rng.integers(1, 6)),
        )
        for a in range(20)
        for i in range(6)
    ]
    for r in rows:
        r["reference"] = "the cat sat on the mat"
    data = tmp_path / "dev.json"
    data.write_text(json.dumps(rows))
    cases = S.load_summeval(data)
    ids = [c.id for c in cases]
    runs = []
    for name in ("a", "b"):  # two judges, each a noisy reading of the human scores
        items = {"ll-mean": {d: [c.extra[f"human_{d}"] + rng.normal(0, 1.5) for c in cases] for d in S.DIMENSIONS}}
        (tmp_path / f"{name}-float32.json").write_text(json.dumps({"data": data.name, "case_ids": ids, "items": items}))
        runs.append(
            {
                "data": str(data),
                "articles": 20,
                "summaries": len(cases),
                "template": "t",
                "dtype": "float32",
                "judges": {
                    name: {
                        "judge": {"dtype": "float32"},
                        "hybrid": {},
                        "dimensions": {d: {} for d in S.DIMENSIONS},
                        "average": {},
                        "seconds": {},
                        "wall_s": 0,
                        "cpu_s": 0,
                    }
                },
            }
        )
    saved, cases = S.saved_scores(tmp_path, runs)
    assert sorted(saved) == ["a", "b"] and [c.id for c in cases] == ids
    cross = S.cross_judge(saved, cases)
    assert cross["judges"] == ["a", "b"]
    coh = cross["hybrid"]["coherence"]
    assert coh["parts"] == ["a ll-mean", "b ll-mean"] and coh["fit_articles"] == 10 == coh["held_articles"]
    assert set(coh["held_out"]) == {"a ll-mean", "b ll-mean", "hybrid"}
    splits = coh["splits"]  # seed 0 and 19 more random half splits
    assert splits["n"] == S.LL.SPLITS and sum(splits["chosen"].values()) == splits["n"]
    assert 0 <= splits["hybrid_beats_best_part"] <= splits["n"]
    assert all(-1 <= v <= 1 for v in splits["mean_held_out"].values())
    # a run on other data, or one judge only, has no cross-judge hybrid
    assert S.cross_judge(*S.saved_scores(tmp_path, runs[:1])) is None
    # ROUGE-L against the reference as a second part, per judge
    lexical = S.with_rouge(saved, cases)
    assert sorted(lexical) == ["a", "b"] and lexical["a"]["coherence"]["parts"] == ["ll-mean", "rouge-l"]
    S.write_results(str(tmp_path / "res"), runs, tmp_path)
    md = (tmp_path / "res.md").read_text()
    assert "### Both embedded judges together" in md and "### With ROUGE-L as a part" in md
    assert set(json.loads((tmp_path / "res.json").read_text())) == {"runs", "cross_judge", "with_rouge_l"}
    lines = S.LL.render_hybrids("", cross["hybrid"])
    assert (
        lines[0].startswith("Hybrid of a ll-mean and b ll-mean") and sum(r.startswith("| hybrid |") for r in lines) == 2
    )
    assert any(r.startswith("Hybrid ≥ its best part on the held-back half: cohe: ") for r in lines)
