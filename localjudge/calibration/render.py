"""Renders a `CalibrationReport` as the readable text `localjudge calibrate` prints."""

from __future__ import annotations

import textwrap

from localjudge.calibration.results import CalibrationReport, CorrelationEstimates, ScoreSummary
from localjudge.stats import Estimate

WIDTH = 88
"""Columns of the text report; longer lines wrap with a hanging indent (paths stay whole)."""


def _wrap(text: str, indent: str = "", hang: str = "    ") -> list[str]:
    """`text` wrapped to `WIDTH`: the first line starts with `indent`, the rest with indent + hang."""
    return textwrap.wrap(
        text,
        WIDTH,
        initial_indent=indent,
        subsequent_indent=indent + hang,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent]


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _estimate(label: str, est: Estimate, level: float) -> str:
    text = f"  {label:<13}{_num(est.value):>7}"
    if est.ci_low is not None:
        text += f"   {level:.0%} CI [{_num(est.ci_low)}, {_num(est.ci_high)}]"
    elif est.value is not None:
        text += "   (no interval)"
    return text


def _correlations(est: CorrelationEstimates, level: float) -> list[str]:
    return [
        _estimate("Spearman ρ", est.spearman, level),
        _estimate("Pearson r", est.pearson, level),
        _estimate("Kendall τ-b", est.kendall_tau_b, level),
    ]


def _score_row(name: str, s: ScoreSummary) -> str:
    row = f"  {name:<6}{s.min:>9.3f}{s.max:>9.3f}{s.mean:>9.3f}{s.std:>9.3f}"
    if s.scale is not None:
        row += (
            f"   on {s.scale[0]:g}–{s.scale[1]:g}: {_num(s.min_frac, 2)}–{_num(s.max_frac, 2)},"
            f" mean {_num(s.mean_frac, 2)}, std {_num(s.std_frac, 2)}"
        )
    return row


def format_report(report: CalibrationReport) -> str:
    """The report as plain text, one section per block, ending with READY or NOT READY.

    Examples:
        >>> from localjudge.calibration import calibrate
        >>> print(format_report(calibrate([1, 2, 3, 4], [1, 3, 2, 4], n_bootstrap=0)))
        ... # doctest: +ELLIPSIS
        Calibration: 4 items, 4 scored, 0 unscored (0.0%)
        ...
    """
    s = report.settings
    level = s.ci_level
    lines = []
    if report.input is not None:
        src = report.input
        what = f"metric {src.metric!r}, " if src.metric else ""
        grouped = f", group {src.group_field!r}" if src.group_field else ""
        lines += _wrap(
            f"Input: {src.path} ({src.kind}; {what}judge {src.judge_field!r}, human {src.human_field!r}{grouped})"
        )
    lines.append(
        f"Calibration: {report.n_items} items, {report.n_scored} scored, "
        f"{report.n_unscored} unscored ({report.unscored_share:.1%})"
    )
    if report.input is not None and report.input.unscored_reasons:
        reasons = sorted(report.input.unscored_reasons.items(), key=lambda kv: (-kv[1], kv[0]))
        lines.append("  unscored, by reason:")
        for why, n in reasons:
            lines += _wrap(f"{n} × {why}", "    ")
    boot = (
        f"{s.n_bootstrap} bootstrap resamples of {report.resampling}, seed {s.seed}"
        if s.n_bootstrap
        else "no bootstrap"
    )
    lines += ["", f"Dataset level ({report.n_scored} items; {boot})"]
    lines += _correlations(report.dataset, level)
    if report.summary is not None:
        sm = report.summary
        lines += [""] + _wrap(
            f"Summary level (mean over {sm.n_groups_used} groups; {sm.n_groups_skipped} skipped "
            "as constant or with fewer than 3 scored items)"
        )
        lines += _correlations(sm.correlations, level)

    sc = report.scale
    lines += ["", "Scale use", f"  {'':<6}{'min':>9}{'max':>9}{'mean':>9}{'std':>9}"]
    lines += [_score_row("judge", sc.judge), _score_row("human", sc.human)]
    basis = "std / scale width" if sc.spread_basis == "scale" else "IQR / observed range"
    flag = "COMPRESSED" if sc.compressed else "not compressed"
    lines += _wrap(f"spread ({basis}): judge {sc.judge_spread:.3f} vs human {sc.human_spread:.3f} → {flag}", "  ")
    if sc.compressed:
        lines.append("  the judge orders items well but squeezes them; consider --fit isotonic")

    ss = report.sample_size
    lines += ["", f"Sample size: {ss.n_labelled} labelled items"]
    if ss.warning:
        lines += _wrap(f"WARNING: {ss.warning}", "  ")
    else:
        lines.append(
            f"  ≥ {ss.min_recommended} (enough to tell ρ = 0.7 from 0.5); "
            f"{ss.aim_low}–{ss.aim_high} tell ρ = 0.8 from 0.7"
        )

    if report.fit is not None:
        f = report.fit
        lines += [""] + _wrap(
            f"Isotonic fit (fitted on {f.n_calibration} items, evaluated on {f.n_heldout} "
            f"held-out items, split by {f.split_by})"
        )
        lines.append(f"  {'':<8}{'Spearman':>10}{'Pearson':>10}{'MAE':>10}")
        for name, sc_ in (("before", f.before), ("after", f.after)):
            lines.append(f"  {name:<8}{_num(sc_.spearman):>10}{_num(sc_.pearson):>10}{sc_.mae:>10.3f}")
        if f.before_mapping == "identity":
            lines.append("  (before-MAE compares raw scores; pass both scales to map linearly)")

    if report.plots:
        lines += ["", "Plots:"] + [f"  {p}" for p in report.plots]
    lines += [""] + _wrap(report.readiness.line, "", "  ")
    return "\n".join(lines)
