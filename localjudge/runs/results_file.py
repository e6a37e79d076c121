"""The results file: JSON lines, append-only, flushed per record, safe to resume after a kill."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import ValidationError

from localjudge.errors import ConfigError, DataError, field_path
from localjudge.io.files import decode_text, torn_tail
from localjudge.runs.records import ResultRecord


def read_results(path: str | Path, repair: bool = False) -> list[ResultRecord]:
    """Records of a results file; a torn last record (a killed writer) is dropped, or cut if `repair`.

    Every line is validated before anything is cut, and only a torn *record* is cut: a file that
    holds anything else is refused as it is.

    Raises:
        DataError: A line is not a result record, or the bytes after the last newline are not
            the start of one.
    """
    path = Path(path)
    raw = path.read_bytes()
    good_end = raw.rfind(b"\n") + 1
    records = []
    # split on "\n" only: str.splitlines() also breaks at U+2028, U+0085... inside JSON strings
    for n, line in enumerate(decode_text(raw[:good_end], path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            records.append(ResultRecord.model_validate_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            why = f"{field_path(first['loc'])}: {first['msg']}" if first["loc"] else first["msg"]
            raise DataError(f"{path}:{n}: not a localjudge result record ({why})") from None
    torn_tail(raw, path, _FIRST_KEY, "localjudge result record")  # raises unless a torn record
    if repair:
        repair_torn_record(path)
    return records


def repair_torn_record(path: str | Path) -> None:
    """Cuts a torn last record so that appended records start on a line of their own."""
    path = Path(path)
    raw = path.read_bytes()
    end = torn_tail(raw, path, _FIRST_KEY, "localjudge result record")
    if end < len(raw):
        with path.open("r+b") as f:
            f.truncate(end)


_FIRST_KEY = next(iter(ResultRecord.model_fields))  # records are written field by field, in order


class ResultsWriter:
    """Appends records to a JSONL file, one line each, flushed as soon as written."""

    def __init__(self, path: str | Path, mode: str):
        """Opens the file.

        Args:
            path: the results file.
            mode: "new" (must not exist), "overwrite", or "resume" (append after the existing lines).
        """
        self.path = Path(path)
        if mode == "new" and self.path.exists() and self.path.stat().st_size > 0:
            raise ConfigError(f"{self.path} already exists; pass --resume to continue it or --overwrite to replace it")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = self.path.open("w" if mode == "overwrite" else "a", encoding="utf-8")

    def write(self, record: ResultRecord) -> None:
        line = json.dumps(record.model_dump(mode="json"), ensure_ascii=False, allow_nan=False)
        self._f.write(line + "\n")
        self._f.flush()

    def sync(self) -> None:
        """Forces written records to disk."""
        os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.sync()
        self.close()
