"""Bias lab analyses on synthetic data with planted (or absent) biases."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st
from pydantic import ValidationError

from localjudge.bias import (
    BiasOptions,
    BiasReport,
    PairwiseRecord,
    PointwiseRecord,
    analyze_pairwise,
    analyze_pointwise,
    format_bias_report,
    score_matrix,
    self_preference,
    write_heatmap,
)
from localjudge.errors import DataError, LocalJudgeError
from localjudge.stats import holm, sign_flip_p

FAST = BiasOptions(n_bootstrap=300, n_permutations=1999)
TWO_FAMILIES = (("ga", "alpha"), ("gb", "beta"))
THREE_FAMILIES = (("ga", "alpha"), ("gb", "beta"), ("gc", "gamma"))


def pointwise_data(
    seed: int,
    judges: tuple[tuple[str, str], ...] = (("a1", "alpha"), ("b1", "beta")),
    generators: tuple[tuple[str, str], ...] = TWO_FAMILIES,
    *,
    n_items: int = 60,
    own_bonus: dict[str, float] | None = None,
    length_reward: dict[str, float] | None = None,
    ppl_weight: dict[str, float] | None = None,
    ppl_own_drop: float = 0.0,
    noise: float = 0.5,
) -> list[PointwiseRecord]:
    """Responses with a latent quality; each judge sees quality + its planted biases + noise.

    own_bonus: points added to own-family responses; length_reward: points per 100 chars above
    700; ppl_weight: points per nat of lower perplexity; ppl_own_drop: how much lower every
    judge's logppl is on its own family's text.
    """
    own_bonus, length_reward, ppl_weight = own_bonus or {}, length_reward or {}, ppl_weight or {}
    rng = np.random.default_rng(seed)
    offsets = {j: 0.3 * k for k, (j, _) in enumerate(judges)}  # judges differ in leniency
    records = []
    for i in range(n_items):
        difficulty = rng.normal(0.0, 1.0)
        for gen, gen_family in generators:
            quality = difficulty + rng.normal(0.0, 0.7)
            length = int(rng.integers(200, 1200))
            human = round(quality + rng.normal(0.0, 0.3), 1)
            for judge, judge_family in judges:
                own = gen_family == judge_family
                logppl = 2.0 - ppl_own_drop * own + rng.normal(0.0, 0.4)
                score = (
                    5.0
                    + offsets[judge]
                    + quality
                    + own_bonus.get(judge, 0.0) * own
                    + length_reward.get(judge, 0.0) * (length - 700) / 100
                    + ppl_weight.get(judge, 0.0) * (2.0 - logppl)
                    + rng.normal(0.0, noise)
                )
                records.append(
                    PointwiseRecord(
                        item_id=f"q{i}",
                        judge=judge,
                        judge_family=judge_family,
                        generator=gen,
                        generator_family=gen_family,
                        score=score,
                        response_length=length,
                        judge_logppl=logppl,
                        human_score=human,
                    )
                )
    return records


def pairwise_data(
    seed: int,
    judges: tuple[tuple[str, str], ...] = (("a1", "alpha"), ("b1", "beta")),
    generators: tuple[tuple[str, str], ...] = TWO_FAMILIES,
    *,
    n_items: int = 60,
    own_bonus: dict[str, float] | None = None,
    position: dict[str, float] | None = None,
    noise: float = 0.3,
) -> list[PairwiseRecord]:
    """Pairs of responses; P(A wins) = sigmoid(quality gap + planted logit biases + noise)."""
    own_bonus, position = own_bonus or {}, position or {}
    rng = np.random.default_rng(seed)
    records = []
    for i in range(n_items):
        quality = {g: rng.normal(0.0, 1.0) for g, _ in generators}
        length = {g: int(rng.integers(200, 1200)) for g, _ in generators}
        for x in range(len(generators)):
            for y in range(x + 1, len(generators)):
                (ga, fa), (gb, fb) = generators[x], generators[y]
                if rng.random() < 0.5:
                    (ga, fa), (gb, fb) = (gb, fb), (ga, fa)
                human = "a" if quality[ga] + rng.normal(0, 0.3) > quality[gb] else "b"
                for judge, jf in judges:
                    base = 1.5 * (quality[ga] - quality[gb])
                    base += own_bonus.get(judge, 0.0) * ((fa == jf) - (fb == jf))
                    pos = position.get(judge, 0.0)
                    p1 = 1 / (1 + math.exp(-(base + pos + rng.normal(0, noise))))
                    p2 = 1 / (1 + math.exp(-(base - pos + rng.normal(0, noise))))
                    records.append(
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
                            human_preferred=human,
                            length_a=length[ga],
                            length_b=length[gb],
                        )
                    )
    return records


def by_judge(results: list) -> dict:
    return {r.judge: r for r in results}


def significant(report: BiasReport, test: str) -> set[str]:
    return {f.judge for f in report.findings if f.test == test and f.significant}


# (a) planted self-preference -------------------------------------------------------------------


def test_planted_self_preference_is_detected_and_others_are_not_flagged():
    judges = (("a1", "alpha"), ("b1", "beta"), ("c1", "gamma"))
    report = analyze_pointwise(pointwise_data(1, judges, THREE_FAMILIES, own_bonus={"a1": 1.0}), FAST)
    did = by_judge(report.self_preference)
    assert did["a1"].did.value == pytest.approx(1.0, abs=0.3)
    assert did["a1"].did.ci_low > 0
    assert did["a1"].reference_excludes_own_family
    assert significant(report, "self_preference") == {"a1"}
    # The regression form agrees with the DiD and, like it, keeps controls' own families out.
    ppl = by_judge(report.perplexity)
    assert ppl["a1"].own_without.value == pytest.approx(did["a1"].did.value, abs=0.1)
    assert significant(report, "perplexity_adjusted_self_preference") == {"a1"}
    assert not any(s.startswith("With only two model families") for s in report.summary)
    assert any(s.startswith("a1 judge favours its own family (alpha) by +") for s in report.summary)


def test_two_families_fair_same_family_judge_not_flagged_and_contamination_documented():
    judges = (("a1", "alpha"), ("a2", "alpha"), ("b1", "beta"))
    report = analyze_pointwise(pointwise_data(2, judges, own_bonus={"a1": 1.0}), FAST)
    did = by_judge(report.self_preference)
    assert did["a1"].did.p_value < 0.01 and did["a1"].did.value > 0.6
    assert did["a2"].did.p_value > 0.05
    # With two families only relative bias is identified: b1 is compared with a1 and a2,
    # so half of a1's bonus shows up in b1's DiD, and the report says so.
    assert not did["b1"].reference_excludes_own_family
    assert did["b1"].did.ci_low < 0.5 < did["b1"].did.ci_high
    assert any(s.startswith("With only two model families") for s in report.summary)


def test_pairwise_self_preference_detected_against_other_judges_and_chance():
    judges = (("a1", "alpha"), ("b1", "beta"), ("c1", "gamma"))
    report = analyze_pairwise(pairwise_data(3, judges, THREE_FAMILIES, own_bonus={"a1": 1.5}), FAST)
    pref = by_judge(report.pairwise_self_preference)
    assert pref["a1"].difference.value > 0.1
    assert significant(report, "pairwise_self_preference") == {"a1"}
    assert pref["b1"].reference_excludes_own_family
    alone = analyze_pairwise(pairwise_data(3, (("a1", "alpha"),), own_bonus={"a1": 1.5}), FAST)
    assert alone.pairwise_self_preference[0].reference_rate is None
    assert alone.pairwise_self_preference[0].difference.p_value < 0.01


# (b) position bias ------------------------------------------------------------------------------


def test_position_bias_detected_for_biased_judge_only():
    report = analyze_pairwise(pairwise_data(4, position={"a1": 1.5}), FAST)
    pos = by_judge(report.position)
    assert pos["a1"].first_position.value > 0.6 and pos["a1"].first_position.p_value < 0.001
    assert pos["a1"].flip_rate.value > 0.3
    assert pos["b1"].first_position.p_value > 0.05
    assert pos["b1"].flip_rate.value < 0.2
    assert significant(report, "position") == {"a1"}
    # Averaging both orders cancels the position effect out of accuracy.
    assert pos["a1"].accuracy_combined.value > pos["a1"].accuracy_a_second.value


# (c) length bias -------------------------------------------------------------------------------


def test_length_bias_detected_for_rewarding_judge_only():
    records = pointwise_data(5, (("a1", "alpha"), ("b1", "beta"), ("c1", "beta")), length_reward={"a1": 0.3})
    report = analyze_pointwise(records, FAST)
    length = by_judge(report.length)
    assert length["a1"].slope.value == pytest.approx(0.3, abs=0.1)
    assert length["a1"].slope.p_value < 0.001 and length["a1"].spearman.value > 0.3
    assert length["b1"].slope.p_value > 0.05 and length["c1"].slope.p_value > 0.05
    assert significant(report, "length") == {"a1"}


# (d) no planted bias ---------------------------------------------------------------------------


def test_no_planted_bias_rarely_yields_a_significant_finding():
    quick = BiasOptions(n_bootstrap=50, n_permutations=999)
    hits = {"pointwise": 0, "pairwise": 0}
    for seed in range(10):
        point = analyze_pointwise(pointwise_data(100 + seed, n_items=40), quick)
        pair = analyze_pairwise(pairwise_data(200 + seed, n_items=40), quick)
        for report in (point, pair):
            flagged = any(f.significant for f in report.findings)
            hits[report.kind] += flagged
            if not flagged:
                assert report.summary[0].startswith("No effect is significant at α=0.05")
    # Holm keeps each report's family-wise error near 5%: at most 1 of 10 seeds per protocol.
    assert hits["pointwise"] <= 1 and hits["pairwise"] <= 1


# (e) perplexity explains self-preference -------------------------------------------------------


def test_self_preference_explained_by_perplexity():
    records = pointwise_data(6, ppl_weight={"a1": 1.0}, ppl_own_drop=1.0)
    report = analyze_pointwise(records, FAST)
    a1 = by_judge(report.self_preference)["a1"]
    ppl = by_judge(report.perplexity)["a1"]
    assert a1.did.p_value < 0.001 and a1.did.value > 0.5
    assert ppl.own_without.p_value < 0.001
    assert ppl.own_with.p_value > 0.05
    assert ppl.own_with.ci_low < 0 < ppl.own_with.ci_high
    assert ppl.logppl.value == pytest.approx(-1.0, abs=0.3)
    assert any("explained by its perplexity" in s for s in report.summary)


def test_genuine_self_preference_survives_perplexity_covariate():
    records = pointwise_data(7, own_bonus={"a1": 1.0}, ppl_own_drop=0.5)
    ppl = by_judge(analyze_pointwise(records, FAST).perplexity)["a1"]
    assert ppl.own_with.value == pytest.approx(1.0, abs=0.35) and ppl.own_with.p_value < 0.01


def test_too_few_items_give_no_spurious_perplexity_significance():
    # Two items fit two regressors exactly; a cluster-robust variance would be ~0.
    report = analyze_pointwise(pointwise_data(16, n_items=2), FAST)
    assert all(q.own_with.p_value is None for q in report.perplexity)
    assert not any(f.significant for f in report.findings)


# (f) equal opportunity -------------------------------------------------------------------------


def test_equal_opportunity_gap_detected_when_planted():
    report = analyze_pairwise(pairwise_data(8, own_bonus={"a1": 1.5}, n_items=80), FAST)
    gap = by_judge(report.equal_opportunity)
    assert gap["a1"].gap.value > 0.1 and gap["a1"].gap.p_value < 0.01
    assert gap["a1"].own.value > gap["a1"].other.value
    pointwise_report = analyze_pointwise(pointwise_data(9, own_bonus={"a1": 1.5}), FAST)
    assert by_judge(pointwise_report.equal_opportunity)["a1"].gap.p_value < 0.01


def test_equal_opportunity_absent_without_human_labels():
    records = [r.model_copy(update={"human_preferred": None}) for r in pairwise_data(8)]
    assert analyze_pairwise(records, FAST).equal_opportunity == []


# Unscored records, validation, serialisation, rendering ---------------------------------------


def test_unscored_scores_are_skipped_and_counted_never_zero():
    records = pointwise_data(10, n_items=20)
    gone = {0, 3, 7}
    records = [r.model_copy(update={"score": None}) if k in gone else r for k, r in enumerate(records)]
    report = analyze_pointwise(records, FAST)
    assert report.n_unscored == 3 and sum(report.unscored_by_judge.values()) == 3
    for cell in report.matrix.cells:
        kept = [
            r.score for r in records if (r.judge, r.generator) == (cell.judge, cell.generator) and r.score is not None
        ]
        assert cell.mean.value == pytest.approx(np.mean(kept))
        assert cell.mean.n == len(kept)
    assert sum(c.n_unscored for c in report.matrix.cells) == 3
    assert report.summary[-1] == f"3 of {len(records)} records were unscored and skipped."


def test_pairwise_unscored_order_skips_record():
    records = pairwise_data(11, n_items=10)
    records[0] = records[0].model_copy(update={"p_a_second": None})
    report = analyze_pairwise(records, FAST)
    assert report.n_unscored == 1
    assert sum(p.flip_rate.n for p in report.position) == len(records) - 1


def test_records_forbid_extra_fields_and_bad_probabilities():
    with pytest.raises(ValidationError):
        PointwiseRecord(
            item_id="q",
            judge="j",
            judge_family="f",
            generator="g",
            generator_family="f",
            score=1.0,
            response_length=3,
            extra=1,
        )
    with pytest.raises(ValidationError):
        PairwiseRecord(
            item_id="q",
            judge="j",
            judge_family="f",
            generator_a="a",
            family_a="f",
            generator_b="b",
            family_b="g",
            p_a_first=1.5,
            p_a_second=0.5,
        )


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda rs: rs + [rs[0]], "twice"),
        (lambda rs: rs + [rs[0].model_copy(update={"item_id": "new", "judge_family": "zeta"})], "families"),
        (lambda rs: [], "no pointwise records"),
    ],
)
def test_inconsistent_records_raise_data_error(mutate, message):
    with pytest.raises(DataError, match=message):
        analyze_pointwise(mutate(pointwise_data(12, n_items=3)), FAST)


def test_report_is_strict_json_and_round_trips():
    records = pointwise_data(13, n_items=4)
    # One judge scores nothing of one generator: undefined cells must be None, not NaN.
    records = [r.model_copy(update={"score": None}) if (r.judge, r.generator) == ("a1", "gb") else r for r in records]
    report = analyze_pointwise(records, FAST)
    text = report.model_dump_json()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert BiasReport.model_validate_json(text) == report
    assert by_judge(report.self_preference)["a1"].did.value is None


def test_format_report_and_heatmap(tmp_path):
    report = analyze_pointwise(pointwise_data(14, n_items=15), FAST)
    text = format_bias_report(report)
    assert text.startswith("# Bias report (pointwise)")
    for title in ("## Summary", "## Mean score", "## Self-preference", "## Length bias", "## Findings"):
        assert title in text
    path = write_heatmap(report, tmp_path / "sub" / "heat.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pair = analyze_pairwise(pairwise_data(14, n_items=5), FAST)
    assert "## Position bias" in format_bias_report(pair)
    with pytest.raises(LocalJudgeError, match="pointwise report"):
        write_heatmap(pair, tmp_path / "x.png")


def test_same_seed_same_report_and_seed_changes_intervals():
    records = pointwise_data(15, n_items=20)
    one = analyze_pointwise(records, FAST)
    assert analyze_pointwise(list(reversed(records)), FAST) == one
    other = analyze_pointwise(records, FAST.model_copy(update={"seed": 1}))
    assert other.matrix.cells[0].mean.ci_low != one.matrix.cells[0].mean.ci_low


# Statistics helpers ----------------------------------------------------------------------------


def test_holm_matches_hand_computation():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.2]) == pytest.approx([0.5, 0.4])


def test_sign_flip_exact_for_small_samples():
    # All 4 values positive: only the all-plus and all-minus patterns reach |sum| = 4.
    assert sign_flip_p(np.ones(4), 10, 0) == pytest.approx(2 / 16)
    assert sign_flip_p(np.array([1.0, -1.0]), 10, 0) == 1.0


# Properties ------------------------------------------------------------------------------------

score = st.one_of(st.none(), st.floats(0.0, 10.0, allow_nan=False))


def grid_records(scores: list[list[list[float | None]]]) -> list[PointwiseRecord]:
    """Records from a [judge][item][generator] grid of scores, 3 judges × 3 families."""
    fams = ("alpha", "beta", "gamma")
    return [
        PointwiseRecord(
            item_id=f"q{i}",
            judge=f"j{j}",
            judge_family=fams[j],
            generator=f"g{g}",
            generator_family=fams[g],
            score=s,
            response_length=10 * (g + 1),
        )
        for j, per_item in enumerate(scores)
        for i, row in enumerate(per_item)
        for g, s in enumerate(row)
    ]


grids = st.integers(2, 6).flatmap(
    lambda n: st.lists(
        st.lists(st.lists(score, min_size=3, max_size=3), min_size=n, max_size=n), min_size=3, max_size=3
    )
)
TINY = BiasOptions(n_bootstrap=20, n_permutations=99)


@hyp_settings(max_examples=40, deadline=None)
@given(grids)
def test_matrix_means_equal_numpy_means(grid):
    matrix = score_matrix(grid_records(grid), TINY)
    for cell in matrix.cells:
        j, g = int(cell.judge[1:]), int(cell.generator[1:])
        kept = [row[g] for row in grid[j] if row[g] is not None]
        if kept:
            assert cell.mean.value == pytest.approx(np.mean(kept))
        else:
            assert cell.mean.value is None
        assert cell.n_unscored == sum(row[g] is None for row in grid[j])


@hyp_settings(max_examples=40, deadline=None)
@given(grids, st.integers(0, 2), st.floats(-5.0, 5.0, allow_nan=False))
def test_did_invariant_to_shifting_one_judge(grid, judge, shift):
    shifted = [
        [[None if s is None else s + shift if j == judge else s for s in row] for row in per_item]
        for j, per_item in enumerate(grid)
    ]
    before = self_preference(grid_records(grid), TINY)
    after = self_preference(grid_records(shifted), TINY)
    for b, a in zip(before, after):
        if b.did.value is None:
            assert a.did.value is None
        else:
            assert a.did.value == pytest.approx(b.did.value, abs=1e-9)
            assert a.did.p_value == pytest.approx(b.did.p_value)


def test_a_relative_estimate_among_three_families_is_explained_as_such():
    # three judge families, but the third family's judge left some pairs unscored: the note names
    # the judge and the reason instead of claiming that the study has two families
    from types import SimpleNamespace

    from localjudge.bias.summary import summarize

    found = [SimpleNamespace(significant=True, judge="q1", test="self_preference", sentence="q1 favours qwen.")]
    prefs = [
        SimpleNamespace(judge="q1", judge_family="qwen", reference_excludes_own_family=False),
        SimpleNamespace(judge="s1", judge_family="smollm", reference_excludes_own_family=True),
        SimpleNamespace(judge="g1", judge_family="gemma", reference_excludes_own_family=True),
    ]
    lines = summarize(found, FAST, self_preference=prefs)  # type: ignore[arg-type]
    assert not any(s.startswith("With only two model families") for s in lines)
    assert any(s.startswith("For q1: on some pairs no judge of a third family") for s in lines)
    two = summarize(found, FAST, self_preference=prefs[:2])  # type: ignore[arg-type]
    assert any(s.startswith("With only two model families") for s in two)
