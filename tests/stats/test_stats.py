"""The shared statistics: one `Estimate` whose JSON keeps each report's shape, and the intervals."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pydantic import ValidationError

from localjudge.stats import Estimate, estimate, percentile_interval, resample_means


def test_estimate_without_counts_serialises_as_a_correlation():
    e = Estimate(value=0.5, ci_low=0.25, ci_high=0.75)
    assert json.loads(e.model_dump_json()) == {"value": 0.5, "ci_low": 0.25, "ci_high": 0.75}
    assert list(Estimate(value=None).model_dump()) == ["value", "ci_low", "ci_high"]


def test_estimate_with_counts_keeps_every_field_in_order_null_p_included():
    e = Estimate(value=0.5, ci_low=None, ci_high=None, n=4, n_items=2)
    assert list(json.loads(e.model_dump_json())) == ["value", "ci_low", "ci_high", "p_value", "n", "n_items"]
    assert e.model_dump()["p_value"] is None
    assert Estimate.model_validate_json(e.model_dump_json()) == e


@pytest.mark.parametrize("fields", [{"value": float("nan")}, {"value": 1.0, "n": 3}, {"value": 1.0, "p_value": 0.1}])
def test_estimate_refuses_nan_and_partial_counts(fields):
    with pytest.raises(ValidationError):
        Estimate(**fields)


def test_percentile_interval_needs_enough_defined_replicates():
    reps = np.array([1.0, 2.0, np.nan, np.nan, np.nan])
    assert percentile_interval(reps, 0.9) is None  # 2 of 5 defined: under half
    assert percentile_interval(np.array([3.0]), 0.9) == (3.0, 3.0)
    assert percentile_interval(np.array([3.0]), 0.9, min_finite=2) is None
    assert percentile_interval(np.array([]), 0.9) is None


def test_estimate_from_replicates_reads_row_zero_as_the_point():
    boot = np.r_[10.0, np.arange(100.0)]
    e = estimate(boot, n=7, n_items=5, confidence=0.9, p_value=0.2)
    assert (e.value, e.n, e.n_items, e.p_value) == (10.0, 7, 5, 0.2)
    assert (e.ci_low, e.ci_high) == pytest.approx((4.95, 94.05))
    assert estimate(boot, n=1, n_items=1, confidence=0.9).ci_low is None  # one item: no interval
    assert estimate(np.r_[np.nan, boot[1:]], n=7, n_items=5, confidence=0.9, p_value=0.2).p_value is None


def test_resample_means_draws_whole_rows():
    rows = np.array([[0.0, 1.0], [2.0, 3.0]])  # (G, 2): both columns of a drawn row move together
    means = resample_means(rows, 50, seed=1)
    assert means.shape == (50, 2) and np.allclose(means[:, 1] - means[:, 0], 1.0)
    assert np.array_equal(means, resample_means(rows, 50, seed=1))
