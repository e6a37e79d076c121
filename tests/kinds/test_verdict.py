"""Verdicts from labels: classification figures, the logistic fit, the fitting protocol, the spec.

Pure maths on hand-built arrays (AUC against brute force, ECE and thresholds by hand, the
protocol on seeded synthetic labels); the command-line round trip is in test_verdict_cli.py.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from localjudge.calibration.logistic import fit_logistic, sigmoid
from localjudge.calibration.options import CalibrationOptions
from localjudge.calibration.verdict import fit_verdict_arrays
from localjudge.calibration.verdict_fit import acceptable
from localjudge.errors import ConfigError, DataError
from localjudge.metrics.spec import metric_from_dict
from localjudge.stats.classification import (
    accuracy,
    balanced_accuracy,
    best_threshold,
    ece,
    log_loss,
    roc_auc,
    within_group_auc,
)


def _brute_auc(s, y):
    pos = [a for a, t in zip(s, y) if t]
    neg = [a for a, t in zip(s, y) if not t]
    return sum((a > b) + 0.5 * (a == b) for a, b in itertools.product(pos, neg)) / (len(pos) * len(neg))


@pytest.mark.parametrize("seed", range(5))
def test_auc_matches_brute_force_with_ties(seed):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 5, 30).astype(float)  # many ties
    y = rng.integers(0, 2, 30)
    assert roc_auc(s, y) == pytest.approx(_brute_auc(s, y))


def test_auc_undefined_with_one_class_and_within_group():
    assert roc_auc(np.array([1.0, 2.0]), np.array([1, 1])) is None
    s = np.array([1.0, 2.0, 10.0, 11.0])
    y = np.array([0, 1, 0, 1])
    g = np.array(["a", "a", "b", "b"])
    assert roc_auc(s, y) == 0.75  # pooled, the second document's offset blurs it
    assert within_group_auc(s, y, g) == 1.0  # within each document the consistent one is higher


def test_accuracy_balanced_accuracy_log_loss():
    y = np.array([1, 1, 1, 0])
    assert accuracy(np.array([1, 1, 1, 1]), y) == 0.75
    assert balanced_accuracy(np.array([1, 1, 1, 1]), y) == 0.5  # passing everything is no skill
    assert balanced_accuracy(np.array([1, 0]), np.array([1, 1])) is None
    assert log_loss(np.array([0.5, 0.5]), np.array([1, 0])) == pytest.approx(np.log(2))


def test_ece_by_hand():
    p = np.array([0.1, 0.1, 0.75, 0.75])
    y = np.array([0, 1, 1, 1])
    # bin 1: mean p 0.1, rate 0.5 -> 0.4 × 2; bin 7: mean p 0.75, rate 1 -> 0.25 × 2
    assert ece(p, y) == pytest.approx((0.4 * 2 + 0.25 * 2) / 4)
    assert ece(np.array([0.0, 1.0]), np.array([0, 1])) == 0.0  # the ends fall in the end bins


def test_best_threshold_splits_the_classes_in_the_middle_of_the_gap():
    s = np.array([0.1, 0.2, 0.3, 0.7, 0.8])
    y = np.array([0, 0, 0, 1, 1])
    assert best_threshold(s, y) == pytest.approx(0.5)
    # with imbalance, accuracy may prefer passing everything; balanced accuracy does not
    s2 = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95])
    y2 = np.array([1, 1, 1, 1, 1, 1, 1, 1, 0, 1])
    assert best_threshold(s2, y2, "accuracy") < 0.1
    assert balanced_accuracy(s2 >= best_threshold(s2, y2), y2) > 0.5


def test_sigmoid_is_stable_and_logistic_recovers_a_slope():
    assert sigmoid(np.array([-1000.0, 0.0, 1000.0])).tolist() == [0.0, 0.5, 1.0]
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1, (4000, 1))
    y = (rng.random(4000) < sigmoid(0.5 + 2.0 * x[:, 0])).astype(float)
    m = fit_logistic(x, y, l2=0.0)
    w = m.weights[0] / m.std[0]  # back on the raw scale
    assert w == pytest.approx(2.0, rel=0.1) and m.intercept + (-m.mean[0] / m.std[0]) * m.weights[0] == pytest.approx(
        0.5, abs=0.1
    )


def test_logistic_stays_finite_on_separable_data():
    m = fit_logistic(np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1]))
    assert np.isfinite(m.weights).all() and 0 < m.prob(np.array([[1.5]]))[0] < 1


def _synthetic(n_groups=40, per=10, seed=0):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(n_groups), per)
    y = rng.integers(0, 2, len(g))
    signal = y + rng.normal(0, 0.7, len(g)) + rng.normal(0, 0.3, n_groups)[g]  # a document offset too
    noise = rng.normal(0, 1, len(g))
    return np.column_stack([signal, noise]), y, g


def test_protocol_keeps_the_signal_drops_the_noise_and_reports_held_back():
    x, y, g = _synthetic()
    verdict, fit = fit_verdict_arrays(x, y, g, ["signal", "noise"], CalibrationOptions(seed=0))
    assert fit.chosen == "signal alone" and fit.used == ["signal"]
    assert fit.fit_groups == fit.held_groups == 20
    h = fit.held_out
    assert h.items == 200 and 0.7 < h.accuracy < 0.95 and h.auc > 0.8
    assert h.accuracy_ci is not None and h.accuracy_ci[0] < h.accuracy < h.accuracy_ci[1]
    assert h.ece < 0.15  # a logistic fit on the same kind of data is calibrated
    # the stated figures are those of the saved model and threshold on the held-back split
    from localjudge.labels import grouped_split

    _, held = grouped_split(g, 0.5, 0)
    assert accuracy(verdict.prob(x[held]) >= verdict.threshold, y[held]) == h.accuracy


def test_protocol_refuses_too_few_or_one_class():
    x, y, g = _synthetic(n_groups=4, per=4)
    with pytest.raises(DataError, match="need 10"):
        fit_verdict_arrays(x, y, g, ["signal", "noise"])
    x, y, g = _synthetic()
    with pytest.raises(DataError, match="both kinds"):
        fit_verdict_arrays(x, np.ones_like(y), g, ["signal", "noise"])


def test_acceptable_labels():
    y, rule = acceptable(np.array([0.0, 1.0, 1.0]), "label", None)
    assert y.tolist() == [0, 1, 1] and rule == "label = 1"
    with pytest.raises(ConfigError, match="--pass-at"):
        acceptable(np.array([1.0, 3.0, 5.0]), "human_consistency", None)
    y, rule = acceptable(np.array([1.0, 4.0, 5.0]), "h", 4.0)
    assert y.tolist() == [0, 1, 1] and rule == "label >= 4"


def _component(name="ll"):
    return {"kind": "likelihood", "name": name, "instruction": "Summarise.", "fields": ["input"]}


def test_verdict_spec_validation():
    base = {
        "kind": "verdict",
        "name": "v",
        "components": [{"metric": _component(), "mean": 0.0, "std": 1.0, "weight": 1.0}],
        "intercept": 0.0,
        "threshold": 0.5,
        "human_field": "label",
        "acceptable": "label = 1",
        "expected_accuracy": 0.7,
    }
    assert metric_from_dict(base).kind == "verdict"
    with pytest.raises(ConfigError, match="threshold"):
        metric_from_dict({**base, "threshold": 1.5})
    with pytest.raises(ConfigError, match="repeated"):
        metric_from_dict({**base, "components": base["components"] * 2})
    with pytest.raises(ConfigError, match="its own name"):
        metric_from_dict({**base, "name": "ll"})
    with pytest.raises(ConfigError, match="std"):
        metric_from_dict({**base, "components": [{"metric": _component(), "mean": 0.0, "std": 0.0, "weight": 1.0}]})
