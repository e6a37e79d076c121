"""`calibrate`: judge-vs-human agreement, intervals, diagnostics and readiness in one report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

import localjudge.stats as stats
from localjudge.calibration import diagnostics
from localjudge.calibration.isotonic import evaluate_isotonic
from localjudge.calibration.options import CalibrationKeywords, CalibrationOptions, calibration_options_of
from localjudge.calibration.results import (
    CalibrationReport,
    CorrelationEstimates,
    FitEvaluation,
    FitScoresModel,
    InputInfo,
    SummaryLevelEstimates,
)
from localjudge.errors import ConfigError, DataError
from localjudge.stats import Estimate

if TYPE_CHECKING:
    from typing_extensions import Unpack


def _estimates(point: stats.PointCorrelations, intervals: tuple) -> CorrelationEstimates:
    def one(value: float | None, interval: stats.Interval | None) -> Estimate:
        if value is None or interval is None:
            return Estimate(value=value)
        return Estimate(value=value, ci_low=interval.low, ci_high=interval.high)

    return CorrelationEstimates(
        spearman=one(point.spearman, intervals[0]),
        pearson=one(point.pearson, intervals[1]),
        kendall_tau_b=one(point.kendall_tau_b, intervals[2]),
    )


def _check_scale(scores: np.ndarray, scale: tuple[float, float] | None, side: str) -> None:
    if scale is not None and (scores.min() < scale[0] or scores.max() > scale[1]):
        raise ConfigError(
            f"{side} scores span {scores.min():g}..{scores.max():g}, outside --{side}-scale "
            f"{scale[0]:g} {scale[1]:g}; fix the scale or the field read"
        )


def calibrate(
    judge: Sequence[float | None] | np.ndarray,
    human: Sequence[float] | np.ndarray,
    groups: Sequence[object] | np.ndarray | None = None,
    *,
    settings: CalibrationOptions | None = None,
    input_info: InputInfo | None = None,
    **keywords: Unpack[CalibrationKeywords],
) -> CalibrationReport:
    """Measures how well judge scores agree with human scores.

    Args:
        judge: Judge score per item; None or NaN marks an unscored item, which is counted and
            excluded from every statistic (never treated as 0).
        human: Human score per item; all must be finite.
        groups: Group id per item (e.g. source document). Enables summary-level correlation
            and makes the bootstrap resample whole groups.
        settings: The statistical settings (`CalibrationOptions`), recorded in the report as given.
        input_info: Where the pairs were read from, recorded in the report.
        **keywords: The fields of `settings` (`CalibrationKeywords`), instead of the object:
            target: Spearman ρ required to be READY (0.8).
            n_bootstrap: Bootstrap resamples per interval (1000; 0 disables intervals).
            seed: Seed of the bootstrap and of the `fit` split (0).
            ci_level: Interval coverage (0.95).
            judge_scale: (low, high) of the judge scale, if known.
            human_scale: (low, high) of the human scale, if known.
            fit: "isotonic" to fit and evaluate a monotone mapping on a held-out split.
            split: Share of items (or groups) used to fit the mapping (0.5).

    Returns:
        The report; `format_report` renders it as text, `model_dump_json` as JSON.

    Raises:
        DataError: If inputs have mismatched lengths, human scores are missing, or fewer than
            3 items are scored.
        ConfigError: If an option is out of range, `settings` and keywords are both given, or a
            scale does not contain the scores.

    Examples:
        >>> report = calibrate([1, 2, None, 4, 5], [1.5, 2, 3, 3.5, 5], n_bootstrap=0)
        >>> report.n_unscored, report.dataset.spearman.value
        (1, 1.0)
        >>> settings = CalibrationOptions(n_bootstrap=0, target=0.7)
        >>> calibrate([1, 2, None, 4, 5], [1.5, 2, 3, 3.5, 5], settings=settings).settings == settings
        True
    """
    settings = calibration_options_of(settings, keywords, "calibrate")
    judge_all = np.array([np.nan if v is None else v for v in judge], dtype=float)
    human_all = np.asarray(human, dtype=float)
    if judge_all.shape != human_all.shape or judge_all.ndim != 1:
        raise DataError(f"{len(judge_all)} judge scores but {len(human_all)} human scores")
    if not np.isfinite(human_all).all():
        bad = int(np.flatnonzero(~np.isfinite(human_all))[0])
        raise DataError(f"item {bad} has no human score; every item needs one")
    group_all = None if groups is None else np.asarray([str(g) for g in groups])
    if group_all is not None and len(group_all) != len(judge_all):
        raise DataError(f"{len(group_all)} group ids for {len(judge_all)} items")

    scored = np.isfinite(judge_all)
    j, h = judge_all[scored], human_all[scored]  # (n_scored,)
    g = None if group_all is None else group_all[scored]
    if len(j) < stats.MIN_CORR_ITEMS:
        raise DataError(
            f"only {len(j)} of {len(judge_all)} items are scored; need at least "
            f"{stats.MIN_CORR_ITEMS} to correlate (check why the judge left items unscored)"
        )
    _check_scale(j, settings.judge_scale, "judge")
    _check_scale(h, settings.human_scale, "human")

    point = stats.correlations(j, h)
    dataset = _estimates(
        point,
        stats.bootstrap_correlations(
            j, h, g, n_bootstrap=settings.n_bootstrap, seed=settings.seed, level=settings.ci_level
        ),
    )

    summary = None
    rho, rho_low = dataset.spearman.value, dataset.spearman.ci_low
    if g is not None:
        assert group_all is not None  # g is its scored rows
        level = stats.summary_level(j, h, g)
        intervals = stats.bootstrap_summary_level(
            level.per_group, n_bootstrap=settings.n_bootstrap, seed=settings.seed, level=settings.ci_level
        )
        summary = SummaryLevelEstimates(
            correlations=_estimates(level.means, intervals),
            n_groups_used=level.n_used,
            # groups whose items were all unscored are skipped too, not silently dropped
            n_groups_skipped=level.n_skipped + len(set(group_all) - set(g)),
        )
        rho, rho_low = summary.correlations.spearman.value, summary.correlations.spearman.ci_low

    sample = diagnostics.sample_size_check(len(j))
    fit_eval = None
    if settings.fit == "isotonic":
        outcome = evaluate_isotonic(j, h, g, settings)
        fit_eval = FitEvaluation(
            method="isotonic",
            split_by="items" if g is None else "groups",
            n_calibration=outcome.n_calibration,
            n_heldout=outcome.n_heldout,
            before_mapping=outcome.before_mapping,
            before=FitScoresModel(**outcome.before._asdict()),
            after=FitScoresModel(**outcome.after._asdict()),
        )

    n_items = len(judge_all)
    return CalibrationReport(
        settings=settings,
        input=input_info,
        n_items=n_items,
        n_scored=len(j),
        n_unscored=n_items - len(j),
        unscored_share=(n_items - len(j)) / n_items,
        resampling="items" if g is None else "groups",
        dataset=dataset,
        summary=summary,
        scale=diagnostics.scale_diagnostics(j, h, point.spearman, settings.judge_scale, settings.human_scale),
        sample_size=sample,
        readiness=diagnostics.readiness(
            rho, rho_low, summary_level=g is not None, target=settings.target, sample=sample
        ),
        fit=fit_eval,
    )
