"""One HTML page of a run: what each judge made of each metric, against humans and each other, case by case.

- `write_report` (`build`): results files in, one self-contained page out (`localjudge report`,
  `localjudge eval --report`).
- `read_run` (`rows`): a results file of `eval` (one judge or a panel) or `rank` as the rows shown;
  `eval_run`: a run's own records; `write_runs`: the page of runs already read.
- `summarise` (`summary`): per metric and judge, the mean with its interval, the unscored and why,
  a histogram; `agreement` (`agreement`): judge against human through `calibrate`; `compare`
  (`compare`): two judges on the same cases.
- `payload` and `render_page` (`payload`, `page`): the page's data in columns, and the page.

Examples:
    >>> from localjudge.report import ReportOptions, write_report
    >>> write_report(["results.jsonl"], "report.html", ReportOptions(human="human_score"))  # doctest: +SKIP
"""

from localjudge.report.agreement import Agreement, agreement, human_field
from localjudge.report.build import Report, write_report, write_runs
from localjudge.report.compare import Comparison, compare
from localjudge.report.options import ReportOptions
from localjudge.report.rows import Row, Run, eval_run, read_run
from localjudge.report.summary import GroupSummary, summarise

__all__ = [
    "Agreement",
    "Comparison",
    "GroupSummary",
    "Report",
    "ReportOptions",
    "Row",
    "Run",
    "agreement",
    "compare",
    "eval_run",
    "human_field",
    "read_run",
    "summarise",
    "write_report",
    "write_runs",
]
