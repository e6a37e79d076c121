"""JSON lines: one JSON value per line, read with the errors of `io.files`, and append-only record files.

Lines end at "\\n" only: `str.splitlines()` would also cut at U+2028, U+0085, \\x0b, \\x1c...,
which JSON strings may hold raw (we write with `ensure_ascii=False`).

A record file (results, responses) is written by an `Appender`: one pydantic record per line,
flushed as soon as written, so a killed run leaves whole records and at most one torn last line.
`RecordFile` reads such a file back and cuts that torn line before a resume appends to it. Its
two guarantees: every line is validated before anything is cut, so a refused resume changes
nothing; and only a torn *record* (the start of one of ours) is cut, anything else is refused.
`RecordFile.replace` puts a finished file's records in another order (input order) atomically:
a reader, or a run killed meanwhile, sees the old file or the new one, never a mix.

Examples:
    >>> rows = list(text_rows('{"a": 1}\\n\\n[2]\\n', "x.jsonl"))
    >>> [(r.line, r.value) for r in rows]
    [(1, {'a': 1}), (3, [2])]
"""

from __future__ import annotations

import json
import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError

from localjudge.errors import ConfigError, DataError, LocalJudgeError, field_path
from localjudge.io.files import decode_text, parse_json, read_text

M = TypeVar("M", bound=BaseModel)


class Row(NamedTuple):
    """One non-blank line of a JSONL file, parsed."""

    line: int  # 1-based line number
    value: Any


def numbered_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of each non-blank line, split at "\\n" only."""
    for n, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield n, line


def text_rows(text: str, path: str | Path, error: type[LocalJudgeError] = DataError) -> Iterator[Row]:
    """The parsed non-blank lines of JSONL `text`; a line that is not JSON raises naming file and line."""
    for n, line in numbered_lines(text):
        yield Row(n, parse_json(line, path, n, error))


def read_rows(path: str | Path, what: str, error: type[LocalJudgeError] = DataError) -> Iterator[Row]:
    """The parsed non-blank lines of a JSONL file (UTF-8; bad bytes raise naming line and offset)."""
    return text_rows(read_text(path, what, error), path, error)


def dump_line(value: BaseModel | dict[str, Any], *, ensure_ascii: bool = False, allow_nan: bool = False) -> str:
    """One JSONL line, newline included: a record's fields in their declared order."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return json.dumps(value, ensure_ascii=ensure_ascii, allow_nan=allow_nan) + "\n"


def write_rows(path: str | Path, rows: Iterable[BaseModel | dict[str, Any]], **dump: bool) -> None:
    """Writes a whole JSONL file at once, one row per line; `dump` goes to `dump_line`."""
    Path(path).write_text("".join(dump_line(r, **dump) for r in rows), encoding="utf-8")


Mode = Literal["new", "overwrite", "resume"]


def check_output_mode(path: str | Path, mode: Mode, resumable: bool = True) -> None:
    """The one output-mode check: a "new" output may not replace a file that holds something.

    Every command and run that writes a file checks here, before any model loads and again as
    the file opens (`Appender`). `resumable`: the output can be continued (--resume is offered).

    Raises:
        ConfigError: `mode` is "new" and `path` exists and is not empty.
    """
    path = Path(path)
    if mode == "new" and path.exists() and path.stat().st_size > 0:
        hint = (
            "pass --resume to continue it or --overwrite to replace it"
            if resumable
            else "pass --overwrite to replace it"
        )
        raise ConfigError(f"{path} already exists; {hint}")


class Appender:
    """Appends records to a JSONL file, one line each, flushed as soon as written.

    Open it in "resume" mode only after the file's records have been read and checked
    (`RecordFile.read`): it cuts a torn last record as it opens.
    """

    def __init__(self, path: str | Path, kind: RecordFile, mode: Mode):
        """Opens the file.

        Args:
            path: The file.
            kind: What the file holds (to tell a torn record from other bytes).
            mode: "new" (must not exist or be empty), "overwrite", or "resume" (append after
                the existing lines).

        Raises:
            ConfigError: "new" and the file already holds something.
            DataError: "resume" and the bytes after the last newline are not a torn record.
        """
        self.path = Path(path)
        self._allow_nan = kind.allow_nan
        check_output_mode(self.path, mode)
        if mode == "resume" and self.path.exists():
            kind.cut_torn(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = self.path.open("w" if mode == "overwrite" else "a", encoding="utf-8")

    def write(self, record: BaseModel | dict[str, Any]) -> None:
        self._f.write(dump_line(record, allow_nan=self._allow_nan))
        self._f.flush()

    def sync(self) -> None:
        """Forces written records to disk."""
        os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> Appender:
        return self

    def __exit__(self, *exc) -> None:
        self.sync()
        self.close()


@dataclass(frozen=True)
class RecordFile(Generic[M]):
    """A JSONL file of one record type that an `Appender` writes: how to read it and resume it."""

    model: type[M]
    what: str  # the record, for messages: "localjudge result record"
    file: str  # the file, for messages: "results file"
    hint: str = ""  # appended to the message for a line that is not a record
    name_field: bool = True  # name the first invalid field in that message
    allow_nan: bool = False  # write NaN and infinities as JSON's non-standard literals instead of failing

    @property
    def first_key(self) -> str:
        """The key every line starts with: records are written field by field, in order."""
        return next(iter(self.model.model_fields))

    def read(self, path: str | Path) -> list[M]:
        """Records of the file; a torn last record (a killed writer) is ignored, not cut.

        Raises:
            DataError: The file cannot be read, a line is not a record (file and line named),
                or the bytes after the last newline are not the start of one.
        """
        path = Path(path)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise DataError(f"cannot read {self.file} {path}: {exc.strerror or exc}") from None
        # decoded up to the last newline only: a torn record may end inside a UTF-8 sequence
        whole = decode_text(raw[: raw.rfind(b"\n") + 1], path)
        records = [self._record(line, path, n) for n, line in numbered_lines(whole)]
        torn_tail(raw, path, self.first_key, self.what)  # raises unless a torn record
        return records

    def open(self, path: str | Path, mode: Mode) -> Appender:
        """An `Appender` for the file; see there for `mode`."""
        return Appender(path, self, mode)

    def replace(self, path: str | Path, records: Iterable[M]) -> None:
        """Replaces the file's content with `records`, atomically (temp file, fsync, rename).

        The file keeps its permissions; a symlink keeps pointing at it (the file it names is replaced).
        """
        target = Path(os.path.realpath(path))
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
        # created as open() creates files (0o666 under the umask), not mkstemp's 0o600
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.writelines(dump_line(r, allow_nan=self.allow_nan) for r in records)
                f.flush()
                os.fsync(f.fileno())
            if target.exists():
                os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))
            os.replace(tmp, target)
        except BaseException:  # a Ctrl-C between write and rename included: the old file stays whole
            Path(tmp).unlink(missing_ok=True)
            raise
        _sync_dir(target.parent)

    def cut_torn(self, path: str | Path) -> None:
        """Cuts a torn last record so that appended records start on a line of their own."""
        path = Path(path)
        raw = path.read_bytes()
        end = torn_tail(raw, path, self.first_key, self.what)
        if end < len(raw):
            with path.open("r+b") as f:
                f.truncate(end)

    def _record(self, line: str, path: Path, n: int) -> M:
        try:
            return self.model.model_validate_json(line)
        except ValidationError as exc:
            first = exc.errors()[0]
            why = f"{field_path(first['loc'])}: {first['msg']}" if first["loc"] and self.name_field else first["msg"]
            raise DataError(f"{path}:{n}: not a {self.what} ({why}){self.hint}") from None


def _sync_dir(path: Path) -> None:
    """Makes a rename in the folder durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def torn_tail(raw: bytes, path: str | Path, first_key: str, what: str) -> int:
    """Where the complete lines of an append-only JSONL file end, after checking the rest.

    A killed writer can leave part of its last record after the last newline. That tail is
    safe to cut only if it is the start of one of our records (its first key is `first_key`),
    so anything else there is refused rather than dropped.

    Returns:
        The offset after the last newline; bytes after it are a torn record.

    Raises:
        DataError: The bytes after the last newline are not the start of a record.
    """
    end = raw.rfind(b"\n") + 1
    tail = raw[end:]
    if not tail.strip():
        return end
    start = b'{"' + first_key.encode() + b'": '
    if not (tail.startswith(start) or start.startswith(tail)):
        line = raw.count(b"\n", 0, end) + 1
        raise DataError(f"{path}:{line}: not a {what} (the last line, which has no newline); fix or remove that line")
    return end
