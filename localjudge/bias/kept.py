"""Judging one item at a time into a file that a rerun continues: the lab's perplexity and recognition phases.

A phase's work units (responses, pairs of responses) belong to items; the file keeps each unit's record
as its item completes, so a killed run loses at most the item it was on and a rerun judges only the
units the file lacks, after checking the file was written by the same judge.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TypeVar

from localjudge.bias.records import LogpplRecord, RecognitionRecord
from localjudge.io.jsonl import RecordFile
from localjudge.judges.judge import Judge

Log = Callable[[str, str, float, int], None]
"""Called after each unit of judging: phase, item id ("-" for a whole phase), seconds, prompts."""

R = TypeVar("R", LogpplRecord, RecognitionRecord)
U = TypeVar("U")


def judge_by_item(
    judge: Judge,
    units: Sequence[U],
    judge_item: Callable[[str, list[U]], list[R]],
    *,
    records: RecordFile[R],
    path: Path | None,
    resume: bool,
    unit_key: Callable[[U], Hashable],
    record_key: Callable[[R], Hashable],
    item_of: Callable[[U], str],
    phase: str,
    prompts_per_unit: int = 1,
    log: Log | None = None,
) -> dict[Hashable, R]:
    """The record of every unit by its key: those `path` keeps (with `resume`), the rest judged item by item.

    Args:
        judge: The judge; a kept record written by another judge is refused (`check_same_judge`).
        units: The phase's work, items together.
        judge_item: Judges the missing units of one item (its id, the units), one record per unit in order.
        records: The file's record type.
        path: A file keeping the records as each item completes; None keeps nothing.
        resume: Continue `path` instead of starting it afresh.
        unit_key: A unit's key; `record_key` gives the same key for its record.
        record_key: See `unit_key`.
        item_of: The item a unit belongs to.
        phase: Its name in the log.
        prompts_per_unit: Prompts one unit takes, for the log.
        log: Called after each item.
    """
    done = records.read(path) if resume and path is not None and path.exists() else []
    for kept in done:
        judge.info.check_same_judge(kept.judge, str(path))
    have: dict[Hashable, R] = {record_key(kept): kept for kept in done}
    items: dict[str, list[U]] = {}
    for unit in units:
        if unit_key(unit) not in have:
            items.setdefault(item_of(unit), []).append(unit)
    keep = path is not None and bool(items)
    with records.open(path, "resume" if done else "overwrite") if keep and path else nullcontext() as out:
        for item_id, todo in items.items():
            start = time.perf_counter()
            for record in judge_item(item_id, todo):
                have[record_key(record)] = record
                if out is not None:
                    out.write(record)
            if log is not None:
                log(phase, item_id, time.perf_counter() - start, prompts_per_unit * len(todo))
    return have
