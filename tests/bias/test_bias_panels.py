"""Panels as judges in the bias lab (`bias.panels`): pooled by hand, and planted family preferences passed on or not.

Layout as the self-preference study's: two Qwen judges (q-big, q-small), one SmolLM (s), one Gemma
(g), each also a generator, and references that no judge's family wrote.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from bias_pairs import shuffled_pairs
from click.testing import CliRunner

from localjudge.bias import BiasOptions, PairwiseRecord, PointwiseRecord, analyze_models
from localjudge.bias.panels import BiasPanel, panel_pairwise, panel_pointwise, panel_targets, parse_panel
from localjudge.errors import ConfigError

FAST = BiasOptions(n_bootstrap=300, n_permutations=999)
JUDGES = (("q-big", "qwen"), ("q-small", "qwen"), ("s", "smollm"), ("g", "gemma"))
GENERATORS = (*JUDGES, ("ref", "reference"))
STUDY = Path(__file__).resolve().parents[1] / "data" / "bias_study"


def pairs(seed: int, family_bonus: dict[str, float], n_items: int = 60) -> list[PairwiseRecord]:
    """Every pair of generators per item, both orders; each judge adds its family's bonus (logit) to its family's."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_items):
        quality = {g: rng.normal() for g, _ in GENERATORS}
        for (ga, fa), (gb, fb) in shuffled_pairs(rng, GENERATORS):
            for judge, jf in JUDGES:
                bonus = family_bonus.get(jf, 0.0)
                base = 1.5 * (quality[ga] - quality[gb]) + bonus * ((fa == jf) - (fb == jf))
                p1, p2 = (1 / (1 + math.exp(-(base + 0.4 * s + rng.normal(0, 0.2)))) for s in (1, -1))
                out.append(
                    PairwiseRecord(
                        item_id=f"q{i}", judge=judge, judge_family=jf, generator_a=ga, family_a=fa,
                        generator_b=gb, family_b=fb, p_a_first=p1, p_a_second=p2,
                    )
                )  # fmt: skip
    return out


def _record(judge: str, family: str, a: str, b: str, first: float | None, second: float | None) -> PairwiseRecord:
    fam = {"x": "fx", "y": "fy", "z": "fz"}
    return PairwiseRecord(
        item_id="i", judge=judge, judge_family=family, generator_a=a, family_a=fam[a], generator_b=b,
        family_b=fam[b], p_a_first=first, p_a_second=second,
    )  # fmt: skip


def test_a_panels_pair_is_its_members_probabilities_averaged_order_by_order():
    records = [
        _record("j1", "f1", "x", "y", 0.9, 0.7),
        _record("j2", "f2", "y", "x", 0.2, 0.6),  # saw y as A: P(x | x first) = 1 - 0.6, P(x | x second) = 1 - 0.2
        _record("j3", "f3", "x", "y", 0.5, 0.1),
        _record("j1", "f1", "x", "z", 0.8, 0.8),  # j2 never judged (x, z): no panel judgment on it
    ]
    (pooled,) = panel_pairwise(records, BiasPanel(name="p", members=("j1", "j2", "j3")))
    assert (pooled.judge, pooled.generator_a, pooled.generator_b) == ("p", "x", "y")
    assert pooled.p_a_first == pytest.approx((0.9 + 0.4 + 0.5) / 3)
    assert pooled.p_a_second == pytest.approx((0.7 + 0.8 + 0.1) / 3)
    # pooled by panel's `pool` with no weights: the members' plain mean, bit for bit
    assert pooled.p_a_first == np.mean([0.9, 1 - 0.6, 0.5]) and pooled.p_a_second == np.mean([0.7, 1 - 0.2, 0.1])
    records[2] = _record("j3", "f3", "x", "y", None, 0.1)
    (unscored,) = panel_pairwise(records, BiasPanel(name="p", members=("j1", "j2", "j3")))
    assert unscored.p_a_first is None and unscored.p_a_second == pytest.approx((0.7 + 0.8 + 0.1) / 3)


def test_a_panels_score_is_its_members_mean():
    def rec(judge, score):
        return PointwiseRecord(
            item_id="i", judge=judge, judge_family="f" + judge, generator="x", generator_family="fx", score=score,
            response_length=10, judge_logppl=1.0,
        )  # fmt: skip

    (pooled,) = panel_pointwise([rec("a", 2.0), rec("b", 4.5), rec("c", 3.0)], BiasPanel(name="p", members=("a", "b")))
    assert pooled.score == pytest.approx(3.25) and pooled.judge == "p" and pooled.judge_logppl is None
    (none,) = panel_pointwise([rec("a", 2.0), rec("b", None)], BiasPanel(name="p", members=("a", "b")))
    assert none.score is None


def test_one_biased_family_passes_part_of_its_preference_to_a_panel_and_none_to_one_without_it():
    records = pairs(0, {"qwen": 1.5})
    alone = {(x.judge, x.target): x for x in analyze_models([], records, FAST).targets}
    three = BiasPanel(name="three", members=("q-big", "s", "g"))
    without = BiasPanel(name="without", members=("s", "g"))
    got = {(x.panel, x.target): x for x in panel_targets([], records, [three, without], FAST)}
    own = alone[("q-big", "q-big")].difference.value
    passed = got[("three", "q-big")].difference.value
    assert own > 0.15 and 0.05 < passed < 0.6 * own
    assert got[("three", "q-big")].includes_family and not got[("without", "q-big")].includes_family
    assert (
        abs(got[("without", "q-big")].difference.value) < 0.03
        and abs(got[("without", "q-small")].difference.value) < 0.03
    )
    # an unbiased family meets the biased member in the panel as an opponent: pushed down, by less than q-big's own
    assert -passed < got[("three", "s")].difference.value < -0.01


def test_equal_preferences_cancel_in_a_panel_of_every_family():
    records = pairs(1, {"qwen": 1.0, "smollm": 1.0, "gemma": 1.0})
    alone = {(x.judge, x.target): x.difference.value for x in analyze_models([], records, FAST).targets}
    assert min(alone[(j, j)] for j in ("q-big", "s", "g")) > 0.1
    panel = BiasPanel(name="three", members=("q-big", "s", "g"))
    got = {x.target: x.difference.value for x in panel_targets([], records, [panel], FAST)}
    assert set(got) == {"q-big", "q-small", "s", "g"}
    assert max(abs(v) for v in got.values()) < 0.03


def test_panels_are_refused_when_ill_formed():
    assert parse_panel("a, b").name == "a+b"
    for spec in ("only=a", "x=a,a", "=a,b"):
        with pytest.raises(ConfigError, match="two or more judges"):
            parse_panel(spec)
    records = pairs(2, {}, n_items=2)
    with pytest.raises(ConfigError, match="'nobody' gave no judgments"):
        analyze_models([], records, FAST, [BiasPanel(name="p", members=("s", "nobody"))])
    with pytest.raises(ConfigError, match="apart from every judge"):
        analyze_models([], records, FAST, [BiasPanel(name="s", members=("s", "g"))])


def test_the_cli_measures_a_panel_from_judgments_on_disk(tmp_path, no_load):
    from localjudge.cli import main

    out = tmp_path / "panels"
    args = ["bias", "analyse", str(STUDY / "responses.jsonl"), "--judgments", str(STUDY), "--out-dir", str(out)]
    res = CliRunner().invoke(main, [*args, "--panel", "both=smollm2-135m,gemma3-270m", "--bootstrap", "200"])
    assert res.exit_code == 0, res.output
    study = json.loads((out / "report.json").read_text())
    panels = study["models"]["panels"]
    assert {(x["panel"], x["family"], x["target"]) for x in panels} == {
        ("both", "gemma", "gemma3-270m"),
        ("both", "smollm", "smollm2-135m"),
    }
    # the two families' judges are the panel: each pair's pooled P(gemma) is the mean of theirs
    rows = [json.loads(line) for line in (STUDY / "pairwise_records.jsonl").read_text().splitlines()]
    assert all(x["includes_family"] for x in panels)
    pooled = panel_pairwise([PairwiseRecord(**r) for r in rows], parse_panel("both=smollm2-135m,gemma3-270m"))
    first = [
        r.p_a_first if r.generator_a == "gemma3-270m" else 1 - r.p_a_second
        for r in pooled
        if r.p_a_first is not None and r.p_a_second is not None
    ]
    second = [
        r.p_a_second if r.generator_a == "gemma3-270m" else 1 - r.p_a_first
        for r in pooled
        if r.p_a_first is not None and r.p_a_second is not None
    ]
    gemma = next(x for x in panels if x["family"] == "gemma")
    assert gemma["rate"]["value"] == pytest.approx((np.mean(first) + np.mean(second)) / 2)
    assert "Panels as judges" in (out / "report.md").read_text()
    bad = CliRunner().invoke(main, [*args[:-1], str(tmp_path / "bad"), "--panel", "p=smollm2-135m,llama"])
    assert bad.exit_code != 0 and "'llama' gave no judgments" in bad.output
