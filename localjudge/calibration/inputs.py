"""Reads (judge score, human score, group) pairs from a results file or a plain table.

A `localjudge eval` results file (JSONL, one record per case and metric, with `case_id`,
`metric` and `extra`) is detected automatically; anything else is a table: CSV/TSV, JSONL, or
a JSON list of objects. A missing judge score marks an unscored item; a missing human score is
an error naming the file and line.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from localjudge.calibration.results import InputInfo
from localjudge.errors import ConfigError, DataError, clip, cut, unknown_name
from localjudge.io.files import parse_json, read_text
from localjudge.io.jsonl import numbered_lines

RESULTS_KEYS = ("case_id", "metric", "extra")
"""Keys whose presence marks a record of a `localjudge eval` results file."""
JUDGE_FIELDS = ("raw_score", "score")
"""Judge score fields of a results record: on the metric's scale, or normalised to 0–1."""
_MISSING = {"", "na", "nan", "null", "none"}


@dataclass(frozen=True)
class Pairs:
    """Score pairs read from a file, ready for `calibrate`."""

    judge: np.ndarray  # (n,) float, NaN = unscored
    human: np.ndarray  # (n,) float, all finite
    groups: np.ndarray | None  # (n,) str group ids, or None
    info: InputInfo  # includes the count of unscored items per reason
    judge_scale: tuple[float, float] | None  # (0, 1) for the normalised `score` field


class PairSource(NamedTuple):
    """Which fields of an input file hold the scores: the keywords of `load_pairs`, as one object.

    Examples:
        >>> source = PairSource(human="human_coherence", group="doc_id")
        >>> pairs = load_pairs("runs/eval.jsonl", **source._asdict())  # doctest: +SKIP
    """

    human: str | None = None
    """Human score field (results: `extra`, then top level) or column [tables: "human"]."""
    judge: str | None = None
    """"raw_score" (default) or "score" for results files; a column for tables [default: "judge"]."""
    group: str | None = None
    """Group id field or column; None: no groups."""
    metric: str | None = None
    """Metric to read from a results file; needed when it holds several."""


def _records(path: Path) -> Iterator[tuple[str, object]]:
    """Yields (location, record) with a 1-based 'line N' or 'item N' location."""
    text = read_text(path, "calibration input")
    suffix = path.suffix.lower()  # labels.TSV is a TSV file too
    if suffix in (".csv", ".tsv"):
        # not text.splitlines(): it also cuts at U+2028, \x0b... and drops newlines inside quoted cells
        reader = csv.DictReader(io.StringIO(text, newline=""), delimiter="\t" if suffix == ".tsv" else ",")
        for row in reader:
            yield f"line {reader.line_num}", row
        return
    if suffix == ".json":
        whole = parse_json(text, path)
    else:
        try:
            whole = parse_json(text, path)
        except DataError:  # not one JSON document: JSON lines
            whole = None
    if isinstance(whole, list):
        for i, record in enumerate(whole, start=1):
            yield f"item {i}", record
        return
    for i, line in numbered_lines(text):
        yield f"line {i}", parse_json(line, path, f"line {i}")


def _number(value: object) -> float | None:
    """A finite float, None when missing (null, empty, 'NaN'); ValueError otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError
    if isinstance(value, str) and value.strip().lower() in _MISSING:
        return None
    number = float(value)
    if math.isnan(number):
        return None
    if math.isinf(number):
        raise ValueError
    return number


def _lookup(record: dict, field: str) -> tuple[bool, object]:
    """Finds `field` in a record's `extra` dict, then at its top level."""
    extra = record.get("extra")
    if isinstance(extra, dict) and field in extra:
        return True, extra[field]
    return (field in record), record.get(field)


def _field(record: dict, field: str, is_results: bool) -> tuple[bool, object]:
    """(found, value) of a field: results records look in `extra` first, tables by column."""
    return _lookup(record, field) if is_results else (field in record, record.get(field))


def _names(names, most: int = 6) -> str:
    """Field names for a message: each cut, at most `most` of them."""
    names = [str(n) for n in names]
    shown = ", ".join(cut(n, 40) for n in names[:most])
    return shown + (f", … ({len(names)} in all)" if len(names) > most else "")


def _numeric_fields(record: dict) -> list[str]:
    extra = record.get("extra")
    if not isinstance(extra, dict):
        extra = {}
    return sorted(k for k, v in extra.items() if isinstance(v, (int, float)) and not isinstance(v, bool))


def load_pairs(
    path: str | Path,
    *,
    human: str | None = None,
    judge: str | None = None,
    group: str | None = None,
    metric: str | None = None,
) -> Pairs:
    """Reads score pairs from a results file or a table.

    Args:
        path: A `localjudge eval` results file, or a CSV/TSV/JSONL/JSON table.
        human: Human score field: looked up in a record's `extra`, then top level (results;
            required), or a column (tables; default "human").
        judge: "raw_score" (default) or "score" for results files; a column for tables
            (default "judge").
        group: Optional group id field (results: `extra` then top level) or column.
        metric: Metric to read from a results file; required when it holds several.

    Raises:
        DataError: For unreadable files, malformed rows, missing human scores, duplicates.
        ConfigError: For a field or column that the file does not have.

    Examples:
        >>> pairs = load_pairs("runs/eval.jsonl", human="human_coherence")  # doctest: +SKIP
    """
    path = Path(path)
    read = list(_records(path))
    if not read:
        raise DataError(f"{path} holds no records; pass a file with one row per judged item")
    records: list[tuple[str, dict]] = []
    for loc, record in read:
        if not isinstance(record, dict):
            raise DataError(f"{path}:{loc}: expected an object with named fields")
        records.append((loc, record))
    is_results = all(k in records[0][1] for k in RESULTS_KEYS)

    if is_results:
        judge = judge or "raw_score"
        if judge not in JUDGE_FIELDS:
            raise ConfigError(f"--judge-field must be raw_score or score, got {clip(judge)}")
        for loc, record in records:
            missing = [k for k in RESULTS_KEYS if k not in record]
            if missing:
                raise DataError(f"{path}:{loc}: results record lacks {', '.join(missing)}")
        metrics = list(dict.fromkeys(str(r["metric"]) for _, r in records))
        if metric is None and len(metrics) > 1:
            raise ConfigError(f"{path} holds metrics {', '.join(metrics)}; pick one with --metric")
        metric = metric or metrics[0]
        if metric not in metrics:
            raise unknown_name("metric", metric, metrics, f"metrics present in {path}")
        records = [(loc, r) for loc, r in records if str(r["metric"]) == metric]
        if human is None:
            fields = _names(_numeric_fields(records[0][1])) or "none"
            raise ConfigError(f"pass --human FIELD for the human score; numeric extra: {fields}")
    else:
        judge, human = judge or "judge", human or "human"
        metric = None
        first = records[0][1]
        for column in (judge, human, group):
            if column is not None and column not in first:
                raise ConfigError(
                    f"{path} has no column {clip(column)}; columns: {_names(first)} "
                    "(pass --judge-col/--human-col/--group-col)"
                )

    judge_scores, human_scores, group_ids = [], [], []
    reasons: Counter[str] = Counter()
    seen: dict[str, str] = {}
    for loc, record in records:
        where = f"{path}:{loc}"
        if is_results:
            case = str(record["case_id"])
            if case in seen:
                raise DataError(
                    f"{where}: case {clip(case)} appears again for metric {clip(metric)} (first at "
                    f"{seen[case]}); split the file so each case is judged once"
                )
            seen[case] = loc
        found, raw = _field(record, human, is_results)
        if not found:
            hint = ""
            if is_results:
                hint = f" (numeric extra fields: {_names(_numeric_fields(record)) or 'none'})"
            raise DataError(f"{where}: no human score field {clip(human)}{hint}")
        try:
            human_value = _number(raw)
        except ValueError:
            raise DataError(f"{where}: human score {clip(raw)} in {clip(human)} is not a number") from None
        if human_value is None:
            raise DataError(f"{where}: human score {clip(human)} is missing; label the item or drop it")
        if judge not in record:
            raise DataError(f"{where}: no judge score field {clip(judge)}; write null if unscored")
        try:
            judge_value = _number(record[judge])
        except ValueError:
            bad = record[judge]
            raise DataError(f"{where}: judge score {clip(bad)} in {clip(judge)} is not a number") from None
        if judge_value is None:
            reasons[str(record.get("unscored_reason") or "no reason given")] += 1
        if group is not None:
            found, gid = _field(record, group, is_results)
            if not found or gid is None or gid == "":
                raise DataError(f"{where}: group id {clip(group)} is missing")
            group_ids.append(str(gid))
        judge_scores.append(math.nan if judge_value is None else judge_value)
        human_scores.append(human_value)

    info = InputInfo(
        path=str(path), kind="results" if is_results else "table", metric=metric,
        judge_field=judge, human_field=human, group_field=group, unscored_reasons=dict(reasons),
    )  # fmt: skip
    return Pairs(
        judge=np.array(judge_scores, dtype=float),
        human=np.array(human_scores, dtype=float),
        groups=np.array(group_ids) if group is not None else None,
        info=info,
        judge_scale=(0.0, 1.0) if is_results and judge == "score" else None,
    )
