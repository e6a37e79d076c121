"""Tests of localjudge.calibration and `localjudge calibrate`: pure, fast, no models."""

from __future__ import annotations

import csv
import itertools
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from localjudge.calibration import (
    CalibrationOptions,
    CalibrationReport,
    InputInfo,
    calibrate,
    correlations,
    fit_hybrid,
    fit_isotonic,
    format_report,
    load_pairs,
    pav,
    required_n,
)
from localjudge.calibration.diagnostics import MIN_LABELLED, sample_size_check, scale_diagnostics
from localjudge.calibration.isotonic import MIN_SPLIT_ITEMS, evaluate_isotonic
from localjudge.cli import main
from localjudge.errors import ConfigError, DataError, LocalJudgeError, UnknownNameError
from localjudge.labels import grouped_split
from localjudge.stats import bootstrap_indices, summary_level


def _noisy(n: int, seed: int, noise: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, n).astype(float)  # ties, like Likert labels
    return human + rng.normal(0, noise, n), human


def _scipy(judge, human) -> tuple[float, float, float]:
    return (
        sps.spearmanr(judge, human).statistic,
        sps.pearsonr(judge, human).statistic,
        sps.kendalltau(judge, human, variant="b").statistic,
    )


# ---- correlations ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_correlations_equal_scipy(seed):
    judge, human = _noisy(50 + 20 * seed, seed, noise=1.5)
    judge = np.round(judge)  # ties on both sides exercise τ-b's tie correction
    got = correlations(judge, human)
    assert np.allclose(got, _scipy(judge, human), atol=1e-9, rtol=0)


def test_report_point_estimates_are_scipy_and_skip_unscored():
    judge, human = _noisy(80, 7, noise=1.0)
    judge_with_gaps = judge.copy()
    judge_with_gaps[::9] = np.nan
    report = calibrate(judge_with_gaps, human, n_bootstrap=0)
    keep = np.isfinite(judge_with_gaps)
    want = _scipy(judge[keep], human[keep])
    ds = report.dataset
    got = [ds.spearman.value, ds.pearson.value, ds.kendall_tau_b.value]
    assert got == pytest.approx(want, abs=1e-12)
    assert report.n_unscored == 9 and report.unscored_share == pytest.approx(9 / 80)


def test_constant_scores_give_none_not_nan():
    assert correlations(np.ones(5), np.arange(5.0)) == (None, None, None)
    report = calibrate([3, 3, 3, 3], [1, 2, 3, 4], n_bootstrap=50)
    assert report.dataset.spearman.value is None and not report.readiness.ready
    text = report.model_dump_json()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))


def test_too_few_scored_items_is_a_data_error():
    with pytest.raises(DataError, match="only 2 of 4 items are scored"):
        calibrate([1, None, 2, math.nan], [1, 2, 3, 4])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-50, 50), st.integers(1, 5)), min_size=3, max_size=40))
def test_rank_correlations_invariant_to_monotone_transform(pairs):
    judge = np.array([p[0] for p in pairs], dtype=float)
    human = np.array([p[1] for p in pairs], dtype=float)
    before = correlations(judge, human)
    after = correlations(judge**3 + 2 * judge, human)  # strictly increasing, exact in float
    if before.spearman is None:
        assert after.spearman is None
    else:
        assert after.spearman == pytest.approx(before.spearman, abs=1e-12)
        assert after.kendall_tau_b == pytest.approx(before.kendall_tau_b, abs=1e-12)


# ---- summary level and bootstrap ------------------------------------------------------------


def test_summary_level_skips_constant_groups_and_counts_them():
    rng = np.random.default_rng(3)
    judge, human, groups = [], [], []
    for g in range(6):
        h = rng.uniform(1, 5, 8)
        j = np.full(8, 2.0) if g in (1, 4) else h + rng.normal(0, 1, 8)  # 1, 4: constant judge
        judge += list(j)
        human += list(h)
        groups += [f"d{g}"] * 8
    judge, human, groups = np.array(judge), np.array(human), np.array(groups)
    level = summary_level(judge, human, groups)
    assert (level.n_used, level.n_skipped) == (4, 2)
    used = [g for g in np.unique(groups) if g not in ("d1", "d4")]
    want = np.mean([sps.spearmanr(judge[groups == g], human[groups == g]).statistic for g in used])
    assert level.means.spearman == pytest.approx(want, abs=1e-12)

    judge[groups == "d0"] = np.nan  # a group with no scored item is skipped, not dropped
    report = calibrate(judge, human, groups, n_bootstrap=100)
    assert (report.summary.n_groups_used, report.summary.n_groups_skipped) == (3, 3)


def test_bootstrap_interval_contains_estimate_and_is_reproducible():
    judge, human = _noisy(120, 11, noise=1.0)
    a = calibrate(judge, human, n_bootstrap=300, seed=5)
    b = calibrate(judge, human, n_bootstrap=300, seed=5)
    c = calibrate(judge, human, n_bootstrap=300, seed=6)
    for est in (a.dataset.spearman, a.dataset.pearson, a.dataset.kendall_tau_b):
        assert est.ci_low < est.value < est.ci_high
    assert a == b
    assert a.dataset.spearman.ci_low != c.dataset.spearman.ci_low


def test_group_bootstrap_resamples_whole_groups():
    groups = np.repeat(np.array(["a", "b", "c", "d", "e"]), [3, 1, 4, 2, 5])
    sizes = set()
    for idx in bootstrap_indices(len(groups), groups, n_bootstrap=50, seed=1):
        counts = np.bincount(idx, minlength=len(groups))
        for g in np.unique(groups):
            assert len(set(counts[groups == g])) == 1  # every member drawn equally often
        sizes.add(len(idx))
    assert len(sizes) > 1  # 5 groups of unequal size drawn: the resample size varies
    items = next(bootstrap_indices(len(groups), None, n_bootstrap=1, seed=1))
    assert len(items) == len(groups)


def test_group_bootstrap_is_wider_on_clustered_data():
    rng = np.random.default_rng(0)
    offsets = np.repeat(rng.normal(0, 2, 15), 10)  # a shared shift per group
    human = offsets + rng.normal(0, 1, 150)
    judge = offsets + rng.normal(0, 1, 150)
    groups = np.repeat(np.arange(15), 10)
    by_item = calibrate(judge, human, n_bootstrap=400).dataset.pearson
    by_group = calibrate(judge, human, groups, n_bootstrap=400).dataset.pearson
    assert by_group.value == by_item.value
    assert by_group.ci_high - by_group.ci_low > by_item.ci_high - by_item.ci_low


# ---- diagnostics and verdict ----------------------------------------------------------------


def test_compression_flag_with_scales():
    rng = np.random.default_rng(2)
    human = rng.uniform(1, 5, 200)
    squeezed = 3 + 0.3 * (human - 3)  # right order, a third of the spread
    faithful = np.clip(human + rng.normal(0, 0.3, 200), 1, 5)
    rho = sps.spearmanr(squeezed, human).statistic
    assert scale_diagnostics(squeezed, human, rho, (1, 5), (1, 5)).compressed
    assert not scale_diagnostics(faithful, human, 0.95, (1, 5), (1, 5)).compressed
    report = calibrate(squeezed, human, n_bootstrap=0, judge_scale=(1, 5), human_scale=(1, 5))
    assert report.scale.compressed and report.scale.spread_basis == "scale"
    assert report.scale.judge.std_frac == pytest.approx(0.3 * report.scale.human.std_frac)


def test_compression_flag_without_scales_uses_shape():
    human = np.linspace(-1, 1, 101)
    bunched = human**3  # monotone, most scores near the middle
    report = calibrate(bunched, human, n_bootstrap=0)
    assert report.scale.spread_basis == "iqr_over_range" and report.scale.compressed
    assert not calibrate(2 * human + 1, human, n_bootstrap=0).scale.compressed


def test_required_n_fisher_z():
    assert required_n(0.7, 0.5, alpha=0.05, power=0.8, two_sided=False) == 65 == MIN_LABELLED
    assert required_n(0.8, 0.7, two_sided=False) == 119 and required_n(0.8, 0.7) == 150
    # 0.8 vs 0.5 needs far fewer: 30 two-sided (29.01 rounded up), 24 one-sided
    assert (required_n(), required_n(two_sided=False)) == (30, 24)
    with pytest.raises(ConfigError):
        required_n(0.5, 0.5)


@pytest.mark.parametrize(("n", "warns"), [(20, True), (64, True), (65, False), (150, False)])
def test_sample_size_warning(n, warns):
    check = sample_size_check(n)
    assert check.sufficient is not warns
    assert (check.warning is not None) is warns
    if warns:
        assert "too few to tell ρ = 0.7 from ρ = 0.5" in check.warning
        assert "119–150" in check.warning


def test_readiness():
    judge, human = _noisy(150, 1, noise=0.3)
    ready = calibrate(judge, human, n_bootstrap=100)
    assert ready.dataset.spearman.value > 0.9
    assert ready.readiness.ready and ready.readiness.line.startswith("READY to gate releases")

    few = calibrate(judge[:40], human[:40], n_bootstrap=0)
    assert not few.readiness.ready and "only 40 labelled items" in few.readiness.line
    assert few.sample_size.warning is not None

    weak_judge, weak_human = _noisy(150, 1, noise=3.0)
    weak = calibrate(weak_judge, weak_human, n_bootstrap=0)
    assert not weak.readiness.ready and "< target 0.80" in weak.readiness.line
    assert calibrate(weak_judge, weak_human, n_bootstrap=0, target=0.2).readiness.ready

    groups = np.repeat(np.arange(30), 5)
    grouped = calibrate(judge, human, groups, n_bootstrap=0)
    assert grouped.readiness.statistic == "summary_spearman"
    assert grouped.readiness.value == grouped.summary.correlations.spearman.value


# ---- isotonic fit ---------------------------------------------------------------------------


def _brute_force_isotonic(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Best monotone fit by trying every split into contiguous blocks valued at their means."""
    best, best_loss = None, math.inf
    for cuts in itertools.product([False, True], repeat=len(y) - 1):
        bounds = [0] + [i + 1 for i, c in enumerate(cuts) if c] + [len(y)]
        fit = np.concatenate(
            [np.full(b - a, np.average(y[a:b], weights=w[a:b])) for a, b in itertools.pairwise(bounds)]
        )
        if np.all(np.diff(fit) >= -1e-12):
            loss = float(np.sum(w * (y - fit) ** 2))
            if loss < best_loss - 1e-12:
                best, best_loss = fit, loss
    return best


@pytest.mark.parametrize("seed", range(25))
def test_pav_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 8)
    y = rng.integers(0, 5, n).astype(float)
    w = rng.uniform(0.5, 3, n)
    fit = pav(y, w)
    assert np.all(np.diff(fit) >= 0)
    assert np.allclose(fit, _brute_force_isotonic(y, w), atol=1e-9)


def test_isotonic_map_is_monotone_and_pools_ties():
    judge = np.array([1, 1, 2, 3, 3, 4.0])
    human = np.array([2, 4, 1, 5, 5, 4.0])  # tie at 1 pools to 3; 3 > 1 violates → merged
    mapping = fit_isotonic(judge, human)
    assert mapping.knots.tolist() == [1, 2, 3, 4]
    assert np.all(np.diff(mapping.values) >= 0)
    assert mapping(np.array([0.0, 1.0, 9.0])).tolist()[0] == mapping.values[0]
    grid = np.linspace(0, 5, 101)
    assert np.all(np.diff(mapping(grid)) >= 0)


def test_isotonic_fit_refused_when_too_thin():
    judge, human = _noisy(70, 4)
    with pytest.raises(DataError, match=f"at least {MIN_SPLIT_ITEMS}"):
        calibrate(judge, human, fit="isotonic")


def test_isotonic_fit_improves_mae_on_heldout_and_splits_by_group():
    rng = np.random.default_rng(8)
    human = rng.uniform(1, 5, 200)
    judge = np.exp(human / 2) + rng.normal(0, 0.2, 200)  # monotone but curved, off scale
    groups = np.repeat(np.arange(40), 5)
    report = calibrate(judge, human, groups, fit="isotonic", n_bootstrap=0, seed=3)
    assert report.fit.split_by == "groups" and report.fit.n_calibration == 100
    assert report.fit.after.mae < report.fit.before.mae
    cal, held = grouped_split(groups, 0.5, 3)
    assert not set(groups[cal]) & set(groups[held])
    again = evaluate_isotonic(judge, human, groups.astype(str), CalibrationOptions(seed=3))
    assert again.after.mae == report.fit.after.mae


def test_bad_options_and_scales_are_config_errors():
    judge, human = _noisy(30, 0)
    with pytest.raises(ConfigError, match="split"):
        calibrate(judge, human, split=1.5)
    with pytest.raises(ConfigError, match="LOW < HIGH"):
        calibrate(judge, human, judge_scale=(5, 5))
    with pytest.raises(ConfigError, match="outside --human-scale"):
        calibrate(judge, human, human_scale=(1, 4))


# ---- file loading ---------------------------------------------------------------------------


def _results_file(tmp_path, n=10, unscored=(2, 5), metrics=("coherence",)):
    lines = []
    for m in metrics:
        for i in range(n):
            scored = i not in unscored
            lines.append(
                {
                    "case_id": f"c{i}", "metric": m, "judge": "tiny", "version": "0.1.0",
                    "score": (i % 5) / 4 if scored else None,
                    "raw_score": 1 + (i % 5) if scored else None,
                    "unscored_reason": None if scored else "low valid mass",
                    "extra": {"human_coherence": 1 + i % 5 + 0.1 * (i % 3), "doc_id": f"d{i // 5}"},
                }
            )  # fmt: skip
    path = tmp_path / "eval.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    return path


def test_results_file_autodetected_with_unscored_rows(tmp_path):
    path = _results_file(tmp_path)
    pairs = load_pairs(path, human="human_coherence", group="doc_id")
    assert pairs.info.kind == "results" and pairs.info.metric == "coherence"
    assert np.isnan(pairs.judge).sum() == 2 and pairs.info.unscored_reasons == {"low valid mass": 2}
    assert pairs.groups.tolist()[:6] == ["d0"] * 5 + ["d1"]
    assert pairs.judge[0] == 1 and pairs.judge_scale is None
    normalised = load_pairs(path, human="human_coherence", judge="score")
    assert normalised.judge[4] == 1.0 and normalised.judge_scale == (0.0, 1.0)
    report = calibrate(pairs.judge, pairs.human, n_bootstrap=0)
    assert (report.n_unscored, report.n_scored) == (2, 8)


def test_results_file_metric_choice(tmp_path):
    path = _results_file(tmp_path, metrics=("coherence", "fluency"))
    with pytest.raises(ConfigError, match="--metric"):
        load_pairs(path, human="human_coherence")
    assert load_pairs(path, human="human_coherence", metric="fluency").info.metric == "fluency"
    with pytest.raises(UnknownNameError, match="fluency"):
        load_pairs(path, human="human_coherence", metric="fluenc")
    with pytest.raises(ConfigError, match="human_coherence"):
        load_pairs(path, metric="fluency")  # no --human: lists the numeric extra fields


def test_results_file_duplicate_case_is_an_error(tmp_path):
    path = _results_file(tmp_path)
    path.write_text(path.read_text() + path.read_text().splitlines()[0] + "\n")
    with pytest.raises(DataError, match=r"eval.jsonl:line 11: case 'c0' appears again"):
        load_pairs(path, human="human_coherence")


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("t.csv", "judge,human\n1,2\nabc,3\n", r"t.csv:line 3: judge score 'abc'"),
        ("t.csv", "judge,human\n1,2\n2,\n", r"t.csv:line 3: human score 'human' is missing"),
        ("t.jsonl", '{"judge": 1, "human": 2}\n\n{"judge": 2}\n', r"t.jsonl:line 3: no human"),
        ("t.jsonl", '{"judge": 1, "human": 2}\n{"judge": 2, "human": 1', r"jsonl:line 2: invalid"),
        ("t.json", '[{"judge": 1, "human": 2}, {"judge": true, "human": 1}]', r"item 2: judge"),
        ("t.jsonl", '{"judge": 1, "human": 2}\n[1, 2]\n', r"t.jsonl:line 2: expected an object"),
    ],
)
def test_malformed_rows_name_file_and_line(tmp_path, name, content, match):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(DataError, match=match):
        load_pairs(path)


def test_table_columns_and_unscored(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("j,h,doc\n1,2,a\n,3,a\nNaN,1,b\n4,5,b\n")
    pairs = load_pairs(path, judge="j", human="h", group="doc")
    assert np.isnan(pairs.judge).tolist() == [False, True, True, False]
    assert pairs.groups.tolist() == ["a", "a", "b", "b"] and pairs.info.kind == "table"
    with pytest.raises(ConfigError, match="no column 'judge'"):
        load_pairs(path)


# ---- CLI ------------------------------------------------------------------------------------


_main = main  # the real group: it turns localjudge's errors into exit 2 at the boundary


def _write_csv(path, judge, human, groups=None):
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["judge", "human"] + (["doc"] if groups is not None else []))
        for k in range(len(judge)):
            j = "" if np.isnan(judge[k]) else repr(float(judge[k]))
            writer.writerow([j, human[k]] + ([groups[k]] if groups is not None else []))


def test_cli_writes_plots_and_json(tmp_path):
    judge, human = _noisy(50, 9)
    judge[3] = np.nan
    _write_csv(tmp_path / "labels.csv", judge, human)
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        _main, ["calibrate", "agreement", str(tmp_path / "labels.csv"), "--out", str(out), "--bootstrap", "200"]
    )
    assert result.exit_code == 0, result.output
    assert "95% CI" in result.output and "WARNING: only 49 labelled items" in result.output
    assert "NOT READY" in result.output
    data = json.loads(out.read_text())
    keep = np.isfinite(judge)
    assert data["dataset"]["spearman"]["value"] == pytest.approx(
        sps.spearmanr(judge[keep], human[keep]).statistic, abs=1e-9
    )
    assert data["n_unscored"] == 1 and data["input"]["kind"] == "table"
    assert len(data["plots"]) == 2
    for p in data["plots"]:
        assert p.endswith(".png") and (tmp_path / "report_plots").exists()
        with open(p, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"


def test_cli_json_stdout_and_default_plot_dir(tmp_path, monkeypatch):
    judge, human = _noisy(30, 2)
    _write_csv(tmp_path / "labels.csv", judge, human, groups=[f"g{k % 6}" for k in range(30)])
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        _main, ["calibrate", "agreement", "labels.csv", "--json", "--group-col", "doc", "--bootstrap", "50"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["summary"]["n_groups_used"] == 6 and data["resampling"] == "groups"
    assert all(p.startswith("calibration_plots") for p in data["plots"])
    assert (tmp_path / data["plots"][0]).is_file()


def test_cli_settings_reach_the_report_unchanged(tmp_path):
    judge, human = _noisy(40, 3)
    _write_csv(tmp_path / "labels.csv", judge, human)
    flags = ["--seed", "3", "--bootstrap", "50", "--target", "0.7", "--human-scale", "1", "5", "--split", "0.4"]
    result = CliRunner().invoke(
        _main, ["calibrate", "agreement", str(tmp_path / "labels.csv"), "--json", "--no-plots", *flags]
    )
    assert result.exit_code == 0, result.output
    report = CalibrationReport.model_validate_json(result.output)
    assert report.settings == CalibrationOptions(seed=3, n_bootstrap=50, target=0.7, human_scale=(1, 5), split=0.4)


def test_settings_come_as_the_object_or_its_keywords_never_both():
    judge, human = _noisy(30, 0)
    settings = CalibrationOptions(seed=1, n_bootstrap=0)
    assert calibrate(judge, human, settings=settings).settings is settings
    assert calibrate(judge, human, seed=1, n_bootstrap=0).settings == settings
    for keyword in ({"seed": 1}, {"seed": 2}):  # equal or not: one call has one place for each setting
        with pytest.raises(ConfigError, match="calibrate: give settings= or their fields as keywords, not both"):
            calibrate(judge, human, settings=settings, **keyword)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unexpected keyword argument 'share'"):
        calibrate(judge, human, share=0.3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'share'"):
        fit_hybrid([], ["a", "b"], "human", settings=settings, share=0.3)  # type: ignore[call-arg]


def test_cli_user_errors_exit_2_without_traceback(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("judge,human\n1,2\nx,3\n")
    result = CliRunner().invoke(_main, ["calibrate", "agreement", str(path), "--no-plots"])
    assert result.exit_code == 2
    assert "line 3" in result.output and "Traceback" not in result.output
    assert isinstance(DataError("x"), LocalJudgeError)
    table = tmp_path / "ok.csv"
    _write_csv(table, *_noisy(10, 0))
    result = CliRunner().invoke(_main, ["calibrate", "agreement", str(table), "--metric", "m", "--no-plots"])
    assert result.exit_code == 2 and "--metric applies to results files" in result.output


def test_cli_on_results_file(tmp_path):
    path = _results_file(tmp_path, n=20, unscored=(4,))
    result = CliRunner().invoke(
        _main,
        ["calibrate", "agreement", str(path), "--human", "human_coherence", "--group", "doc_id", "--no-plots",
         "--judge-field", "score", "--human-scale", "1", "5.5", "--bootstrap", "100"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "1 unscored (5.0%)" in result.output and "1 × low valid mass" in result.output
    assert "on 0–1" in result.output  # the normalised score's scale is known


def test_unscored_reasons_group_by_kind_end_to_end(tmp_path):
    """Regression: the low-mass reason embedded each item's own mass ("only 0.0312 of ..."), so
    `calibrate` listed every unscored item as a reason of its own instead of counting a kind."""
    from localjudge.io.cases import TestCase
    from localjudge.metrics import GEvalMetric
    from localjudge.runs.evaluate import evaluate
    from localjudge.testing import fake_judge

    def policy(prompt: str) -> dict[str, float]:
        k = int(prompt.split("question ")[1].split()[0])
        return {"4": 0.01 * (k % 7 + 1)} if k % 3 == 0 else {str(1 + k % 5): 0.9}  # every third: low mass

    metric = GEvalMetric(
        name="q",
        task="Judge it.",
        criteria="Is it right?",
        steps=["Check."],
        fields=["input", "actual_output"],
        low=1,
        high=5,
    )
    cases = [
        TestCase(id=f"k{k}", input=f"question {k} here", actual_output="answer", extra={"human": 1 + k % 5})
        for k in range(30)
    ]
    cases.append(TestCase(id="blank", input="question 1 here", extra={"human": 3}))  # no actual_output
    out = tmp_path / "r.jsonl"
    result = evaluate(cases, [metric], fake_judge(policy), out=out, progress=False)
    masses = {r.valid_mass for r in result.records if r.valid_mass is not None and r.score is None}
    assert len(masses) > 3  # the per-item detail is still recorded, in valid_mass
    pairs = load_pairs(out, human="human")
    reasons = pairs.info.unscored_reasons
    assert sorted(reasons.values()) == [1, 10], reasons  # two kinds, not eleven
    low = next(why for why, n in reasons.items() if n == 10)
    assert "min_valid_mass 0.1" in low and not any(f"{m:.3g}" in low for m in masses)
    text = format_report(calibrate(pairs.judge, pairs.human, n_bootstrap=0, input_info=pairs.info))
    assert "10 × too little of the judge's probability" in text and "1 × case has no actual_output" in text


def test_text_report_wraps_cleanly(tmp_path):
    """Every line fits the report width, long reasons and the verdict included (a path stays whole)."""
    WIDTH = 88  # the width render.py wraps to
    judge, human = _noisy(100, 3)
    judge[:5] = np.nan
    reasons = {
        "too little of the judge's probability is on valid scores (valid_mass below the threshold "
        "min_valid_mass 0.1); the prompt does not elicit a score": 3,
        "case has no expected_output": 2,
    }
    info = InputInfo(
        path=str(tmp_path / "runs" / "eval.jsonl"),
        kind="results",
        metric="coherence",
        judge_field="raw_score",
        human_field="human_coherence",
        group_field="doc_id",
        unscored_reasons=reasons,
    )
    groups = [f"document-{k % 20}" for k in range(100)]
    fitted = calibrate(
        judge, human, groups, n_bootstrap=50, judge_scale=(-2, 8), human_scale=(1, 5.5), fit="isotonic", input_info=info
    )
    thin = calibrate(judge[:40], human[:40], groups[:40], n_bootstrap=50, target=0.99, input_info=info)
    for report in (fitted, thin):
        text = format_report(report)
        long = [line for line in text.splitlines() if len(line) > WIDTH and info.path not in line]
        assert not long, long
        assert "  unscored, by reason:\n    3 × too little" in text
    assert text.splitlines()[-1].startswith("  ")  # the verdict wrapped onto an indented line
    assert "WARNING: only 35 labelled items" in text
