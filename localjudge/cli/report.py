"""`localjudge report`: one self-contained HTML page of one or more results files."""

from __future__ import annotations

from pathlib import Path

import click

from localjudge.cli.options import SectionedCommand


def report_options(fn):
    """The options a page takes, shared by `report` and `eval --report`."""
    fn = click.option("--title", default=None, help="Page title [default: the results files' names].")(fn)
    fn = click.option(
        "--group",
        "report_group",
        default=None,
        help="Group id field of the cases (e.g. doc_id): the agreement's summary level resamples whole groups.",
    )(fn)
    fn = click.option(
        "--human",
        "report_human",
        default=None,
        help="Human score field of the cases, drawn against the judge with calibrate's agreement "
        "[default: human_<dimension> matching the metric, or human].",
    )(fn)
    return fn


def report_settings(title, human, group, n_bootstrap=None):
    """The `ReportOptions` of the options above."""
    from localjudge.report import ReportOptions

    given = {"title": title, "human": human, "group": group}
    if n_bootstrap is not None:
        given["n_bootstrap"] = n_bootstrap
    return ReportOptions(**given)


def refuse_existing(out: str, overwrite: bool) -> None:
    """An existing page is replaced only with --overwrite, as every output of localjudge."""
    from localjudge.errors import ConfigError

    if Path(out).exists() and not overwrite:
        raise ConfigError(f"{out} exists; pass --overwrite to replace it, or choose another path")


def echo_report(report, err: bool = False) -> None:
    """One line saying what the page holds and where it is (on stderr with `err`)."""
    click.echo(
        f"report: {report.out} ({report.records} records; {len(report.groups)} metric and judge pairs, "
        f"{len(report.agreements)} against human scores, {len(report.comparisons)} judge comparisons; "
        f"{report.size_bytes / 1e6:.1f} MB)",
        err=err,
    )


@click.command("report", cls=SectionedCommand)
@click.argument("results", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The HTML page to write.")
@click.option(
    "--cases",
    "cases_file",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="The cases judged (.jsonl, .json, .csv): their input, output and passages, shown with each case.",
)
@report_options
@click.option(
    "--n-bootstrap", type=click.IntRange(min=0), default=1000, help="Bootstrap resamples behind every interval."
)
@click.option("--overwrite", is_flag=True, help="Replace an existing page.")
def report_cmd(results, out, cases_file, title, report_human, report_group, n_bootstrap, overwrite) -> None:
    """Write one HTML page of RESULTS (files of eval, a panel or rank): scores, distributions, cases.

    The page opens from file:// with no network: per metric and judge the mean score with its interval,
    the unscored and why, a histogram; the judge against human scores; two judges side by side; and
    every case with its score distribution, sortable and filterable.
    """
    from localjudge.io.cases import load_cases
    from localjudge.io.files import refuse_overwriting
    from localjudge.report import write_report

    refuse_overwriting([out], [*(("results file", r) for r in results), ("cases file", cases_file)])
    refuse_existing(out, overwrite)
    settings = report_settings(title, report_human, report_group, n_bootstrap)
    cases = load_cases(cases_file) if cases_file else None
    echo_report(write_report(results, out, settings, cases))
