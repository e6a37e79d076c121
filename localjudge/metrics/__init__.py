"""Metric definitions as users name and write them: built-in metrics, metric files, field labels.

The specs of each kind live with their kind (`localjudge.kinds`) and are re-exported here;
`localjudge.metrics.spec` validates a definition of any registered kind.
"""

from localjudge.metrics.builtin import builtin_metric, builtin_names, resolve_metric
from localjudge.metrics.spec import (
    EntailmentMetric,
    GEvalMetric,
    HybridMetric,
    LikelihoodMetric,
    Metric,
    PairwiseLikelihoodMetric,
    PairwiseMetric,
    PMIContrast,
    ReferenceMetric,
    RubricRange,
    VerdictMetric,
    load_metric_file,
    metric_from_dict,
)

__all__ = [
    "EntailmentMetric",
    "GEvalMetric",
    "HybridMetric",
    "LikelihoodMetric",
    "Metric",
    "PMIContrast",
    "PairwiseLikelihoodMetric",
    "PairwiseMetric",
    "ReferenceMetric",
    "RubricRange",
    "VerdictMetric",
    "builtin_metric",
    "builtin_names",
    "load_metric_file",
    "metric_from_dict",
    "resolve_metric",
]
