"""The model-level report: win rates, each judge's preference for itself and its family, Holm-corrected.

`analyze_models` runs `bias.targets` on a study's records into a `ModelReport`, whose findings are
Holm-corrected across that report's tests; `format_model_report` renders it as markdown.

Examples:
    >>> report = analyze_models(pointwise_records, pairwise_records)  # doctest: +SKIP
    >>> print(format_model_report(report))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from localjudge.bias.markdown import _e, _p, _table
from localjudge.bias.records import PairwiseRecord, PointwiseRecord
from localjudge.bias.results import BiasSettings, Finding, ModelReport, TargetDiD, TargetPreference, TestName
from localjudge.bias.summary import fmt_p
from localjudge.bias.targets import pairwise_targets, pointwise_targets, win_rates
from localjudge.stats import Estimate, holm

if TYPE_CHECKING:
    from localjudge.bias.panels import BiasPanel

ORDER_SET = 0.5
"""A target's P(preferred | shown first) minus P(preferred | shown second) from which its verdicts
are said to follow the order rather than the content."""


def _what(x: TargetPreference | TargetDiD) -> str:
    return "its own responses" if x.relation == "self" else f"{x.target} (its family, {x.judge_family})"


def _ci(e: Estimate, settings: BiasSettings) -> str:
    if e.ci_low is None or e.ci_high is None:
        return f"{100 * settings.ci_level:g}% CI not available"
    return f"{100 * settings.ci_level:g}% CI {e.ci_low:.2f}–{e.ci_high:.2f}"


def _sentences(
    pair: Sequence[TargetPreference], point: Sequence[TargetDiD]
) -> list[tuple[TestName, str, Estimate, str]]:
    """(test, judge, estimate, sentence before its statistics) of every test."""
    out: list[tuple[TestName, str, Estimate, str]] = []
    for x in pair:
        first, second = x.shown_first.value, x.shown_second.value
        out.append(
            (
                "target_rate",
                x.judge,
                x.rate,
                f"{x.judge} judge gives {_what(x)} {x.rate.value or 0:.2f} probability against other families' "
                f"responses, position averaged out (P | shown first {first or 0:.2f}, P | shown second "
                f"{second or 0:.2f})",
            )
        )
        if x.difference is not None:
            v = x.difference.value or 0.0
            out.append(
                (
                    "target_difference",
                    x.judge,
                    x.difference,
                    f"{x.judge} judge prefers {_what(x)} {'more' if v > 0 else 'less'} than judges of neither "
                    f"family do on the same pairs: {v:+.2f} in probability",
                )
            )
    for d in point:
        v = d.did.value or 0.0
        out.append(
            (
                "target_did",
                d.judge,
                d.did,
                f"{d.judge} judge scores {_what(d)} {v:+.2f} points relative to other families' responses, "
                "beyond what other families' judges give",
            )
        )
    return out


def analyze_models(
    point: Sequence[PointwiseRecord],
    pair: Sequence[PairwiseRecord],
    settings: BiasSettings | None = None,
    panels: Sequence[BiasPanel] = (),
) -> ModelReport:
    """Win rates and each judge's preference for itself and its family's models, with Holm-corrected findings.

    Args:
        point: Pointwise records (may be empty).
        pair: Pairwise records, both orders (may be empty).
        settings: Resampling, confidence and alpha; defaults to `BiasSettings()`.
        panels: Panels of the judges whose pooled verdicts are measured as well (`bias.panels`);
            their estimates carry intervals and p-values but are not among the Holm-corrected findings.

    Raises:
        DataError: Both record lists are empty, or the records contradict each other.
        ConfigError: A panel names a judge without verdicts, or a judge's name.
    """
    from localjudge.bias.panels import check_panels, panel_targets
    from localjudge.errors import DataError

    settings = settings or BiasSettings()
    if not point and not pair:
        raise DataError("no records for the model-level report; run the bias scoring step first")
    check_panels(panels, sorted({r.judge for r in point} | {r.judge for r in pair}))
    targets = pairwise_targets(pair, settings) if pair else []
    dids = pointwise_targets(point, settings) if point else []
    tests = [s for s in _sentences(targets, dids) if s[2].value is not None and s[2].p_value is not None]
    adjusted = holm([e.p_value for _, _, e, _ in tests])  # type: ignore[misc]
    found = []
    for (test, judge, e, say), p_holm in zip(tests, adjusted):
        stat = f"{_ci(e, settings)}, Holm-adjusted {fmt_p(p_holm)}"
        found.append(
            Finding(
                test=test,
                judge=judge,
                estimate=e,
                p_holm=p_holm,
                significant=p_holm < settings.alpha,
                sentence=f"{say} ({stat}).",
            )
        )
    summary = [f.sentence for f in found if f.significant]
    if not summary:
        summary.append(
            f"No model-level effect is significant at α={settings.alpha:g} after Holm correction across "
            f"{len(found)} tests."
            if found
            else "No model-level effect could be tested: no judge is also a generator, or too few items."
        )
    for x in targets:
        first, second = x.shown_first.value, x.shown_second.value
        if first is not None and second is not None and abs(first - second) >= ORDER_SET:
            summary.append(
                f"{x.judge} judge's verdicts on {_what(x)} follow the order, not the content: it prefers them "
                f"with probability {first:.2f} shown first and {second:.2f} shown second."
            )
    items = {r.item_id for r in point} | {r.item_id for r in pair}
    return ModelReport(
        settings=settings,
        judges=sorted({r.judge for r in point} | {r.judge for r in pair}),
        n_items=len(items),
        win_rates=win_rates(pair, settings) if pair else None,
        pairwise=targets,
        pointwise=dids,
        panels=panel_targets(point, pair, panels, settings) if panels else [],
        findings=found,
        summary=summary,
    )


def format_model_report(report: ModelReport) -> str:
    """The model-level report as markdown: summary, win rates, targets, findings."""
    s = report.settings
    out = [
        "# Model-level preferences",
        "",
        f"{len(report.judges)} judges on {report.n_items} items. Targets: each judge itself (self-preference, "
        "Panickssery et al. 2024) and the other models of its family (family preference), against the "
        f"responses of other families. Intervals: {100 * s.ci_level:g}% percentile bootstrap over items.",
        "",
        "## Summary",
        "",
        *[f"- {line}" for line in report.summary],
        "",
    ]
    m = report.win_rates
    if m is not None:
        cells = {(c.judge, c.generator): c.rate for c in m.cells}
        out += _table(
            "Pairwise win rate (judge × generator, both orders averaged)",
            ["judge (family)"] + [f"{g} ({f})" for g, f in zip(m.generators, m.generator_families)],
            [[f"{j} ({f})"] + [_e(cells[(j, g)]) for g in m.generators] for j, f in zip(m.judges, m.judge_families)],
        )
    out += _table(
        "Pairwise preference for a target (probability)",
        ["judge", "target", "P(target | shown first)", "P(target | shown second)", "½ sum", "p (0.5)"]
        + ["reference", "difference", "p"],
        [
            [
                x.judge,
                f"{x.target} ({x.relation})",
                _e(x.shown_first),
                _e(x.shown_second),
                _e(x.rate),
                _p(x.rate),
                _e(x.reference_rate),
                _e(x.difference),
                _p(x.difference),
            ]
            for x in report.pairwise
        ],
    )
    out += _table(
        "Pointwise preference for a target (difference in differences, points)",
        ["judge", "target", "raw gap", "DiD", "p", "control judges"],
        [
            [d.judge, f"{d.target} ({d.relation})", _e(d.raw_gap), _e(d.did), _p(d.did), ", ".join(d.reference_judges)]
            for d in report.pointwise
        ],
    )
    if report.panels:
        out += _table(
            "Panels as judges: each family's preference as a panel passes it on (not Holm-corrected)",
            ["panel", "family", "includes it", "target", "½ sum", "reference", "difference", "p"]
            + ["pointwise DiD", "p"],
            [
                [
                    f"{x.panel} ({', '.join(x.members)})",
                    x.family,
                    "yes" if x.includes_family else "no",
                    x.target,
                    _e(x.rate),
                    _e(x.reference_rate),
                    _e(x.difference),
                    _p(x.difference),
                    _e(x.did),
                    _p(x.did),
                ]
                for x in report.panels
            ],
        )
    out += _table(
        f"Findings (Holm correction across {len(report.findings)} tests, α={s.alpha:g})",
        ["test", "judge", "estimate", "p", "Holm p", "significant"],
        [
            [
                f.test,
                f.judge,
                _e(f.estimate),
                _p(f.estimate),
                fmt_p(f.p_holm).removeprefix("p="),
                "yes" if f.significant else "no",
            ]
            for f in report.findings
        ],
    )
    return "\n".join(out).rstrip() + "\n"
