"""A `BiasReport` of any kind as markdown: summary first, then one table per analysis, each written once."""

from __future__ import annotations

from localjudge.bias.results import BiasReport, ScoreMatrix, WinRateMatrix
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


def _ep(e: Estimate | None) -> list[str]:
    """An estimate and its p-value: the two cells every tested estimate takes."""
    return [_e(e), _p(e)]


def _table(title: str, headers: list[str], rows: list[list[str]]) -> list[str]:
    if not rows:
        return []
    lines = [f"## {title}", "", "| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines + [""]


def _grid(title: str, m: ScoreMatrix | WinRateMatrix, cell: dict[tuple[str, str], Estimate]) -> list[str]:
    """A judge × generator table, families in the headers."""
    return _table(
        title,
        ["judge (family)"] + [f"{g} ({f})" for g, f in zip(m.generators, m.generator_families)],
        [[f"{j} ({f})"] + [_e(cell[(j, g)]) for g in m.generators] for j, f in zip(m.judges, m.judge_families)],
    )


def _header(report: BiasReport) -> list[str]:
    s = report.settings
    if report.kind == "models":
        return [
            "# Model-level preferences",
            "",
            f"{len(report.judges)} judges on {report.n_items} items. Targets: each judge itself (self-preference, "
            "Panickssery et al. 2024) and the other models of its family (family preference), against the "
            f"responses of other families. Intervals: {100 * s.ci_level:g}% percentile bootstrap over items.",
        ]
    return [
        f"# Bias report ({report.kind})",
        "",
        f"{report.n_records} records on {report.n_items} items from {len(report.judges)} judges; "
        f"{report.n_unscored} unscored and skipped. Intervals: {100 * s.ci_level:g}% "
        f"percentile bootstrap over items ({s.n_bootstrap} resamples, seed {s.seed}).",
    ]


def format_bias_report(report: BiasReport) -> str:
    """Renders a report of any kind as markdown: summary bullets, then one table per analysis it holds.

    Intervals are shown as `estimate [low, high]`; p-values in the tables are unadjusted, the
    Holm-adjusted ones are in the Findings table.

    Examples:
        >>> print(format_bias_report(analyze_pointwise(records)))  # doctest: +SKIP
    """
    s = report.settings
    out = [*_header(report), "", "## Summary", "", *[f"- {line}" for line in report.summary], ""]
    if report.matrix is not None:
        means = {(c.judge, c.generator): c.mean for c in report.matrix.cells}
        out += _grid("Mean score (judge × generator)", report.matrix, means)
    out += _table(
        "Self-preference (difference in differences, points)",
        ["judge", "family", "DiD", "p", "raw own − other gap", "control judges"],
        [
            [x.judge, x.judge_family, *_ep(x.did), _e(x.raw_gap), ", ".join(x.reference_judges) or "–"]
            for x in report.self_preference
        ],
    )
    out += _table(
        "Own-family effect with perplexity covariate",
        ["judge", "outcome", "own (no covariate)", "own (with logppl)", "p", "logppl coef", "p"],
        [[x.judge, x.outcome, _e(x.own_without), *_ep(x.own_with), *_ep(x.logppl)] for x in report.perplexity],
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
                *_ep(x.difference),
            ]
            for x in report.pairwise_self_preference
        ],
    )
    out += _table(
        "Equal opportunity (among human-preferred answers)",
        ["judge", "family", "P(picks | own)", "P(picks | other)", "gap", "p"],
        [[x.judge, x.judge_family, _e(x.own), _e(x.other), *_ep(x.gap)] for x in report.equal_opportunity],
    )
    out += _table(
        "Position bias",
        ["judge", "P(first position wins)", "p", "flip rate", "accuracy A first", "accuracy A second"]
        + ["accuracy combined"],
        [
            [
                x.judge,
                *_ep(x.first_position),
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
        [[x.judge, *_ep(x.slope), *_ep(x.spearman)] for x in report.length],
    )
    out += _table(
        "Preference for the longer answer (not controlled for quality)",
        ["judge", "P(longer wins)", "p"],
        [[x.judge, *_ep(x.prefers_longer)] for x in report.pairwise_length],
    )
    if report.win_rates is not None:
        rates = {(c.judge, c.generator): c.rate for c in report.win_rates.cells}
        out += _grid("Pairwise win rate (judge × generator, both orders averaged)", report.win_rates, rates)
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
                *_ep(x.rate),
                _e(x.reference_rate),
                *_ep(x.difference),
            ]
            for x in report.targets
        ],
    )
    out += _table(
        "Pointwise preference for a target (difference in differences, points)",
        ["judge", "target", "raw gap", "DiD", "p", "control judges"],
        [
            [d.judge, f"{d.target} ({d.relation})", _e(d.raw_gap), *_ep(d.did), ", ".join(d.reference_judges)]
            for d in report.target_did
        ],
    )
    out += _table(
        "Panels as judges: each family's preference as a panel passes it on (not Holm-corrected)",
        ["panel", "family", "includes it", "target", "½ sum", "reference", "difference", "p", "pointwise DiD", "p"],
        [
            [
                f"{x.panel} ({', '.join(x.members)})",
                x.family,
                "yes" if x.includes_family else "no",
                x.target,
                _e(x.rate),
                _e(x.reference_rate),
                *_ep(x.difference),
                *_ep(x.did),
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
                *_ep(f.estimate),
                fmt_p(f.p_holm).removeprefix("p="),
                "yes" if f.significant else "no",
            ]
            for f in report.findings
        ],
    )
    return "\n".join(out).rstrip() + "\n"
