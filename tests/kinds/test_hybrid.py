"""The hybrid judge: fitting a combination of scorers on human labels, reporting it, applying it."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from hybrid_cases import fit_copy_hybrid

from localjudge.calibration import hybrid as H
from localjudge.calibration.hybrid_fit import fit_hybrid
from localjudge.calibration.options import CalibrationOptions
from localjudge.cli import main
from localjudge.errors import ConfigError, DataError
from localjudge.kinds.records import ResultRecord
from localjudge.labels import grouped_split
from localjudge.metrics.spec import components, load_metric_file
from localjudge.runs.results_file import read_results
from localjudge.testing import fake_judge


def _planted(n_groups=40, per=8, seed=0, weights=(1.0, 1.0), noise=0.5):
    """Two components each carrying half of a within-group signal, plus a between-group offset."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(n_groups), per).astype(str)
    a, b = rng.normal(size=len(g)), rng.normal(size=len(g))
    offset = np.repeat(rng.normal(scale=5, size=n_groups), per)  # an article's difficulty
    y = 3 + weights[0] * a + weights[1] * b + offset + rng.normal(scale=noise, size=len(g))
    x = np.column_stack([2 * a + 10, -3 * b + np.repeat(rng.normal(size=n_groups), per)])  # scaled, one flipped
    return x, y, g


def test_fit_candidate_recovers_directions_and_scale():
    x, y, g = _planted(noise=0.01)
    model = H.fit_candidate(x, y, g, "ridge", alpha=1e-6)
    z = (x - model.mean) / model.std
    assert np.sign(model.weights).tolist() == [1.0, -1.0]
    assert model.weights[0] * 1 / model.std[0] == pytest.approx(0.5, rel=0.05)  # y moves 1 per unit of a = x/2
    pred = model.predict(x)
    assert np.corrcoef(H._center(pred, g), H._center(y, g))[0, 1] > 0.99
    zmean = H.fit_candidate(x, y, g, "zmean")
    assert np.sign(zmean.weights).tolist() == [1.0, -1.0] and abs(zmean.weights[0]) == pytest.approx(
        abs(zmean.weights[1])
    )
    single = H.fit_candidate(x, y, g, "single", k=1)
    assert single.weights[0] == 0 and single.weights[1] < 0
    assert z.shape == x.shape


def test_split_and_folds_keep_groups_whole():
    _, _, g = _planted()
    fit, held = grouped_split(g, 0.5, seed=3)
    assert not set(g[fit]) & set(g[held]) and len(fit) + len(held) == len(g)
    parts = H.folds(len(g), g, 5, seed=1)
    assert sorted(np.concatenate(parts).tolist()) == list(range(len(g)))
    for i, a in enumerate(parts):
        for b in parts[i + 1 :]:
            assert not set(g[a]) & set(g[b])
    with pytest.raises(ConfigError, match="--split"):
        grouped_split(None, 1.0, 0, n=10)


def _records(x, y, g, names=("a", "b")):
    recs = []
    for i in range(len(y)):
        for k, name in enumerate(names):
            recs.append(
                ResultRecord(
                    case_id=f"c{i}",
                    metric=name,
                    kind="likelihood",
                    score=None,
                    raw_score=float(x[i, k]),
                    passed=None,
                    threshold=None,
                    distribution=None,
                    valid_mass=None,
                    extra={"human": float(y[i]), "doc": str(g[i])},
                    judge={"name": "fake"},
                    metric_spec={"kind": "likelihood", "name": name, "instruction": f"Write {name}."},
                    template_version="likelihood-v1",
                    localjudge_version="0",
                )
            )
    return recs


def test_hybrid_of_two_halves_beats_each_part_held_back():
    x, y, g = _planted()
    metric, report = fit_hybrid(
        _records(x, y, g), ["a", "b"], "human", group="doc", settings=CalibrationOptions(split=0.5, seed=0)
    )
    assert report.chosen.startswith(("zmean", "ridge"))
    assert report.beats_best_part is True
    assert report.held_out["hybrid"] > max(report.held_out["a"], report.held_out["b"]) + 0.1
    assert report.fit_groups + report.held_groups == 40
    assert [c.metric["name"] for c in metric.components] == ["a", "b"]
    assert metric.human_scale == (y.min(), y.max())


def test_a_noise_component_leaves_the_best_part_alone():
    x, y, g = _planted(weights=(1.0, 0.0), noise=0.3)
    _, report = fit_hybrid(_records(x, y, g), ["a", "b"], "human", group="doc", settings=CalibrationOptions(seed=0))
    assert report.chosen == "a alone" or report.beats_best_part
    assert report.held_out["hybrid"] >= report.held_out["a"] - 0.02


def test_fit_errors():
    x, y, g = _planted(n_groups=4, per=4)
    recs = _records(x, y, g)
    with pytest.raises(ConfigError, match="no records of metric"):
        fit_hybrid(recs, ["a", "zz"], "human")
    with pytest.raises(DataError, match="no human field"):
        fit_hybrid(recs, ["a", "b"], "nope")
    with pytest.raises(DataError, match="label more cases"):
        fit_hybrid(recs, ["a", "b"], "human", group="doc")


# -- through the command line: calibrate --hybrid, then eval --metric hybrid.json ----------------


@pytest.fixture
def judges(localjudge_scripted):
    def load(asked):
        # the G-Eval component reads its score from how many 'x' the answer has
        return fake_judge(lambda p: {"5": 0.2 + 0.1 * p.count("x"), "1": 0.5})

    localjudge_scripted.add_any(load)


def test_cli_fit_save_and_apply(judges, tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for i in range(60):
        doc = f"d{i // 6}"
        copied = rng.random() < 0.5
        source = f"Article {doc}: the team won the final on Sunday by two goals."
        answer = "the team won the final" if copied else f"rain fell {'x' * (i % 4)} on Monday"
        rows.append(
            {
                "id": f"c{i}",
                "input": source,
                "actual_output": answer,
                "doc": doc,
                "human": (4.0 if copied else 2.0) + rng.normal(scale=0.5),
            }
        )
    data, saved, cal = fit_copy_hybrid(tmp_path, rows, "fluency")
    assert "held-back split" in cal and "Finding:" in cal and "hybrid" in cal
    hybrid = load_metric_file(saved)
    assert hybrid.kind == "hybrid" and [m.name for m in components(hybrid)] == ["copy", "fluency"]
    out = tmp_path / "h.jsonl"
    applied = CliRunner().invoke(main, ["eval", str(data), "--metric", str(saved), "--out", str(out), "--no-progress"])
    assert applied.exit_code == 0, applied.output
    recs = read_results(out)
    by = {(r.case_id, r.metric): r for r in recs}
    assert {r.metric for r in recs} == {"copy", "fluency", "hybrid"}
    for i in range(60):
        h = by[(f"c{i}", "hybrid")]
        parts = [by[(f"c{i}", "copy")].raw_score, by[(f"c{i}", "fluency")].raw_score]
        want = hybrid.intercept + sum(c.weight * (v - c.mean) / c.std for c, v in zip(hybrid.components, parts))
        assert h.kind == "hybrid" and h.raw_score == pytest.approx(want)
        assert h.detail.root == pytest.approx({"copy": parts[0], "fluency": parts[1]})
        assert 0 <= h.score <= 1
    # given together with a component of another definition: refused
    other = tmp_path / "fluency.yaml"
    other.write_text("kind: likelihood\nname: fluency\ninstruction: Write well.\nfields: []\n")
    clash = CliRunner().invoke(
        main, ["eval", str(data), "--metric", str(saved), "--metric", str(other), "--no-progress"]
    )
    assert clash.exit_code == 2 and "component of hybrid" in clash.output


@pytest.mark.parametrize(
    "args, why",
    [
        (["--metrics", "copy", "--human", "h"], "at least two"),
        (["--metrics", "copy,fluency"], "Missing option '--human'"),
        (["--save", "x.json", "--human", "h"], "Missing option '--metrics'"),
    ],
)
def test_cli_hybrid_errors(tmp_path, args, why):
    res = tmp_path / "r.jsonl"
    res.write_text("")
    result = CliRunner().invoke(main, ["calibrate", "fit-hybrid", str(res), *args])
    assert result.exit_code == 2 and why in result.output


def test_choose_keeps_the_simplest_within_one_standard_error():
    rng = np.random.default_rng(0)
    base = {g: 0.4 + 0.2 * rng.standard_normal() for g in range(30)}
    noise = rng.standard_normal(30)
    noise = 0.1 * (noise - noise.mean()) / noise.std(ddof=1)  # SE of the paired mean: 0.1 / √30 ≈ 0.018
    noisy_gain = {g: v + 0.01 + noise[g] for g, v in base.items()}  # a +0.01 gain, inside the noise
    clear_gain = {g: v + 0.2 for g, v in base.items()}  # +0.2 in every group

    def cand(label, method, alpha, units):
        return H.Candidate(
            label, method, alpha, 0 if method == "single" else None, float(np.mean(list(units.values()))), units
        )

    single = cand("a alone", "single", None, base)
    assert H.choose([single, cand("ridge α=0.01", "ridge", 0.01, noisy_gain)]).label == "a alone"
    assert H.choose([single, cand("ridge α=0.01", "ridge", 0.01, clear_gain)]).label == "ridge α=0.01"
    # among those within reach, the simplest kind: a strong ridge penalty before a weak one
    strong, weak = cand("ridge α=10", "ridge", 10.0, clear_gain), cand("ridge α=0.01", "ridge", 0.01, clear_gain)
    assert H.choose([single, weak, strong]).label == "ridge α=10"
