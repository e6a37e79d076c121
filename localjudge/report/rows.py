"""The rows a report shows: one per case, metric and judge, read from `eval`, panel and rank files alike.

Every file `eval` writes (`ResultRecord`), a panel's (`PanelRecord`) and `rank`'s (`RankRecord`) is
read through its own validated model; a row keeps what the page shows of it and nothing is
recomputed: scores, distributions, valid mass and unscored reasons are the records' own.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localjudge.errors import DataError, clip

if TYPE_CHECKING:
    from localjudge.kinds.records import ResultRecord


@dataclass(frozen=True)
class Row:
    """One judgment of one case by one metric, as the page shows it."""

    case_id: str
    metric: str
    judge: str  # the judge's name; a panel's members joined; "rank" for rank files
    kind: str
    source: str  # the file it was read from
    score: float | None  # 0-1; None when unscored
    raw_score: float | None
    distribution: dict[str, float] | None
    valid_mass: float | None  # panel: the lowest of its members'
    outcome: str  # "pass", "fail", "unscored", "rank 2/16" or "" (no threshold)
    unscored_reason: str | None
    extra: dict[str, Any]
    detail: dict[str, Any] = field(default_factory=dict)  # reasoning, panel members, rank intervals


@dataclass(frozen=True)
class Run:
    """The rows of one results file and what produced them."""

    path: str
    kind: str  # "eval", "panel" or "rank"
    rows: list[Row]
    versions: list[str]  # localjudge versions that wrote it


def _outcome(passed: bool | None, score: float | None) -> str:
    if score is None:
        return "unscored"
    return "" if passed is None else ("pass" if passed else "fail")


def _first_record(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                try:
                    first = json.loads(line)
                except json.JSONDecodeError:
                    break
                if isinstance(first, dict):
                    return first
                break
    raise DataError(f"{path}: not a localjudge results file (no JSON record on its first line); pass what eval wrote")


def read_run(path: str | Path) -> Run:
    """Reads one results file of `eval` (one judge or a panel) or of `rank`.

    Raises:
        DataError: The file holds no records, or records of none of these kinds.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such results file; pass the file `localjudge eval --out` wrote")
    first = _first_record(path)
    if first.get("kind") == "rank":
        return _rank_run(path)
    if "members" in first:
        return _panel_run(path)
    if "judge" in first:
        return _eval_run(path)
    raise DataError(
        f"{path}: its first record has none of the keys of eval, panel or rank records ({clip(', '.join(first))}); "
        "pass a file that localjudge eval or rank wrote"
    )


def _eval_run(path: Path) -> Run:
    from localjudge.runs.results_file import read_results

    return eval_run(read_results(path), str(path))


def eval_run(records: Iterable[ResultRecord], source: str) -> Run:
    """The rows of `eval`'s records (read from a file, or a run's own), under the name `source`."""
    rows = []
    versions: Counter[str] = Counter()
    for r in records:
        versions[r.localjudge_version] += 1
        detail: dict[str, Any] = {}
        if r.reasoning:
            detail["reasoning"] = r.reasoning
        if r.truncated:
            detail["truncated"] = r.truncated
        rows.append(
            Row(
                case_id=r.case_id,
                metric=r.metric,
                judge=str(r.judge.get("name", "unnamed judge")),
                kind=r.kind,
                source=source,
                score=r.score,
                raw_score=r.raw_score,
                distribution=r.distribution,
                valid_mass=r.valid_mass,
                outcome=_outcome(r.passed, r.score),
                unscored_reason=r.unscored_reason,
                extra=r.extra,
                detail=detail,
            )
        )
    return Run(source, "eval", rows, list(versions))


def _panel_run(path: Path) -> Run:
    from localjudge.panel.records import PANEL_RECORDS

    rows = []
    versions: Counter[str] = Counter()
    for r in PANEL_RECORDS.read(path):
        versions[r.localjudge_version] += 1
        masses = [m.valid_mass for m in r.members if m.valid_mass is not None]
        members = [m.model_dump(exclude={"distribution"}) for m in r.members]
        rows.append(
            Row(
                case_id=r.case_id,
                metric=r.metric,
                judge=f"panel ({r.method}): " + "+".join(m.judge for m in r.members),
                kind=r.kind,
                source=str(path),
                score=r.score,
                raw_score=r.raw_score,
                distribution=r.distribution,
                valid_mass=min(masses) if masses else None,
                outcome=_outcome(r.passed, r.score),
                unscored_reason=r.unscored_reason,
                extra=r.extra,
                detail={"members": members, "spread": r.spread},
            )
        )
    return Run(str(path), "panel", rows, list(versions))


def _rank_run(path: Path) -> Run:
    from localjudge.io.jsonl import RecordFile
    from localjudge.rank.records import RankRecord

    rows = []
    for r in RecordFile(RankRecord, "localjudge rank record", "rank file").read(path):
        ranked = f"rank {r.rank}/{r.group_size}" if r.rank is not None else "unscored"
        rows.append(
            Row(
                case_id=r.case_id,
                metric=r.metric,
                judge="rank",
                kind="rank",
                source=str(path),
                score=r.score,
                raw_score=r.raw_score,
                distribution=None,
                valid_mass=None,
                outcome=ranked,
                unscored_reason=r.unscored_reason,
                extra=r.extra,
                detail={
                    "group": r.group,
                    "score interval": [r.score_low, r.score_high],
                    "rank interval": [r.rank_low, r.rank_high],
                    "comparisons": len(r.comparisons),
                },
            )
        )
    return Run(str(path), "rank", rows, [])


def label_judges(runs: list[Run]) -> list[Run]:
    """Runs whose judge names are told apart: a judge named in two files is named with its file's stem too.

    Two runs of one judge (say, before and after a change of prompt) are then two columns of the page.
    """
    files_of: dict[str, set[str]] = {}
    for run in runs:
        for judge in {r.judge for r in run.rows}:
            files_of.setdefault(judge, set()).add(run.path)
    relabelled = []
    for run in runs:
        stem = Path(run.path).stem
        rows = [r if len(files_of[r.judge]) == 1 else _with_judge(r, f"{r.judge} · {stem}") for r in run.rows]
        relabelled.append(Run(run.path, run.kind, rows, run.versions))
    return relabelled


def _with_judge(row: Row, judge: str) -> Row:
    return replace(row, judge=judge)
