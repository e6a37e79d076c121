"""Model-level preferences (`bias.targets`, `analyze_models`) on synthetic judgments with planted effects.

The layout is the self-preference study's: two models of one family (q-big, q-small), two single
models of other families (s, g), and a reference that judges nothing. Every judge is a generator.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from bias_pairs import shuffled_pairs
from click.testing import CliRunner

from localjudge.bias import (
    BiasOptions,
    PairwiseRecord,
    PointwiseRecord,
    analyze_models,
    analyze_pairwise,
    format_bias_report,
    pairwise_targets,
    pointwise_targets,
    win_rates,
    write_position_panel,
    write_win_rates,
)
from localjudge.bias.targets import judge_targets

FAST = BiasOptions(n_bootstrap=300, n_permutations=1999)
JUDGES = (("q-big", "qwen"), ("q-small", "qwen"), ("s", "smollm"), ("g", "gemma"))
GENERATORS = (*JUDGES, ("ref", "reference"))
STUDY = Path(__file__).resolve().parents[1] / "data" / "bias_study"


def _bonus(judge: str, judge_family: str, gen: str, gen_family: str, own: dict, sibling: dict) -> float:
    """Logit (or score) bonus a judge gives a generator: own for itself, sibling for its family's others."""
    if gen == judge:
        return own.get(judge, 0.0)
    return sibling.get(judge, 0.0) if gen_family == judge_family else 0.0


def pairs(
    seed: int,
    *,
    own: dict[str, float] | None = None,
    sibling: dict[str, float] | None = None,
    position: dict[str, float] | None = None,
    n_items: int = 50,
    noise: float = 0.3,
) -> list[PairwiseRecord]:
    """Every pair of generators per item; P(A wins) = sigmoid(quality gap + planted biases + noise)."""
    own, sibling, position = own or {}, sibling or {}, position or {}
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_items):
        quality = {g: rng.normal(0.0, 1.0) for g, _ in GENERATORS}
        for (ga, fa), (gb, fb) in shuffled_pairs(rng, GENERATORS):
            for judge, jf in JUDGES:
                base = 1.5 * (quality[ga] - quality[gb])
                base += _bonus(judge, jf, ga, fa, own, sibling) - _bonus(judge, jf, gb, fb, own, sibling)
                pos = position.get(judge, 0.0)
                p1 = 1 / (1 + math.exp(-(base + pos + rng.normal(0, noise))))
                p2 = 1 / (1 + math.exp(-(base - pos + rng.normal(0, noise))))
                out.append(
                    PairwiseRecord(
                        item_id=f"q{i}",
                        judge=judge,
                        judge_family=jf,
                        generator_a=ga,
                        family_a=fa,
                        generator_b=gb,
                        family_b=fb,
                        p_a_first=p1,
                        p_a_second=p2,
                    )
                )
    return out


def scores(seed: int, *, own=None, sibling=None, n_items: int = 50) -> list[PointwiseRecord]:
    """Score = 3 + quality + judge offset + planted bonus + noise, for every (judge, item, generator)."""
    own, sibling = own or {}, sibling or {}
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_items):
        for gen, gf in GENERATORS:
            quality = rng.normal(0.0, 1.0)
            for k, (judge, jf) in enumerate(JUDGES):
                score = 3 + 0.2 * k + quality + _bonus(judge, jf, gen, gf, own, sibling) + rng.normal(0, 0.3)
                out.append(
                    PointwiseRecord(
                        item_id=f"q{i}",
                        judge=judge,
                        judge_family=jf,
                        generator=gen,
                        generator_family=gf,
                        score=score,
                        response_length=100,
                    )
                )
    return out


def _by(results) -> dict[tuple[str, str], object]:
    return {(r.judge, r.target): r for r in results}


def _significant(report, test: str) -> set[tuple[str, str]]:
    return {(f.judge, f.test) for f in report.findings if f.test == test and f.significant}


def test_targets_are_the_judge_itself_then_its_family():
    fams = dict(GENERATORS)
    assert judge_targets("q-big", "qwen", fams) == [("q-big", "self"), ("q-small", "family")]
    assert judge_targets("s", "smollm", fams) == [("s", "self")]
    assert judge_targets("x", "qwen", fams) == [("q-big", "family"), ("q-small", "family")]  # not a generator


def test_hand_built_pairs_give_panickssery_rate_from_both_orders():
    def rec(ga, gb, p1, p2, judge="j", item="i1"):
        fam = {"j": "jf", "o": "of", "p": "pf", "k": "kf"}
        return PairwiseRecord(
            item_id=item,
            judge=judge,
            judge_family=fam[judge],
            generator_a=ga,
            family_a=fam[ga],
            generator_b=gb,
            family_b=fam[gb],
            p_a_first=p1,
            p_a_second=p2,
        )

    # own as A: P(own | first) = p_a_first; own as B: P(own | first) = 1 - p_a_second
    records = [rec("j", "o", 0.9, 0.3), rec("p", "j", 0.6, 0.2, item="i2"), rec("j", "o", 0.5, 0.5, judge="k")]
    self_ = _by(pairwise_targets(records, FAST))[("j", "j")]
    assert self_.shown_first.value == pytest.approx((0.9 + 0.8) / 2)
    assert self_.shown_second.value == pytest.approx((0.3 + 0.4) / 2)
    assert self_.rate.value == pytest.approx((0.9 + 0.8 + 0.3 + 0.4) / 4)
    # k judged only the first pair, and neither of its generators is of k's family: the reference
    assert self_.reference_rate.value == pytest.approx(0.5) and self_.reference_rate.n == 1
    assert self_.difference.value == pytest.approx(0.6 - 0.5)


def test_planted_self_preference_found_for_that_judge_only_and_not_as_family_preference():
    records = pairs(1, own={"q-big": 1.5})
    found = _by(pairwise_targets(records, FAST))
    big = found[("q-big", "q-big")]
    assert big.rate.value > 0.6 and big.difference.value > 0.1 and big.difference.p_value < 0.01
    for key in [("q-big", "q-small"), ("q-small", "q-small"), ("q-small", "q-big"), ("s", "s"), ("g", "g")]:
        assert found[key].difference.p_value > 0.01, key
    report = analyze_models([], records, FAST)
    assert _significant(report, "target_difference") == {("q-big", "target_difference")}
    assert any(s.startswith("q-big judge prefers its own responses more than") for s in report.summary)


def test_planted_family_preference_found_for_the_sibling_target():
    # q-small favours q-big's responses (its family's other model), not its own
    found = _by(pairwise_targets(pairs(2, sibling={"q-small": 1.5}), FAST))
    fam = found[("q-small", "q-big")]
    assert fam.relation == "family" and fam.difference.value > 0.1 and fam.difference.p_value < 0.01
    assert found[("q-small", "q-small")].difference.p_value > 0.01
    assert found[("q-big", "q-small")].difference.p_value > 0.01


def test_position_alone_reads_as_no_self_preference_and_the_summary_says_it_follows_order():
    records = pairs(3, position={"s": 4.0})
    report = analyze_models([], records, FAST)
    s = _by(report.targets)[("s", "s")]
    assert s.shown_first.value > 0.85 and s.shown_second.value < 0.15
    assert abs(s.rate.value - 0.5) < 0.05 and s.rate.p_value > 0.01
    assert any(line.startswith("s judge's judgments on its own responses follow the order") for line in report.summary)
    assert not any(f.significant for f in report.findings)


def test_pointwise_did_finds_planted_self_and_family_bonus():
    found = _by(pointwise_targets(scores(4, own={"g": 1.0}, sibling={"q-big": 1.0}), FAST))
    assert found[("g", "g")].did.value == pytest.approx(1.0, abs=0.3) and found[("g", "g")].did.p_value < 0.01
    assert found[("q-big", "q-small")].did.value == pytest.approx(1.0, abs=0.3)
    assert found[("q-big", "q-small")].did.p_value < 0.01
    for key in [("q-big", "q-big"), ("q-small", "q-small"), ("s", "s")]:
        assert found[key].did.p_value > 0.01, key
    assert found[("g", "g")].reference_judges == ["q-big", "q-small", "s"]


def test_win_rates_equal_numpy_means_and_absent_generators_are_undefined():
    records = pairs(5, n_items=6)
    m = win_rates(records, FAST)
    cell = {(c.judge, c.generator): c.rate for c in m.cells}
    mine = [
        r.p_a_first / 2 + r.p_a_second / 2 if r.generator_a == "ref" else 1 - r.p_a_first / 2 - r.p_a_second / 2
        for r in records
        if r.judge == "s" and "ref" in (r.generator_a, r.generator_b)
    ]
    assert cell[("s", "ref")].value == pytest.approx(np.mean(mine))
    assert cell[("s", "ref")].n == len(mine) == 6 * 4
    without = win_rates([r for r in records if not (r.judge == "g" and "ref" in (r.generator_a, r.generator_b))])
    assert {(c.judge, c.generator): c.rate for c in without.cells}[("g", "ref")].value is None


def test_report_markdown_and_figures(tmp_path):
    records = pairs(6, n_items=12, position={"g": 2.0})
    report = analyze_models(scores(6, n_items=12), records, FAST)
    md = format_bias_report(report)
    assert md.startswith("# Model-level preferences\n") and report.kind == "models"
    assert "## Pairwise win rate" in md and "## Pointwise preference for a target" in md
    assert "## Mean score" not in md and "## Position bias" not in md  # the protocols' tables stay empty
    assert "| q-big | q-small (family) |" in md
    assert write_win_rates(report, tmp_path / "w.png").read_bytes()[:4] == b"\x89PNG"
    pair_report = analyze_pairwise(records, FAST)
    assert write_position_panel(pair_report, report, tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_reanalysis_of_the_finished_study_adds_the_model_level_report(tmp_path, no_load):
    from localjudge.cli import main

    out = tmp_path / "again"
    res = CliRunner().invoke(
        main, ["bias", "analyse", str(STUDY / "responses.jsonl"), "--judgments", str(STUDY), "--out-dir", str(out)]
    )
    assert res.exit_code == 0, res.output
    study = json.loads((out / "report.json").read_text())
    models = {(x["judge"], x["target"]): x for x in study["models"]["targets"]}
    assert set(models) == {("gemma3-270m", "gemma3-270m"), ("smollm2-135m", "smollm2-135m")}
    # recomputed by hand from the judgments: P(own | own first) and P(own | own second), averaged
    rows = [json.loads(line) for line in (STUDY / "pairwise_records.jsonl").read_text().splitlines()]
    for judge in ("gemma3-270m", "smollm2-135m"):
        scored = [r for r in rows if r["judge"] == judge and r["p_a_first"] is not None and r["p_a_second"] is not None]
        own_a = [r["generator_a"] == judge for r in scored]
        first = [r["p_a_first"] if a else 1 - r["p_a_second"] for r, a in zip(scored, own_a)]
        second = [r["p_a_second"] if a else 1 - r["p_a_first"] for r, a in zip(scored, own_a)]
        assert models[(judge, judge)]["shown_first"]["value"] == pytest.approx(np.mean(first))
        assert models[(judge, judge)]["rate"]["value"] == pytest.approx((np.mean(first) + np.mean(second)) / 2)
    assert (out / "win_rates.png").is_file() and (out / "position.png").is_file()
    assert "# Model-level preferences" in (out / "report.md").read_text()
    assert "[models]" in res.output
