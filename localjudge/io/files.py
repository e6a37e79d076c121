"""The user's files at the boundary: read as UTF-8 text, parsed with errors that name file and
line, and never overwritten by a command's outputs.

Every reader of a file a user hands to localjudge (data, prompts, responses, judgments, metric
files, style guides, registries, calibration tables) goes through `read_text` or `decode_text`,
then `parse_json` or `load_yaml`; every command that writes checks its outputs with
`refuse_overwriting`.

Examples:
    >>> text = read_text("cases.jsonl", "data file")  # doctest: +SKIP
    >>> refuse_overwriting(["results.jsonl"], [("data file", "cases.jsonl")])  # doctest: +SKIP
"""

from __future__ import annotations

import codecs
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from localjudge.errors import CLIP, ConfigError, DataError, LocalJudgeError, cut

_BOM = codecs.BOM_UTF8


def read_text(path: str | Path, what: str = "file", error: type[LocalJudgeError] = DataError) -> str:
    """The file's text, which must be UTF-8 (a leading BOM is dropped) without NUL bytes.

    Args:
        path: The file.
        what: What the file is, for messages ("data file", "metric file"...).
        error: The exception raised, e.g. `ConfigError` for configuration files.

    Raises:
        error: The file is missing, a directory, unreadable, not UTF-8 or binary; the message
            names the file and, for bad bytes, the line and byte offset.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise error(f"cannot read {what} {path}: it does not exist; check the path") from None
    except IsADirectoryError:
        raise error(f"cannot read {what} {path}: it is a directory; give a file") from None
    except OSError as exc:
        # cut: a name too long for any file can reach here
        raise error(f"cannot read {what} {cut(path, 4 * CLIP)}: {exc.strerror or exc}") from None
    return decode_text(raw, path, error)


def decode_text(raw: bytes, path: str | Path, error: type[LocalJudgeError] = DataError) -> str:
    """Decodes a file's bytes as UTF-8 text; bad bytes raise `error` naming file, line and offset."""
    start = len(_BOM) if raw.startswith(_BOM) else 0
    nul = raw.find(b"\0", start)
    try:
        text = raw[start:].decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = start + exc.start
        if not 0 <= nul < bad:
            raise error(
                f"{path}:{_line(raw, bad)}: not valid UTF-8 (byte offset {bad}); re-save the file as UTF-8"
            ) from None
    if nul >= 0:
        raise error(
            f"{path}:{_line(raw, nul)}: binary content (a NUL byte at byte offset {nul}); give a UTF-8 text file"
        ) from None
    return text


def _line(raw: bytes, offset: int) -> int:
    return raw.count(b"\n", 0, offset) + 1


_LONG_NUMBER = re.compile(r"\d{" + str(sys.get_int_max_str_digits() + 1) + ",}")


def _number_line(text: str) -> int | None:
    match = _LONG_NUMBER.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _too_long(where: str) -> str:
    return (
        f"{where}: a number has more than {sys.get_int_max_str_digits()} digits, more than "
        "Python converts; write it as a string"
    )


def parse_json(
    text: str, path: str | Path, line: int | str | None = None, error: type[LocalJudgeError] = DataError
) -> Any:
    """Parses a JSON document: a whole file (`line` None) or one line of a JSONL file.

    Args:
        text: The document.
        path: The file it comes from.
        line: Its line number, or a label such as "line 3", for one line of a JSONL file.
        error: The exception raised.

    Raises:
        error: Invalid JSON, nesting too deep, or a number too long to convert; the message
            names the file and the line.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        n: int | str | None = exc.lineno if line is None else line
        raise error(f"{path}:{n}: invalid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        where = f"{path}:{line}" if line is not None else str(path)
        raise error(f"{where}: invalid JSON (nested too deeply)") from None
    except ValueError:  # Python's limit on digits in int(str): a 5,000-digit integer
        n = line if line is not None else _number_line(text)
        raise error(_too_long(f"{path}:{n}" if n is not None else str(path))) from None


def load_yaml(path: str | Path, what: str, error: type[LocalJudgeError] = ConfigError) -> Any:
    """Reads and parses a YAML (or JSON) file; errors name the file and the line."""
    import yaml

    text = read_text(path, what, error)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise error(f"{where}: invalid YAML ({getattr(exc, 'problem', None) or exc})") from None
    except RecursionError:
        raise error(f"{path}: invalid YAML (nested too deeply)") from None
    except ValueError:  # the digit limit again, from yaml's int constructor
        n = _number_line(text)
        raise error(_too_long(f"{path}:{n}" if n is not None else str(path))) from None


def write_atomically(
    path: Path, text: str, *, prefix: str | None = None, tmp_dir: Path | None = None, sync: bool = False
) -> None:
    """Writes `text` to `path` so that a reader sees the old content or the new, never a torn file.

    The text goes to a temporary file in `tmp_dir` (default: `path`'s folder, created if need be),
    named `prefix` and a random tail (default `.NAME.*.tmp`), then renamed over `path`; `sync`
    flushes it to disk first. On any failure the temporary file is removed and the error raised.
    """
    folder = tmp_dir or path.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=prefix or f".{path.name}.", suffix="" if prefix else ".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:  # a Ctrl-C between write and rename included: the old file stays whole
        Path(tmp).unlink(missing_ok=True)
        raise


def is_file(path: str | Path) -> bool:
    """Whether `path` is an existing file; False for names no file can have (too long, a NUL)."""
    try:
        return Path(path).is_file()
    except (OSError, ValueError):
        return False


def is_dir(path: str | Path) -> bool:
    """Whether `path` is an existing folder; False for names no folder can have."""
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):
        return False


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether `a` is the existing file `b` (same path, a symlink or a hard link) or lies in folder `b`."""
    try:
        if Path(b).is_dir():  # a model folder: every file in it is an input
            return Path(a).is_file() and Path(a).resolve().is_relative_to(Path(b).resolve())
        return os.path.samefile(a, b)
    except OSError:  # either does not exist (yet)
        return False


def model_path_input(name: str) -> tuple[str, str | None]:
    """("judge model", the file or folder) a model load reads; None for a registry name or hub id."""
    return ("judge model", name if is_file(name) or is_dir(name) else None)


def refuse_overwriting(outputs: Iterable[str | Path], inputs: Iterable[tuple[str, str | Path | None]]) -> None:
    """Refuses a command whose outputs would overwrite one of its inputs.

    Args:
        outputs: Files the command is about to write.
        inputs: (what, path) of every file or folder it reads; None paths are skipped.

    Raises:
        ConfigError: An output is an input, by path, symlink or hard link, or a file inside an
            input folder (with or without --overwrite: input data is never overwritten).
    """
    read = [(what, p) for what, p in inputs if p is not None]
    for out in outputs:
        for what, path in read:
            if same_file(out, path):
                raise ConfigError(
                    f"{out} is {'in ' if Path(path).is_dir() else ''}the {what} {path}; localjudge "
                    "never writes over its input, so choose another output path"
                )
