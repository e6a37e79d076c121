"""The G-Eval kind: a score read from the judge's distribution over the scale, after task, criteria and steps.

The prompt (`kinds.geval.prompts`) ends in the judge's turn right after "Score:"; the score is
the expected value of the judge's probabilities of every valid score, normalised to 0-1. With
`reasoning: before` the judge first writes an analysis (cut at its own "Score", never read for a
number) and the score is read after it; with `after`, it explains its most probable score once
the score has been read. Evaluation steps are pinned in the metric or generated once per
(judge, definition) and cached (`kinds.geval.steps`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from localjudge.errors import ConfigError, clip
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds.base import (
    CaseBatch,
    Explanation,
    Listing,
    Measure,
    MetricContext,
    MetricKind,
    Needs,
    Prepared,
    narrow_spread,
)
from localjudge.kinds.geval import prompts as P
from localjudge.kinds.geval.spec import GEvalMetric
from localjudge.kinds.geval.steps import resolve_steps
from localjudge.kinds.records import ResultRecord
from localjudge.kinds.text import template_version
from localjudge.kinds.training import LabelKind, Outcomes, TrainingExample, soft_target
from localjudge.stats.numbers import finite

log = logging.getLogger("localjudge")

REASONING_TOKENS = 128
EXPLANATION_TOKENS = 64
NARROW_SPREAD = 0.15
"""Scores of a bounded metric spanning less than this share of the 0-1 scale do not separate cases."""
LOW_VALID_MASS = 0.5
"""Below this mean valid mass the judge is mostly not answering with a score at all."""
TOP = 3
"""Most probable scores an explanation names."""


class GEvalKind(MetricKind[GEvalMetric]):
    """Scores read from the judge's probabilities of every valid score (see the module docstring)."""

    name = "geval"
    has_steps = True
    spec = GEvalMetric
    reads_distribution = True

    def needs(self, metric: GEvalMetric) -> Needs:
        # neighbours share their leading fields (an article's summaries), hence a prompt prefix
        return Needs(required=metric.required_fields, sort_by=list(metric.fields))

    def prepare(self, judge: Judge, metric: GEvalMetric, hardened: bool, steps_cache: Path | None) -> Prepared:
        gaps = metric.rubric_gaps()
        if gaps:
            log.warning("metric %s: rubric covers no range for scores %s", metric.name, gaps)
        steps, source = resolve_steps(judge, metric, steps_cache)
        spec = metric.model_dump(mode="json")
        spec["steps"] = list(steps)
        return Prepared(template_version(hardened), spec, tuple(steps), source)

    def measure(self, judge: Judge, ctx: MetricContext[GEvalMetric], case: TestCase) -> Measure:
        m = ctx.metric
        before = m.reasoning == "before"
        user = P.user_message(m, list(ctx.prepared.steps), case, ctx.hardened, reasoning_first=before)
        prompt = judge.render(P.SYSTEM, user, "Analysis:" if before else P.SCORE_PREFILL)
        cuttable = ["input", "actual_output", "expected_output"]
        return Measure(judge.count_tokens(prompt), f"the {m.name} prompt has", cuttable, prompt)

    def score(self, batch: CaseBatch[GEvalMetric]) -> list[ResultRecord]:
        judge, ctx, items = batch.judge, batch.ctx, batch.items
        m = ctx.metric
        prompts: list[str] = [it.payload for it in items]
        reasoning: list[str | None] = [None] * len(items)
        if m.reasoning == "before":
            analyses = judge.generate(prompts, REASONING_TOKENS, share_prefix=True)  # the metric's instructions once
            # never read a score from the middle of the reasoning: cut it at its own "Score"
            cut_reasoning = [a.split("Score")[0].rstrip() for a in analyses]
            prompts = [p + r + "\n" + P.SCORE_PREFILL for p, r in zip(prompts, cut_reasoning)]
            reasoning = list(cut_reasoning)
        dists = judge.score_texts(prompts, m.low, m.high, min_valid_mass=ctx.min_valid_mass)
        if m.reasoning == "after":
            follow = [p + f" {d.mode}\nExplanation:" for p, d in zip(prompts, dists)]
            explained = judge.generate(follow, EXPLANATION_TOKENS, share_prefix=True)
            reasoning = [e.strip() if d.scored else None for e, d in zip(explained, dists)]
        return [
            ctx.record(
                judge,
                it.case,
                finite(d.normalized),
                raw_score=finite(d.expected),
                unscored_reason=d.unscored_reason,
                distribution={str(k): v for k, v in d.probs.items()} if d.valid_mass > 0 else None,
                valid_mass=d.valid_mass,
                mode=None if d.mode is None else str(d.mode),
                std=finite(d.std),
                reasoning=why,
                prompt_tokens=judge.count_tokens(prompt),
                truncated=it.cut,
            )
            for it, prompt, d, why in zip(items, prompts, dists, reasoning)
        ]

    def notes(
        self, scores: Sequence[float], mean_valid_mass: float | None, has_threshold: bool, flipped: int
    ) -> list[str]:
        notes = narrow_spread(scores, NARROW_SPREAD)
        if mean_valid_mass is not None and mean_valid_mass < LOW_VALID_MASS:
            notes.append(
                f"only {mean_valid_mass:.0%} of the judge's probability went to valid scores on average: "
                "it is mostly not answering with a score"
            )
        return notes

    def describe(self, metric: GEvalMetric) -> Listing:
        return Listing(f"{metric.low}-{metric.high}", ", ".join(metric.fields))

    # -- learning from ratings: the rating spread over the two nearest scores, read back as the expected score

    trainable = True

    def label_kind(self, metric: GEvalMetric) -> LabelKind:
        return "rating"

    def label_scale(self, metric: GEvalMetric) -> tuple[float, float]:
        return (metric.low, metric.high)

    def check_trainable(self, metric: GEvalMetric) -> None:
        if metric.reasoning == "before":
            raise ConfigError(
                f"metric {clip(metric.name)} reads its score after generated reasoning; tune it with reasoning "
                "'none' or 'after' (the score is read at the same place)"
            )

    def outcomes(self, judge: Judge, metric: GEvalMetric) -> Outcomes:
        return Outcomes(judge.score_tree(metric.low, metric.high), self.outcome_values(metric))

    def outcome_values(self, metric: GEvalMetric) -> np.ndarray:
        return np.arange(metric.low, metric.high + 1, dtype=np.float64)

    def training_examples(self, metric: GEvalMetric, payload: Any, label: float) -> list[TrainingExample]:
        return [TrainingExample(payload, soft_target(label, metric.low, metric.high))]

    def explain(self, record: ResultRecord) -> Explanation:
        score, raw, spec = record.score, record.raw_score, record.metric_spec
        low, high = spec["low"], spec["high"]
        if score is None or raw is None:
            return Explanation("" if score is None else f"score {score:.3f}", raw, (low, high))
        ranked = sorted((record.distribution or {}).items(), key=lambda kv: -kv[1])
        top = [kv for kv in ranked[:TOP] if kv[1] >= 0.005] or ranked[:1]  # not a list of zeros
        probable = ", ".join(f"{s} ({p:.2f})" for s, p in top)
        mass = f"; valid mass {record.valid_mass:.2f}" if record.valid_mass is not None else ""
        how = (
            f"expected score {raw:.2f} on {low}..{high}, score ({raw:.2f} - {low}) / {high - low} = {score:.3f}; "
            f"most probable: {probable}{mass}"
        )
        return Explanation(how, raw, (low, high))


GEVAL = GEvalKind()
