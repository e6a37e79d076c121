"""Pooling a pairwise metric's two orders in log-odds: a constant position preference cancels exactly."""

from __future__ import annotations

import math

import pytest

from localjudge.errors import ConfigError
from localjudge.kinds.pairwise import PairwiseMetric, pooled_log_odds
from localjudge.metrics.spec import metric_from_dict


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z))


@pytest.mark.parametrize("strength", [-3.0, -0.4, 0.0, 0.7, 2.5])
@pytest.mark.parametrize("position", [0.0, 1.3, -2.0, 6.0])
def test_a_constant_position_prior_cancels_in_log_odds_not_in_probability(strength, position):
    first = _sigmoid(strength + position)  # output 1 shown first: the first position adds `position`
    second = _sigmoid(strength - position)  # output 1 shown second: the first position favours output 2
    pooled = pooled_log_odds(first, 1 - first, second, 1 - second)
    assert pooled == pytest.approx(_sigmoid(strength), abs=1e-12)
    if position and strength:
        assert abs((first + second) / 2 - _sigmoid(strength)) > 1e-4  # the probability mean is pulled to 0.5


def test_certain_orders_stay_finite():
    assert pooled_log_odds(1.0, 0.0, 0.5, 0.5) == pytest.approx(1.0)
    assert 0 < pooled_log_odds(1.0, 0.0, 0.0, 1.0) < 1


def test_the_default_pool_leaves_specs_as_they_were_and_ties_refuse_log_odds():
    plain = PairwiseMetric(name="p", task="t", criteria="c")
    assert "pool" not in plain.model_dump(mode="json")
    assert PairwiseMetric(name="p", task="t", criteria="c", pool="log_odds").model_dump()["pool"] == "log_odds"
    with pytest.raises(ConfigError, match="log_odds"):
        metric_from_dict(
            {"kind": "pairwise", "name": "p", "task": "t", "criteria": "c", "allow_tie": True, "pool": "log_odds"}
        )
