"""What `eval` prints: one row per record in input order, a summary per metric, and what it means.

Unscored cases are counted by reason, per metric; a pairwise metric is reported as a comparison
(output 1's win rate, how much the two presentation orders disagree), with pass/fail only when
the metric sets a threshold.
"""

from __future__ import annotations

import click

from localjudge.cli.output import print_table
from localjudge.kinds import kind_of
from localjudge.kinds.comparison import ComparisonSummary, preferred
from localjudge.kinds.records import ResultRecord
from localjudge.runs.evaluate import EvaluationResult
from localjudge.runs.summary import MetricSummary


def print_run(result: EvaluationResult, judge: str) -> None:
    """The records table, the summary table naming `judge`, then per metric: comparison, unscored reasons, notes."""
    rows = []
    for r in result.records:
        score = "unscored" if r.score is None else f"{r.score:.3f}"
        raw = "" if r.raw_score is None else f"{r.raw_score:.2f}"
        rows.append((r.case_id, r.metric, score, raw, outcome(r), (r.unscored_reason or "")[:60]))
    print_table(["case", "metric", "score", "raw", "outcome", "note"], rows)
    click.echo(f"\njudge: {judge}")
    print_table(
        ["metric", "n", "mean score", "pass rate", "unscored", "valid mass"],
        [
            (s.metric, s.n, _f(s.mean_score), _f(s.pass_rate), s.unscored, _f(s.mean_valid_mass))
            for s in result.summaries
        ],
    )
    for s in result.summaries:
        for line in explain(s):
            click.echo(f"\n{line}")


def outcome(r: ResultRecord) -> str:
    """pass/FAIL against a threshold; for a comparison without one, the output it prefers."""
    if r.passed is not None:
        return "pass" if r.passed else "FAIL"
    if kind_of(r.kind).compares_outputs and r.score is not None and r.distribution:
        return preferred(r)
    return ""


def explain(s: MetricSummary) -> list[str]:
    """Plain-language lines on one metric: the comparison (pairwise kinds), why cases are unscored, notes."""
    lines = []
    c = s.detail
    if isinstance(c, ComparisonSummary) and s.scored and c.win_rate is not None:
        spread = "" if c.mean_disagreement is None else (
            f"; the two presentation orders differ by {c.mean_disagreement:.3f} on average and flip the "
            f"preferred output in {c.flipped} of {s.scored} cases"
        )  # fmt: skip
        lines.append(
            f"{s.metric}: output 1 wins {c.win_rate:.1%} of {s.scored} comparisons (ties count half), "
            f"mean P(output 1 better) {s.mean_score:.3f}{spread}."
        )
    if s.unscored:
        reasons = "\n".join(f"  {n} × {why}" for why, n in s.unscored_reasons.items())
        lines.append(f"Unscored on {s.metric}: {s.unscored} of {s.n} cases, by reason:\n{reasons}")
        if s.min_valid_mass is not None and any("min_valid_mass" in why for why in s.unscored_reasons):
            lines[-1] += (
                f"\n  (--min-valid-mass sets that threshold, {s.min_valid_mass:g} here; a lower one reads "
                "scores the judge barely gives: check them against labels before trusting them)"
            )
    lines += [f"Note on {s.metric}: {note}." for note in s.notes]
    return lines


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"
