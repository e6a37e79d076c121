"""`rank_outputs`: rank the outputs of each group from pairwise comparisons, round by round, resumable.

Each round asks `adaptive` for every group's next pairs, judges them all together through
`evaluate` (the pairwise kind: both presentation orders, the run's scoring options) into the
comparisons file, and refits. A rerun with --resume replays the rounds from the comparisons
already in that file: the same readings give the same choices, so only the missing comparisons
are judged, and a larger budget only adds comparisons. When the rounds are done, each output's
record (score, rank, intervals, the comparisons it took part in) is written to the rank file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from localjudge.errors import ConfigError, DataError, clip, repeated
from localjudge.io.cases import TestCase
from localjudge.io.jsonl import check_output_mode
from localjudge.judges.judge import Judge
from localjudge.kinds import Metric, kind_of
from localjudge.kinds.records import ResultRecord
from localjudge.rank.adaptive import Pair, group_seed, next_round, pair_budget
from localjudge.rank.bradley_terry import fit_strengths, ranks, win_scores
from localjudge.rank.intervals import item_intervals
from localjudge.rank.options import RankOptions
from localjudge.rank.records import RANKS, ComparisonReading, RankRecord
from localjudge.rank.summary import RankSummary, summarise_ranks
from localjudge.runs.evaluate import evaluate
from localjudge.runs.options import EvaluateKeywords, RunOptions, ScoringOptions, options_of
from localjudge.version import __version__

if TYPE_CHECKING:
    from typing_extensions import Unpack


class RankResult(BaseModel):
    """Every output's record, in input order, the comparisons made, and the summary."""

    model_config = ConfigDict(extra="forbid")

    records: list[RankRecord] = Field(description="One record per output, in input order.")
    comparisons: list[ResultRecord] = Field(description="Every comparison made, in the order made.")
    summary: RankSummary = Field(description="What was compared; the system-level ranking.")


def comparisons_path(out: str | Path) -> Path:
    """The comparisons file beside a rank file: ranks.jsonl -> ranks.comparisons.jsonl."""
    out = Path(out)
    return out.with_name(out.stem + ".comparisons" + (out.suffix or ".jsonl"))


def rank_outputs(
    cases: Sequence[TestCase],
    metric: Metric,
    judge: Judge,
    ranking: RankOptions,
    *,
    run: RunOptions | None = None,
    scoring: ScoringOptions | None = None,
    **keywords: Unpack[EvaluateKeywords],
) -> RankResult:
    """Ranks the outputs of each group by comparing them in pairs with a pairwise metric.

    Args:
        cases: one case per output (ids unique); `ranking.group` names the field grouping them,
            `ranking.output_field` the field holding the output; the cases of a group share
            their `input`.
        metric: a metric that compares two outputs (kind pairwise, or pairwise_likelihood).
        judge: a loaded judge.
        ranking: group field, budget per output, system field (`RankOptions`).
        run: where the ranks go (`RunOptions`: out, resume, overwrite, progress); the
            comparisons stream to `comparisons_path(out)`.
        scoring: how each comparison is scored (`ScoringOptions`).
        **keywords: the fields of `run` and `scoring` (`EvaluateKeywords`), instead of the objects.

    Examples:
        >>> from localjudge import load_cases, load_judge, builtin_metric
        >>> result = rank_outputs(load_cases("answers.jsonl"), builtin_metric("pairwise"), load_judge(),
        ...                       RankOptions(group="prompt_id", system="model"), out="ranks.jsonl")  # doctest: +SKIP
        >>> result.summary.systems[0].system  # doctest: +SKIP
    """
    run, scoring = options_of(run, scoring, keywords, "rank_outputs")
    if len(kind_of(metric).outputs_read(metric)) != 2:
        raise ConfigError(
            f"metric {clip(metric.name)} ({metric.kind}) does not compare two outputs; give a pairwise one"
        )
    groups = _groups(cases, ranking)
    run.check_output()
    cmp_path = comparisons_path(run.out) if run.out is not None else None
    if cmp_path is not None:
        check_output_mode(cmp_path, run.mode)
    f1, f2 = kind_of(metric).outputs_read(metric)
    asked: dict[str, list[Pair]] = {g: [] for g in groups}
    read: dict[tuple[str, Pair], ResultRecord] = {}
    made: list[ResultRecord] = []
    first = True
    while True:
        todo = {g: p for g in groups if (p := _next(g, groups[g], asked[g], read, ranking))}
        if not todo:
            break
        pair_cases, keys = [], []
        for g, pairs in todo.items():
            for i, j in pairs:
                pair_cases.append(_pair_case(groups[g], i, j, f1, f2, ranking))
                keys.append((g, (i, j)))
            asked[g] += pairs
        # later rounds append to the comparisons file the first one opened (none without `out`)
        mode = {"resume": run.resume, "overwrite": run.overwrite} if first else {"resume": cmp_path is not None}
        step = RunOptions(out=cmp_path, progress=run.progress, **mode)
        result = evaluate(pair_cases, [metric], judge, run=step, scoring=scoring)
        first = False
        for key, rec in zip(keys, result.records, strict=True):
            read[key] = rec
            made.append(rec)
    records = [r for g in groups for r in _group_records(g, groups[g], asked[g], read, metric, judge, ranking)]
    order = {c.id: k for k, c in enumerate(cases)}
    records.sort(key=lambda r: order[r.case_id])
    if run.out is not None:
        check_output_mode(run.out, run.mode)
        RANKS.replace(run.out, records)
    summary = summarise_ranks(
        records, made, metric=metric.name, budget=ranking.budget, system=ranking.system, level=ranking.level,
        seed=ranking.seed,
    )  # fmt: skip
    return RankResult(records=records, comparisons=made, summary=summary)


def _groups(cases: Sequence[TestCase], ranking: RankOptions) -> dict[str, list[TestCase]]:
    """The cases of each group, groups and members in input order; every check before any judging."""
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"case ids repeated: {repeated(ids)}; give every case a unique id")
    groups: dict[str, list[TestCase]] = {}
    for c in cases:
        g = c.get(ranking.group)
        if g is None:
            raise DataError(f"case {clip(c.id)} has no {clip(ranking.group)}; give every output a group")
        if c.get(ranking.output_field) is None:
            raise DataError(f"case {clip(c.id)} has no {clip(ranking.output_field)}; pass --output-field")
        groups.setdefault(str(g), []).append(c)
    for g, members in groups.items():
        inputs = {m.get("input") for m in members}
        if len(inputs) > 1:
            raise DataError(
                f"the outputs of group {clip(g)} answer different inputs; a group's cases must share their input"
            )
    return groups


def _reading(rec: ResultRecord) -> float | None:
    """P(output 1 better) of a comparison, a tie counting half; None when unscored."""
    if rec.score is None:
        return None
    return rec.score + (rec.distribution or {}).get("tie", 0.0) / 2


def _next(g: str, members: list[TestCase], asked: list[Pair], read: dict, ranking: RankOptions) -> list[Pair]:
    seen = [(p, y) for p in asked if (y := _reading(read[(g, p)])) is not None]
    return next_round(
        len(members),
        pair_budget(len(members), ranking.budget),
        asked,
        [p for p, _ in seen],
        [y for _, y in seen],
        [1.0] * len(seen),  # the two orders' mean is one reading: the orders are not independent evidence
        group_seed(g, ranking.seed),
    )


def _pair_case(members: list[TestCase], i: int, j: int, f1: str, f2: str, ranking: RankOptions) -> TestCase:
    a, b = members[i], members[j]
    return TestCase(
        id=f"{a.id}|{b.id}",
        input=a.input,
        extra={
            f1: str(a.get(ranking.output_field)),
            f2: str(b.get(ranking.output_field)),
            ranking.group: a.get(ranking.group),
        },
    )


def _group_records(
    g: str,
    members: list[TestCase],
    asked: list[Pair],
    read: dict[tuple[str, Pair], ResultRecord],
    metric: Metric,
    judge: Judge,
    ranking: RankOptions,
) -> list[RankRecord]:
    """Each output's record: the fit over the outputs with at least one scored comparison."""
    n = len(members)
    took: list[list[ComparisonReading]] = [[] for _ in range(n)]
    for i, j in asked:
        rec = read[(g, (i, j))]
        y = _reading(rec)
        took[i].append(ComparisonReading(other=members[j].id, comparison=rec.case_id, p_better=y))
        took[j].append(
            ComparisonReading(other=members[i].id, comparison=rec.case_id, p_better=None if y is None else 1 - y)
        )
    scored = [k for k in range(n) if any(c.p_better is not None for c in took[k])]
    at = {k: s for s, k in enumerate(scored)}  # index among the scored outputs
    observed = [(at[i], at[j], y) for i, j in asked if (y := _reading(read[(g, (i, j))])) is not None]
    fit = fit_strengths(
        len(scored),
        np.array([(i, j) for i, j, _ in observed], dtype=np.int64).reshape(-1, 2),
        np.array([y for _, _, y in observed]),
    )
    scores, rk = win_scores(fit.theta), ranks(fit.theta)
    iv = item_intervals(fit, ranking.level, seed=group_seed(g, ranking.seed)) if scored else None
    out = []
    for k, case in enumerate(members):
        common: dict[str, Any] = dict(
            case_id=case.id, metric=metric.name, group=g, group_size=len(scored), level=ranking.level,
            comparisons=took[k], budget=ranking.budget, extra=case.extra, judge=judge.info.model_dump(mode="json"),
            metric_spec=metric.model_dump(mode="json"), localjudge_version=__version__,
        )  # fmt: skip
        if k not in at:
            reason = (
                "its group has no other output to compare it with"
                if n < 2
                else f"none of its {len(took[k])} comparisons was scored"
            )
            out.append(RankRecord(**common, score=None, raw_score=None, rank=None, score_low=None, score_high=None,
                                  rank_low=None, rank_high=None, unscored_reason=reason))  # fmt: skip
            continue
        s = at[k]
        assert iv is not None
        out.append(
            RankRecord(
                **common,
                score=float(scores[s]),
                raw_score=float(fit.theta[s]),
                rank=int(rk[s]),
                score_low=float(iv.score_low[s]),
                score_high=float(iv.score_high[s]),
                rank_low=int(iv.rank_low[s]),
                rank_high=int(iv.rank_high[s]),
            )
        )
    return out
