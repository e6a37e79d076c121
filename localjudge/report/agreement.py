"""Judge against human: the points of the scatter and `calibrate`'s report on them, per metric and judge.

The agreement is the calibration package's own (`localjudge.calibration.calibrate`, the report
`localjudge calibrate agreement` prints), computed on the same pairs the scatter draws.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from localjudge.calibration import CalibrationOptions, CalibrationReport, calibrate, format_report
from localjudge.errors import LocalJudgeError
from localjudge.report.options import ReportOptions
from localjudge.report.rows import Row
from localjudge.stats.numbers import finite


@dataclass(frozen=True)
class Agreement:
    """One judge's scores of one metric beside the human scores of the same cases."""

    metric: str
    judge: str
    human_field: str
    judge_field: str  # "raw_score" (the metric's scale) or "score" where records have no raw score
    points: list[tuple[float | None, float, str]]  # (judge score or None when unscored, human score, case id)
    report: CalibrationReport | None
    text: str  # format_report's text, or why there is no report


def human_field(metric: str, extra: dict[str, Any], named: str | None) -> str | None:
    """The case field holding the human score of `metric`: the one named, else `human_<dimension>`, else `human`.

    Examples:
        >>> human_field("consistency_likelihood", {"human_consistency": 4.0, "human_fluency": 3.0}, None)
        'human_consistency'
        >>> human_field("correctness", {"human": 1}, None), human_field("correctness", {}, None)
        ('human', None)
    """
    if named is not None:
        return named
    fields = [k for k, v in extra.items() if k.startswith("human_") and _number(v) is not None]
    matching = [k for k in fields if metric.startswith(k.removeprefix("human_"))]
    if matching:
        return max(matching, key=len)
    return "human" if _number(extra.get("human")) is not None else None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return finite(value)


def agreement(metric: str, judge: str, rows: list[Row], settings: ReportOptions) -> Agreement | None:
    """The agreement of one metric's rows by one judge with the human scores in their cases; None without any."""
    field = human_field(metric, rows[0].extra, settings.human)
    if field is None:
        return None
    labelled = [r for r in rows if _number(r.extra.get(field)) is not None]
    if not labelled:
        return None
    judge_field = "raw_score" if any(r.raw_score is not None for r in labelled) else "score"
    points = [(getattr(r, judge_field), float(r.extra[field]), r.case_id) for r in labelled]
    groups = None
    if settings.group is not None:
        groups = [str(r.extra.get(settings.group, "")) for r in labelled]
    calibration = CalibrationOptions(n_bootstrap=settings.n_bootstrap, seed=settings.seed, ci_level=settings.ci_level)
    try:
        report = calibrate([p[0] for p in points], [p[1] for p in points], groups, settings=calibration)
    except LocalJudgeError as exc:  # too few scored items, say: the scatter stays, with why there is no report
        return Agreement(metric, judge, field, judge_field, points, None, f"no agreement: {exc}")
    return Agreement(metric, judge, field, judge_field, points, report, format_report(report))
