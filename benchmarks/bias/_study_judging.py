"""The self-preference study's judging: the bias lab's own pipeline (`localjudge.bias.judging`), per task.

Per judge and task, four phases, each kept in records/ as it goes (a killed run resumes where it
stopped), all run by `judge_responses`:

- pointwise: the task's G-Eval metric (probability-weighted score) on every response, through
  `evaluate` (records/<judge>.<metric>.jsonl);
- logppl: the judge's mean NLL per token of every response given the prompt that produced it,
  the perplexity covariate of Wataoka et al. 2024, one item at a time (records/<judge>.logppl.jsonl);
- pairwise: every pair of an item's responses (`pairs="all"`: same family too), both orders,
  through `evaluate` (records/<judge>.<pairwise metric>.jsonl);
- recognition: "which one did you write?" on the pairs that hold the judge's own response, both
  orders, read from the probabilities of the labels A and B, one item at a time
  (`bias.recognition`, records/<judge>.recognition.jsonl).

Summaries are judged against their article (the prompt's `article` field), not the instruction;
answers against their prompt, with its reference as the expected output. Pairs are (A, B) by
generator name; both orders are asked, so the assignment does not matter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from localjudge.bias.cases import by_item
from localjudge.bias.judging import judge_responses
from localjudge.bias.recognition import Recognition
from localjudge.bias.records import PairwiseRecord, PointwiseRecord
from localjudge.bias.records_folder import RecordsFolder
from localjudge.errors import DataError
from localjudge.judges.judge import Judge
from localjudge.kinds.geval.spec import GEvalMetric
from localjudge.kinds.pairwise import PairwiseMetric
from localjudge.runs.generation import ResponseRecord
from localjudge.runs.options import RunOptions, ScoringOptions

Log = Callable[[str, str, str, str, float, int], None]  # phase, task, judge, item, seconds, prompts


@dataclass(frozen=True)
class Task:
    """One half of the study: its items' responses and how they are judged."""

    name: Literal["summaries", "answers"]
    metric: GEvalMetric
    pair_metric: PairwiseMetric
    noun: str  # what the responses are, for the recognition prompt
    source_label: str  # heading of what they respond to

    @property
    def source_field(self) -> str | None:
        """The prompts' field a response is judged against: the article (not the instruction), or the prompt."""
        return "article" if self.name == "summaries" else None

    @property
    def recognition(self) -> Recognition:
        return Recognition(noun=self.noun, source_label=self.source_label)


def _in_items(responses: Sequence[ResponseRecord]) -> list[ResponseRecord]:
    """Item by item (first seen first), generators by name: the order of every records file."""
    return [r for item in by_item(responses).values() for r in item]


def kept(task: Task, judge: str, responses: Sequence[ResponseRecord], rdir: Path) -> RecordsFolder:
    """This judge's records of one task, as `judge_task` keeps them."""
    return RecordsFolder(rdir, judge, _in_items(responses), task.metric, task.pair_metric, "all", recognition=True)


def pending(task: Task, judge: str, responses: Sequence[ResponseRecord], rdir: Path) -> dict[str, int]:
    """Records each phase still lacks for this judge (all 0 when everything is on disk)."""
    return kept(task, judge, responses, rdir).missing()


def judge_task(judge: Judge, task: Task, responses: Sequence[ResponseRecord], rdir: Path, log: Log) -> None:
    """Runs every phase still pending for this judge on one task, keeping its records as it goes."""
    name = judge.info.name
    judge_responses(
        judge,
        _in_items(responses),
        task.metric,
        task.pair_metric,
        records_dir=rdir,
        run=RunOptions(resume=True, progress=False),
        scoring=ScoringOptions(),
        pairs="all",
        source_field=task.source_field,
        recognition=task.recognition,
        log=lambda phase, item, seconds, prompts: log(phase, task.name, name, item, seconds, prompts),
    )


def lab_judgments(
    task: Task, responses: Sequence[ResponseRecord], rdir: Path, judges: Sequence[str], human_field: str
) -> tuple[list[PointwiseRecord], list[PairwiseRecord], list[PairwiseRecord], list[dict[str, Any]]]:
    """The bias lab's records from the files on disk: pointwise, pairwise, recognition, and each judge's info.

    Raises:
        DataError: A judge's records lack a unit (the study has not finished: run it again).
    """
    point: list[PointwiseRecord] = []
    pair: list[PairwiseRecord] = []
    recog: list[PairwiseRecord] = []
    infos = []
    for judge in judges:
        try:
            v = kept(task, judge, responses, rdir).judgments(human_field)
        except DataError as exc:
            raise DataError(f"{task.name}: {exc}; run the study again without --analyse-only") from None
        point += v.pointwise
        pair += v.pairwise
        recog += v.recognition
        infos.append(v.judge.model_dump())
    return point, pair, recog, infos


__all__ = ["Task", "judge_task", "lab_judgments", "pending"]
