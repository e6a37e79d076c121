"""Bias lab: self-preference, position and length bias of judges, from scored records.

The analyses are pure functions of `PointwiseRecord` / `PairwiseRecord` lists; every estimate
carries a percentile bootstrap interval over items and, where a test applies, a p-value. The
report Holm-corrects all its tests and says in plain language which effects are significant.

The whole study (judges score generated responses, then every analysis, written to a folder)
is `judge_responses` (`judging`), `analyze_judgments` and `write_study` (`study`), run by
`localjudge bias`; these names load on first use, since they import the run loop and the judges.

Examples:
    >>> from localjudge.bias import analyze_pointwise, format_bias_report, write_heatmap  # doctest: +SKIP
    >>> report = analyze_pointwise(records)  # doctest: +SKIP
    >>> print(format_bias_report(report))  # doctest: +SKIP
    >>> write_heatmap(report, "bias_heatmap.png")  # doctest: +SKIP
    >>> models = analyze_models(pointwise_records, pairwise_records)  # doctest: +SKIP
    >>> [(p.judge, p.target, p.rate.value) for p in models.targets]  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localjudge.lazy import lazy_exports

if TYPE_CHECKING:
    from localjudge.bias.analysis import analyze_models, analyze_pairwise, analyze_pointwise
    from localjudge.bias.families import parse_families
    from localjudge.bias.judging import Judgments, judge_responses
    from localjudge.bias.markdown import format_bias_report
    from localjudge.bias.options import BiasOptions
    from localjudge.bias.pairwise import (
        equal_opportunity_pairwise,
        pairwise_length_bias,
        pairwise_self_preference,
        position_bias,
    )
    from localjudge.bias.plots import write_heatmap, write_position_panel, write_win_rates
    from localjudge.bias.pointwise import equal_opportunity_pointwise, score_matrix, self_preference
    from localjudge.bias.recognition import Recognition
    from localjudge.bias.records import PairwiseRecord, PointwiseRecord
    from localjudge.bias.records_folder import RecordsFolder
    from localjudge.bias.regression import length_bias, perplexity_adjusted
    from localjudge.bias.results import (
        BiasReport,
        EqualOpportunity,
        Finding,
        LengthBias,
        MatrixCell,
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
    from localjudge.bias.study import (
        STUDY_FILES,
        BiasStudy,
        StoredJudgments,
        analyze_judgments,
        summary_lines,
        write_study,
    )
    from localjudge.bias.targets import pairwise_targets, pointwise_targets, win_rates
    from localjudge.stats import Estimate

__all__ = [
    "STUDY_FILES",
    "BiasOptions",
    "BiasReport",
    "BiasStudy",
    "EqualOpportunity",
    "Estimate",
    "Finding",
    "Judgments",
    "LengthBias",
    "MatrixCell",
    "PairwiseLengthBias",
    "PairwiseRecord",
    "PairwiseSelfPreference",
    "PerplexityAdjusted",
    "PointwiseRecord",
    "PositionBias",
    "Recognition",
    "RecordsFolder",
    "ScoreMatrix",
    "SelfPreference",
    "StoredJudgments",
    "TargetDiD",
    "TargetPreference",
    "WinRateCell",
    "WinRateMatrix",
    "analyze_judgments",
    "analyze_models",
    "analyze_pairwise",
    "analyze_pointwise",
    "equal_opportunity_pairwise",
    "equal_opportunity_pointwise",
    "format_bias_report",
    "judge_responses",
    "length_bias",
    "pairwise_length_bias",
    "pairwise_self_preference",
    "pairwise_targets",
    "parse_families",
    "perplexity_adjusted",
    "pointwise_targets",
    "position_bias",
    "score_matrix",
    "self_preference",
    "summary_lines",
    "win_rates",
    "write_heatmap",
    "write_position_panel",
    "write_study",
    "write_win_rates",
]

# name -> the module that defines it, imported on first access (these import the run loop and judges)
_LAZY = {
    "analyze_models": "localjudge.bias.analysis",
    "analyze_pairwise": "localjudge.bias.analysis",
    "analyze_pointwise": "localjudge.bias.analysis",
    "format_bias_report": "localjudge.bias.markdown",
    "BiasOptions": "localjudge.bias.options",
    "equal_opportunity_pairwise": "localjudge.bias.pairwise",
    "pairwise_length_bias": "localjudge.bias.pairwise",
    "pairwise_self_preference": "localjudge.bias.pairwise",
    "position_bias": "localjudge.bias.pairwise",
    "write_heatmap": "localjudge.bias.plots",
    "write_position_panel": "localjudge.bias.plots",
    "write_win_rates": "localjudge.bias.plots",
    "equal_opportunity_pointwise": "localjudge.bias.pointwise",
    "score_matrix": "localjudge.bias.pointwise",
    "self_preference": "localjudge.bias.pointwise",
    "PairwiseRecord": "localjudge.bias.records",
    "PointwiseRecord": "localjudge.bias.records",
    "length_bias": "localjudge.bias.regression",
    "perplexity_adjusted": "localjudge.bias.regression",
    "BiasReport": "localjudge.bias.results",
    "EqualOpportunity": "localjudge.bias.results",
    "Finding": "localjudge.bias.results",
    "LengthBias": "localjudge.bias.results",
    "MatrixCell": "localjudge.bias.results",
    "PairwiseLengthBias": "localjudge.bias.results",
    "PairwiseSelfPreference": "localjudge.bias.results",
    "PerplexityAdjusted": "localjudge.bias.results",
    "PositionBias": "localjudge.bias.results",
    "ScoreMatrix": "localjudge.bias.results",
    "SelfPreference": "localjudge.bias.results",
    "TargetDiD": "localjudge.bias.results",
    "TargetPreference": "localjudge.bias.results",
    "WinRateCell": "localjudge.bias.results",
    "WinRateMatrix": "localjudge.bias.results",
    "pairwise_targets": "localjudge.bias.targets",
    "pointwise_targets": "localjudge.bias.targets",
    "win_rates": "localjudge.bias.targets",
    "Estimate": "localjudge.stats",
    "parse_families": "localjudge.bias.families",
    "Judgments": "localjudge.bias.judging",
    "RecordsFolder": "localjudge.bias.records_folder",
    "judge_responses": "localjudge.bias.judging",
    "Recognition": "localjudge.bias.recognition",
    "STUDY_FILES": "localjudge.bias.study",
    "BiasStudy": "localjudge.bias.study",
    "StoredJudgments": "localjudge.bias.study",
    "analyze_judgments": "localjudge.bias.study",
    "summary_lines": "localjudge.bias.study",
    "write_study": "localjudge.bias.study",
}


__getattr__, __dir__ = lazy_exports("localjudge.bias", _LAZY, globals())
