"""A `BiasReport` as markdown: summary first, then one table per analysis."""

from __future__ import annotations

from localjudge.bias.results import BiasReport
from localjudge.bias.summary import fmt_p
from localjudge.stats import Estimate


def _e(e: Estimate | None, digits: int = 2) -> str:
    """'0.42 [0.21, 0.63]', or '–' when undefined."""
    if e is None or e.value is None:
        return "–"
    if e.ci_low is None or e.ci_high is None:
        return f"{e.value:.{digits}f}"
    return f"{e.value:.{digits}f} [{e.ci_low:.{digits}f}, {e.ci_high:.{digits}f}]"


def _p(e: Estimate | None) -> str:
    return "–" if e is None or e.p_value is None else fmt_p(e.p_value).removeprefix("p=")


def _table(title: str, headers: list[str], rows: list[list[str]]) -> list[str]:
    if not rows:
        return []
    lines = [f"## {title}", "", "| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines + [""]


def format_report(report: BiasReport) -> str:
    """Renders a report as markdown: summary bullets, then one table per analysis.

    Intervals are shown as `estimate [low, high]`; p-values in the tables are unadjusted, the
    Holm-adjusted ones are in the Findings table.

    Examples:
        >>> print(format_report(analyze_pointwise(records)))  # doctest: +SKIP
    """
    s = report.settings
    out = [
        f"# Bias report ({report.kind})",
        "",
        f"{report.n_records} records on {report.n_items} items from {len(report.judges)} judges; "
        f"{report.n_unscored} unscored and skipped. Intervals: {100 * s.ci_level:g}% "
        f"percentile bootstrap over items ({s.n_bootstrap} resamples, seed {s.seed}).",
        "",
        "## Summary",
        "",
        *[f"- {line}" for line in report.summary],
        "",
    ]
    m = report.matrix
    if m is not None:
        cells = {(c.judge, c.generator): c for c in m.cells}
        out += _table(
            "Mean score (judge × generator)",
            ["judge (family)"] + [f"{g} ({f})" for g, f in zip(m.generators, m.generator_families)],
            [
                [f"{j} ({f})"] + [_e(cells[(j, g)].mean) for g in m.generators]
                for j, f in zip(m.judges, m.judge_families)
            ],
        )
    out += _table(
        "Self-preference (difference in differences, points)",
        ["judge", "family", "DiD", "p", "raw own − other gap", "control judges"],
        [
            [x.judge, x.judge_family, _e(x.did), _p(x.did), _e(x.raw_gap), ", ".join(x.reference_judges) or "–"]
            for x in report.self_preference
        ],
    )
    out += _table(
        "Own-family effect with perplexity covariate",
        ["judge", "outcome", "own (no covariate)", "own (with logppl)", "p", "logppl coef", "p"],
        [
            [x.judge, x.outcome, _e(x.own_without), _e(x.own_with), _p(x.own_with), _e(x.logppl), _p(x.logppl)]
            for x in report.perplexity
        ],
    )
    out += _table(
        "Pairwise self-preference (probability)",
        ["judge", "family", "P(prefers own)", "reference", "difference", "p"],
        [
            [
                x.judge,
                x.judge_family,
                _e(x.own_rate),
                _e(x.reference_rate) if x.reference_rate is not None else "0.5 (chance)",
                _e(x.difference),
                _p(x.difference),
            ]
            for x in report.pairwise_self_preference
        ],
    )
    out += _table(
        "Equal opportunity (among human-preferred answers)",
        ["judge", "family", "P(picks | own)", "P(picks | other)", "gap", "p"],
        [[x.judge, x.judge_family, _e(x.own), _e(x.other), _e(x.gap), _p(x.gap)] for x in report.equal_opportunity],
    )
    out += _table(
        "Position bias",
        [
            "judge",
            "P(first position wins)",
            "p",
            "flip rate",
            "accuracy A first",
            "accuracy A second",
            "accuracy combined",
        ],
        [
            [
                x.judge,
                _e(x.first_position),
                _p(x.first_position),
                _e(x.flip_rate),
                _e(x.accuracy_a_first),
                _e(x.accuracy_a_second),
                _e(x.accuracy_combined),
            ]
            for x in report.position
        ],
    )
    out += _table(
        f"Length bias (within item, points per {s.length_unit} units)",
        ["judge", "slope", "p", "Spearman ρ", "p"],
        [[x.judge, _e(x.slope), _p(x.slope), _e(x.spearman), _p(x.spearman)] for x in report.length],
    )
    out += _table(
        "Preference for the longer answer (not controlled for quality)",
        ["judge", "P(longer wins)", "p"],
        [[x.judge, _e(x.prefers_longer), _p(x.prefers_longer)] for x in report.pairwise_length],
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
