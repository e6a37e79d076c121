"""`evaluate_panel`: judge every case with every member of a panel, then pool their readings.

Each member runs the ordinary `evaluate` into a results file of its own beside the panel's
(`member_path`), so each member's run resumes as `eval` does and keeps everything it read; when
all are done, every case's readings are pooled (`pool`) and the panel records written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from localjudge.errors import ConfigError, repeated
from localjudge.io.cases import TestCase
from localjudge.io.jsonl import check_output_mode
from localjudge.judges.judge import Judge
from localjudge.kinds import Metric
from localjudge.panel.options import PanelOptions
from localjudge.panel.pool import pool_metric
from localjudge.panel.records import PANEL_RECORDS, PanelRecord
from localjudge.panel.summary import PanelSummary, summarise_panel
from localjudge.runs.evaluate import EvaluationResult, evaluate
from localjudge.runs.options import EvaluateKeywords, RunOptions, ScoringOptions, options_of

if TYPE_CHECKING:
    from typing_extensions import Unpack


class PanelResult(BaseModel):
    """The pooled records (cases × metrics, in input order), the summaries, and each member's own run."""

    model_config = ConfigDict(extra="forbid")

    records: list[PanelRecord] = Field(description="One pooled record per (case, metric).")
    summaries: list[PanelSummary] = Field(description="One summary per metric.")
    members: dict[str, EvaluationResult] = Field(description="Judge name -> that member's own evaluation.")


def member_path(out: str | Path, judge: str) -> Path:
    """A member's results file beside the panel's: panel.jsonl -> panel.<judge>.jsonl."""
    out = Path(out)
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", judge)
    return out.with_name(f"{out.stem}.{safe}{out.suffix or '.jsonl'}")


def evaluate_panel(
    cases: Sequence[TestCase],
    metrics: Sequence[Metric],
    judges: Sequence[Judge],
    panel: PanelOptions | None = None,
    *,
    run: RunOptions | None = None,
    scoring: ScoringOptions | None = None,
    **keywords: Unpack[EvaluateKeywords],
) -> PanelResult:
    """Judges every case with every metric by every judge, and pools the judges' readings.

    Args:
        cases: the test cases (ids unique).
        metrics: metrics of any kind.
        judges: two or more loaded judges, names distinct.
        panel: how the members are weighed (`PanelOptions`; default: the mean).
        run: where the pooled records go (`RunOptions`); each member's records go to
            `member_path(out, judge name)`.
        scoring: how each case is scored, by every member alike.
        **keywords: the fields of `run` and `scoring` (`EvaluateKeywords`), instead of the objects.

    Examples:
        >>> from localjudge import load_cases, load_judge, builtin_metric
        >>> judges = [load_judge(n) for n in ("smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b")]  # doctest: +SKIP
        >>> result = evaluate_panel(load_cases("cases.jsonl"), [builtin_metric("correctness")], judges,
        ...                         PanelOptions(method="agreement"), out="panel.jsonl")  # doctest: +SKIP
    """
    run, scoring = options_of(run, scoring, keywords, "evaluate_panel")
    panel = panel or PanelOptions()
    names = [j.info.name for j in judges]
    panel.check_members(len(names))
    if len(set(names)) != len(names):
        raise ConfigError(f"judge {repeated(names)} given twice; give each panel member once")
    run.check_output()
    paths = {n: member_path(run.out, n) if run.out is not None else None for n in names}
    for p in paths.values():
        if p is not None:
            check_output_mode(p, run.mode)
    if panel.weights is not None:  # refused before any judging
        for m in metrics:
            panel.weights.for_metric(m.name, names)
    own = {
        j.info.name: evaluate(
            cases, metrics, j, run=run.model_copy(update={"out": paths[j.info.name]}), scoring=scoring
        )
        for j in judges
    }
    metric_names = [s.metric for s in own[names[0]].summaries]  # components of hybrids included
    records: dict[tuple[str, str], PanelRecord] = {}
    summaries = []
    for metric in metric_names:
        columns = {n: [r for r in own[n].records if r.metric == metric] for n in names}
        pooled, chosen = pool_metric(columns, panel.method, panel.weights, panel.quorum)
        records |= {(r.case_id, metric): r for r in pooled}
        summaries.append(summarise_panel(pooled, chosen, panel.method))
    ordered = [records[(r.case_id, r.metric)] for r in own[names[0]].records]
    if run.out is not None:
        PANEL_RECORDS.replace(run.out, ordered)
    return PanelResult(records=ordered, summaries=summaries, members=own)
