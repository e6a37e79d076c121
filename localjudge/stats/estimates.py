"""A statistic with its percentile bootstrap interval: the `Estimate` every report holds.

`percentile_interval` reads an interval off bootstrap replicates; `estimate` turns a vector of
replicates whose row 0 is the point estimate (see `bootstrap.item_weights`) into an `Estimate`.
An undefined quantity is None, never NaN, so every report serialises to strict JSON.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from localjudge.stats.numbers import finite

MIN_VALID_RESAMPLES = 0.5
"""Share of bootstrap resamples that must give a defined value for an interval to be reported."""

_COUNTS = ("p_value", "n", "n_items")


class Estimate(BaseModel):
    """A point estimate, its percentile bootstrap interval and, for a bias effect, its test and counts.

    A correlation of the calibration report carries no counts (the report gives them once);
    then `p_value`, `n` and `n_items` are None and left out of its JSON.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, use_attribute_docstrings=True)

    value: float | None
    """Point estimate on all the data; None when the data cannot define it."""
    ci_low: float | None = None
    """Lower end of the interval; None without resamples, with too few items, or when too many
    resamples leave the statistic undefined."""
    ci_high: float | None = None
    """Upper end of the interval; None when `ci_low` is None."""
    p_value: float | None = None
    """Two-sided p-value of the test the analysis documents; None where no test applies."""
    n: int | None = None
    """Observations behind the estimate (records, responses or items, per analysis)."""
    n_items: int | None = None
    """Distinct items behind the estimate, the unit the bootstrap resamples."""

    @model_validator(mode="after")
    def _counts_together(self) -> Estimate:
        assert (self.n is None) == (self.n_items is None), "n and n_items go together"
        assert self.n is not None or self.p_value is None, "a p-value needs the counts behind it"
        return self

    @model_serializer(mode="wrap")
    def _without_absent_counts(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        if self.n is None:
            for key in _COUNTS:
                data.pop(key, None)
        return data


class Interval(NamedTuple):
    """A bootstrap percentile interval."""

    low: float
    high: float


def percentile_interval(replicates: np.ndarray, level: float, *, min_finite: int = 1) -> Interval | None:
    """Percentile interval of bootstrap replicates, or None when too few of them are defined.

    Args:
        replicates: (B,) statistic per resample, NaN where a resample leaves it undefined
            (e.g. all items tied).
        level: Coverage, e.g. 0.95.
        min_finite: Fewest defined replicates an interval is read from.

    Returns:
        The interval; None when fewer than `min_finite` replicates, or fewer than
        `MIN_VALID_RESAMPLES` of them, are defined.
    """
    finite = replicates[np.isfinite(replicates)]
    if finite.size < max(min_finite, MIN_VALID_RESAMPLES * replicates.size):
        return None
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return Interval(float(low), float(high))


def estimate(boot: np.ndarray, *, n: int, n_items: int, confidence: float, p_value: float | None = None) -> Estimate:
    """Builds an `Estimate` from a row-0-is-point vector of bootstrap values.

    Args:
        boot: (1 + B,) statistic; row 0 is the point estimate, NaN rows are dropped.
        n: Observations behind the estimate.
        n_items: Items behind the estimate.
        confidence: Interval coverage.
        p_value: Two-sided p-value of the analysis' test, if any.
    """
    # With fewer than two items every resample repeats the data: no interval. When most
    # resamples leave the statistic undefined (a rare group), percentiles would mislead.
    interval = percentile_interval(boot[1:], confidence, min_finite=2) if n_items >= 2 else None
    value = finite(boot[0])
    if value is None:
        interval = None  # no point estimate, no interval
    return Estimate(
        value=value,
        ci_low=interval.low if interval is not None else None,
        ci_high=interval.high if interval is not None else None,
        p_value=finite(p_value) if value is not None else None,
        n=n,
        n_items=n_items,
    )
