"""The results file: JSON lines, flushed per record, safe to resume after a kill, in input order once finished.

While a run goes, records are appended as they are scored (in the order the engine finishes
them); when it finishes, the file is replaced, atomically, by the same records in input order.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from localjudge.errors import DataError, clip
from localjudge.io.jsonl import Appender, Mode, RecordFile
from localjudge.kinds import KINDS
from localjudge.kinds.records import ResultRecord

RESULTS = RecordFile(ResultRecord, "localjudge result record", "results file")
"""Results files: read back with `read_results`, written by `open_results`."""


def read_results(path: str | Path) -> list[ResultRecord]:
    """Records of a results file; a torn last record (a killed writer) is ignored.

    Every line is validated, and only a torn *record* is ignored: a file that holds anything
    else is refused, and so is a record of a kind this localjudge does not know.

    Raises:
        DataError: A line is not a result record, or the bytes after the last newline are not
            the start of one.
    """
    records = RESULTS.read(path)
    for r in records:
        if r.kind not in KINDS:
            raise DataError(
                f"{path}: the record of case {clip(r.case_id)} ({clip(r.metric)}) is of the unknown metric kind "
                f"{clip(r.kind)}; this localjudge knows {', '.join(KINDS)}"
            )
    return records


def open_results(path: str | Path, mode: Mode) -> Appender:
    """The writer of a results file: "new" (must not exist), "overwrite", or "resume".

    Resume only after `read_results` and every check of the run: a torn last record is cut as
    the file opens, so that appended records start on a line of their own.
    """
    return RESULTS.open(path, mode)


def replace_results(path: str | Path, records: Iterable[ResultRecord]) -> None:
    """Rewrites a results file with `records` (e.g. the finished run's, in input order), atomically.

    Readers, and a run killed meanwhile, see the old file or the new one, never a mix.
    """
    RESULTS.replace(path, records)
