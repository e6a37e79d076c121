"""Statistics shared by the calibration and bias reports: pure maths, arrays in, values out, no I/O.

- `estimates`: the `Estimate` model every report holds, and percentile intervals of replicates.
- `bootstrap`: resampling of items or whole groups, as index draws or multinomial weights.
- `correlation`: Spearman/Pearson/Kendall point estimates, their intervals, summary level, power.
- `pvalues`: sign-flip and permutation tests, Holm's correction.
- `classification`: AUC (overall and within groups), accuracy, balanced accuracy, thresholds, ECE,
  log loss, for verdicts against human labels.

Examples:
    >>> import numpy as np
    >>> from localjudge import stats
    >>> point = stats.correlations(np.array([1.0, 2, 3, 4]), np.array([2.0, 4, 5, 6]))
    >>> stats.Estimate(value=point.spearman).model_dump()
    {'value': 1.0, 'ci_low': None, 'ci_high': None}
"""

from localjudge.stats.bootstrap import (
    bootstrap_indices,
    group_mean,
    item_weights,
    ratio,
    resample_means,
)
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
from localjudge.stats.estimates import (
    MIN_VALID_RESAMPLES,
    Estimate,
    Interval,
    estimate,
    finite,
    percentile_interval,
)
from localjudge.stats.pvalues import (
    holm,
    label_permutation_p,
    sign_flip_p,
    within_group_permutations,
)

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
