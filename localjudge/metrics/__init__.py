"""G-Eval, likelihood, reference-overlap and pairwise metrics: definitions, prompts, evaluation steps and scoring."""

from localjudge.metrics.builtin import builtin_metric, builtin_names, resolve_metric
from localjudge.metrics.spec import (
    GEvalMetric,
    LikelihoodMetric,
    Metric,
    PairwiseMetric,
    PMIContrast,
    ReferenceMetric,
    RubricRange,
    load_metric_file,
)

__all__ = [
    "GEvalMetric",
    "LikelihoodMetric",
    "Metric",
    "PMIContrast",
    "PairwiseMetric",
    "ReferenceMetric",
    "RubricRange",
    "builtin_metric",
    "builtin_names",
    "load_metric_file",
    "resolve_metric",
]
