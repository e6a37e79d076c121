"""Statistics shared by the calibration and bias reports: pure maths, arrays in, values out, no I/O.

- `estimates`: the `Estimate` model every report holds, and percentile intervals of replicates.
- `bootstrap`: resampling of items or whole groups, as index draws or multinomial weights.
- `correlation`: Spearman/Pearson/Kendall point estimates, their intervals, summary level, power.
- `pvalues`: sign-flip and permutation tests, Holm's correction.
- `classification`: AUC (overall and within groups), accuracy, balanced accuracy, thresholds, ECE,
  log loss, for verdicts against human labels.
- `numbers`: NaN and infinities as None (`finite`, `finite_json`), so records stay strict JSON.

Names load on first use (scipy is slow to import): records and the CLI take `finite` from here
without loading the statistics.

Examples:
    >>> import numpy as np
    >>> from localjudge import stats
    >>> point = stats.correlations(np.array([1.0, 2, 3, 4]), np.array([2.0, 4, 5, 6]))
    >>> stats.Estimate(value=point.spearman).model_dump()
    {'value': 1.0, 'ci_low': None, 'ci_high': None}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localjudge.lazy import lazy_exports

if TYPE_CHECKING:
    from localjudge.stats.bootstrap import bootstrap_indices, group_mean, item_weights, ratio, resample_means
    from localjudge.stats.classification import (
        accuracy,
        balanced_accuracy,
        best_threshold,
        ece,
        log_loss,
        roc_auc,
        within_group_auc,
    )
    from localjudge.stats.correlation import (
        MIN_CORR_ITEMS,
        CorrelationIntervals,
        PointCorrelations,
        SummaryLevel,
        bootstrap_correlations,
        bootstrap_summary_level,
        correlations,
        required_n,
        summary_level,
    )
    from localjudge.stats.estimates import MIN_VALID_RESAMPLES, Estimate, Interval, estimate, percentile_interval
    from localjudge.stats.numbers import finite, finite_json
    from localjudge.stats.pvalues import holm, label_permutation_p, sign_flip_p, within_group_permutations

__all__ = [
    "MIN_CORR_ITEMS",
    "MIN_VALID_RESAMPLES",
    "CorrelationIntervals",
    "Estimate",
    "Interval",
    "PointCorrelations",
    "SummaryLevel",
    "accuracy",
    "balanced_accuracy",
    "best_threshold",
    "bootstrap_correlations",
    "bootstrap_indices",
    "bootstrap_summary_level",
    "correlations",
    "ece",
    "estimate",
    "finite",
    "finite_json",
    "group_mean",
    "holm",
    "item_weights",
    "label_permutation_p",
    "log_loss",
    "percentile_interval",
    "ratio",
    "required_n",
    "resample_means",
    "roc_auc",
    "sign_flip_p",
    "summary_level",
    "within_group_auc",
    "within_group_permutations",
]

_LAZY = {
    "MIN_CORR_ITEMS": "localjudge.stats.correlation",
    "MIN_VALID_RESAMPLES": "localjudge.stats.estimates",
    "CorrelationIntervals": "localjudge.stats.correlation",
    "Estimate": "localjudge.stats.estimates",
    "Interval": "localjudge.stats.estimates",
    "PointCorrelations": "localjudge.stats.correlation",
    "SummaryLevel": "localjudge.stats.correlation",
    "accuracy": "localjudge.stats.classification",
    "balanced_accuracy": "localjudge.stats.classification",
    "best_threshold": "localjudge.stats.classification",
    "bootstrap_correlations": "localjudge.stats.correlation",
    "bootstrap_indices": "localjudge.stats.bootstrap",
    "bootstrap_summary_level": "localjudge.stats.correlation",
    "correlations": "localjudge.stats.correlation",
    "ece": "localjudge.stats.classification",
    "estimate": "localjudge.stats.estimates",
    "finite": "localjudge.stats.numbers",
    "finite_json": "localjudge.stats.numbers",
    "group_mean": "localjudge.stats.bootstrap",
    "holm": "localjudge.stats.pvalues",
    "item_weights": "localjudge.stats.bootstrap",
    "label_permutation_p": "localjudge.stats.pvalues",
    "log_loss": "localjudge.stats.classification",
    "percentile_interval": "localjudge.stats.estimates",
    "ratio": "localjudge.stats.bootstrap",
    "required_n": "localjudge.stats.correlation",
    "resample_means": "localjudge.stats.bootstrap",
    "roc_auc": "localjudge.stats.classification",
    "sign_flip_p": "localjudge.stats.pvalues",
    "summary_level": "localjudge.stats.correlation",
    "within_group_auc": "localjudge.stats.classification",
    "within_group_permutations": "localjudge.stats.pvalues",
}

__getattr__, __dir__ = lazy_exports("localjudge.stats", _LAZY, globals())
