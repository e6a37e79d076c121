"""Bias lab: self-preference, position and length bias of judges, from scored records.

The analyses are pure functions of `PointwiseRecord` / `PairwiseRecord` lists; every estimate
carries a percentile bootstrap interval over items and, where a test applies, a p-value. The
report Holm-corrects all its tests and says in plain language which effects are significant.

Examples:
    >>> from localjudge.bias import analyze_pointwise, format_report, write_heatmap  # doctest: +SKIP
    >>> report = analyze_pointwise(records)  # doctest: +SKIP
    >>> print(format_report(report))  # doctest: +SKIP
    >>> write_heatmap(report, "bias_heatmap.png")  # doctest: +SKIP
    >>> models = analyze_models(pointwise_records, pairwise_records)  # doctest: +SKIP
    >>> [(p.judge, p.target, p.rate.value) for p in models.pairwise]  # doctest: +SKIP
"""

from localjudge.bias.analysis import analyze_pairwise, analyze_pointwise
from localjudge.bias.markdown import format_report
from localjudge.bias.model_report import analyze_models, format_model_report
from localjudge.bias.pairwise import (
    equal_opportunity_pairwise,
    pairwise_length_bias,
    pairwise_self_preference,
    position_bias,
)
from localjudge.bias.plots import write_heatmap, write_position_panel, write_win_rates
from localjudge.bias.pointwise import equal_opportunity_pointwise, score_matrix, self_preference
from localjudge.bias.records import PairwiseRecord, PointwiseRecord
from localjudge.bias.regression import length_bias, perplexity_adjusted
from localjudge.bias.results import (
    BiasReport,
    BiasSettings,
    EqualOpportunity,
    Finding,
    LengthBias,
    MatrixCell,
    ModelReport,
    PairwiseLengthBias,
    PairwiseSelfPreference,
    PerplexityAdjusted,
    PositionBias,
    ScoreMatrix,
    SelfPreference,
    TargetDiD,
    TargetPreference,
    WinRateCell,
    WinRateMatrix,
)
from localjudge.bias.targets import pairwise_targets, pointwise_targets, win_rates
from localjudge.stats import Estimate

__all__ = [
    "BiasReport",
    "BiasSettings",
    "EqualOpportunity",
    "Estimate",
    "Finding",
    "LengthBias",
    "MatrixCell",
    "ModelReport",
    "PairwiseLengthBias",
    "PairwiseRecord",
    "PairwiseSelfPreference",
    "PerplexityAdjusted",
    "PointwiseRecord",
    "PositionBias",
    "ScoreMatrix",
    "SelfPreference",
    "TargetDiD",
    "TargetPreference",
    "WinRateCell",
    "WinRateMatrix",
    "analyze_models",
    "analyze_pairwise",
    "analyze_pointwise",
    "equal_opportunity_pairwise",
    "equal_opportunity_pointwise",
    "format_model_report",
    "format_report",
    "length_bias",
    "pairwise_length_bias",
    "pairwise_self_preference",
    "pairwise_targets",
    "perplexity_adjusted",
    "pointwise_targets",
    "position_bias",
    "score_matrix",
    "self_preference",
    "win_rates",
    "write_heatmap",
    "write_position_panel",
    "write_win_rates",
]
