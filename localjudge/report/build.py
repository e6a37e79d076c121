"""`write_report`: results files in, one self-contained HTML page out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from localjudge.errors import DataError
from localjudge.io.cases import TestCase
from localjudge.report.agreement import Agreement, agreement
from localjudge.report.compare import Comparison, compare
from localjudge.report.options import ReportOptions
from localjudge.report.page import render_page
from localjudge.report.payload import payload
from localjudge.report.rows import Row, Run, label_judges, read_run
from localjudge.report.summary import GroupSummary, group_key, summarise
from localjudge.version import __version__


@dataclass(frozen=True)
class Report:
    """What a page was made of, for the command line to print."""

    out: str
    records: int
    groups: list[GroupSummary]
    agreements: list[Agreement]
    comparisons: list[Comparison]
    size_bytes: int


def write_report(
    paths: Sequence[str | Path],
    out: str | Path,
    settings: ReportOptions | None = None,
    cases: Sequence[TestCase] | None = None,
) -> Report:
    """Writes one HTML page of the runs in `paths`: summaries, agreement with humans, judges side by side, cases.

    The page needs no network: its script, style and data are inside it, and it opens from `file://`.

    Args:
        paths: Results files of `localjudge eval` (one judge or a panel) or `localjudge rank`.
        out: The page to write (replaced if it exists).
        settings: What to show and how (`ReportOptions`); None: the defaults.
        cases: The cases judged, whose fields (input, output, passages...) the page shows on demand;
            the records hold only the cases' extra fields.

    Raises:
        DataError: A file is not a results file, or two files judge one case by one metric and judge.

    Examples:
        >>> write_report(["results.jsonl"], "report.html")  # doctest: +SKIP
        >>> write_report(["a.jsonl", "b.jsonl"], "ab.html", ReportOptions(human="human_score"))  # doctest: +SKIP
    """
    if not paths:
        raise DataError("no results file given; pass one or more files that localjudge eval wrote")
    return write_runs([read_run(p) for p in paths], out, settings, cases)


def write_runs(
    runs: Sequence[Run],
    out: str | Path,
    settings: ReportOptions | None = None,
    cases: Sequence[TestCase] | None = None,
) -> Report:
    """`write_report` of runs already read (`read_run`, or `eval_run` of a run's own records)."""
    settings = settings or ReportOptions()
    runs = label_judges(list(runs))
    grouped = _grouped(runs)
    groups = [summarise(metric, judge, rows, settings) for (metric, judge), rows in grouped.items()]
    agreements = [a for (metric, judge), rows in grouped.items() if (a := agreement(metric, judge, rows, settings))]
    comparisons = _comparisons(grouped, settings.top_differences)
    title = settings.title or ", ".join(Path(r.path).name for r in runs)
    meta = {
        "title": title,
        "localjudge_version": __version__,
        "settings": settings.model_dump(),
        "sources": [_source(run) for run in runs],
    }
    html = render_page(title, payload(runs, groups, agreements, comparisons, cases, meta))
    Path(out).write_text(html, encoding="utf-8")
    return Report(str(out), sum(len(r.rows) for r in runs), groups, agreements, comparisons, len(html.encode()))


def _grouped(runs: list[Run]) -> dict[tuple[str, str], list[Row]]:
    grouped: dict[tuple[str, str], list[Row]] = {}
    seen: dict[tuple[str, str, str], str] = {}
    for run in runs:
        for row in run.rows:
            key = (row.metric, row.judge, row.case_id)
            if key in seen:
                raise DataError(
                    f"{row.source}: case {row.case_id!r} is judged by {row.judge} on {row.metric} again (also in "
                    f"{seen[key]}); pass each run once"
                )
            seen[key] = row.source
            grouped.setdefault(group_key(row), []).append(row)
    return grouped


def _comparisons(grouped: dict[tuple[str, str], list[Row]], top: int) -> list[Comparison]:
    by_metric: dict[str, list[str]] = {}
    for metric, judge in grouped:
        by_metric.setdefault(metric, []).append(judge)
    found = []
    for metric, judges in by_metric.items():
        for a, b in combinations(judges, 2):
            c = compare(metric, a, grouped[(metric, a)], b, grouped[(metric, b)], top)
            if c is not None:
                found.append(c)
    return found


def _source(run: Run) -> dict[str, object]:
    return {
        "path": run.path,
        "kind": run.kind,
        "records": len(run.rows),
        "judges": sorted({r.judge for r in run.rows}),
        "metrics": sorted({r.metric for r in run.rows}),
        "versions": run.versions,
    }
