"""Scores one chunk of cases with one metric: prompts, reasoning modes, pairwise orders."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from localjudge import __version__
from localjudge.errors import ContextLengthError, clip
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.metrics import prompts as P
from localjudge.metrics.entailment import ENTAILMENT_TEMPLATE_VERSION, EntailmentMetric
from localjudge.metrics.likelihood import LIKELIHOOD_TEMPLATE_VERSION
from localjudge.metrics.pairwise_likelihood import PAIRWISE_LIKELIHOOD_VERSION, PairwiseLikelihoodMetric
from localjudge.metrics.spec import (
    GEvalMetric,
    HybridMetric,
    LikelihoodMetric,
    Metric,
    PairwiseMetric,
    ReferenceMetric,
    VerdictMetric,
)
from localjudge.runs.pairwise import score_pairwise
from localjudge.runs.records import ResultRecord, clean_float, unscored
from localjudge.runs.reference import REFERENCE_VERSION, score_reference
from localjudge.runs.verdict import VERDICT_VERSION
from localjudge.scoring.distribution import DEFAULT_MIN_VALID_MASS

HYBRID_VERSION = "hybrid-v1"
REASONING_TOKENS = 128
EXPLANATION_TOKENS = 64


@dataclass(frozen=True)
class MetricContext:
    """What is fixed for all cases of one metric in one run.

    Attributes:
        metric: the metric.
        steps: its evaluation steps (pinned or generated once).
        steps_source: "pinned", "cache" or "generated".
        hardened: whether the hardened template is used.
        truncate: cut over-long content to fit the context instead of failing.
        min_valid_mass: below this probability on valid scores (labels) a case is unscored.
    """

    metric: Metric
    steps: tuple[str, ...]
    steps_source: str | None
    hardened: bool = True
    truncate: bool = False
    min_valid_mass: float = DEFAULT_MIN_VALID_MASS

    @property
    def reads_distribution(self) -> bool:
        """Whether the metric reads a score (label) distribution, to which `min_valid_mass` applies."""
        return isinstance(self.metric, GEvalMetric | PairwiseMetric | EntailmentMetric)

    @property
    def template_version(self) -> str:
        if isinstance(self.metric, LikelihoodMetric):
            return LIKELIHOOD_TEMPLATE_VERSION
        if isinstance(self.metric, HybridMetric):
            return HYBRID_VERSION
        if isinstance(self.metric, VerdictMetric):
            return VERDICT_VERSION
        if isinstance(self.metric, ReferenceMetric):
            return REFERENCE_VERSION
        if isinstance(self.metric, EntailmentMetric):
            return ENTAILMENT_TEMPLATE_VERSION
        if isinstance(self.metric, PairwiseLikelihoodMetric):
            return PAIRWISE_LIKELIHOOD_VERSION
        return P.TEMPLATE_VERSION if self.hardened else P.PLAIN_TEMPLATE_VERSION


def missing_fields(metric: Metric, case: TestCase) -> list[str]:
    """Fields the metric needs that the case lacks."""
    if isinstance(metric, HybridMetric | VerdictMetric):
        return []  # each component reports its own missing fields
    needed = list(metric.output_fields) if isinstance(metric, PairwiseMetric) else metric.required_fields
    return [f for f in needed if case.get(f) is None]


def record_base(ctx: MetricContext, judge: Judge, case: TestCase) -> dict:
    """The fields every record of a case carries: ids, metric spec and provenance."""
    spec = ctx.metric.model_dump(mode="json")
    if isinstance(ctx.metric, GEvalMetric):
        spec["steps"] = list(ctx.steps)
    return dict(
        case_id=case.id,
        metric=ctx.metric.name,
        kind=ctx.metric.kind,
        threshold=ctx.metric.threshold,
        min_valid_mass=ctx.min_valid_mass if ctx.reads_distribution else None,
        extra=case.extra,
        judge=judge.info.model_dump(),
        metric_spec=spec,
        steps_source=ctx.steps_source,
        template_version=ctx.template_version,
        localjudge_version=__version__,
    )


def unscored_record(ctx: MetricContext, judge: Judge, case: TestCase, reason: str) -> ResultRecord:
    """A record with no score and the reason why (never 0, never a guess)."""
    return unscored(record_base(ctx, judge, case), reason)


def fit_prompt(judge: Judge, ctx: MetricContext, case: TestCase, render) -> tuple[TestCase, str, str | None]:
    """The case (cut under --truncate), its prompt and what was cut; fails when too long without --truncate."""
    prompt = render(case)
    n = judge.count_tokens(prompt)
    limit = judge.info.context_length
    if n <= limit:
        return case, prompt, None
    if not ctx.truncate:
        raise ContextLengthError(
            f"case {clip(case.id)}: the {ctx.metric.name} prompt has {n} tokens, more than the judge's "
            f"context of {limit}; shorten the case or pass --truncate"
        )
    notes, current = [], case
    for _ in range(8):  # shrink the longest text field until the prompt fits
        field = max(("input", "actual_output", "expected_output"), key=lambda f: len(current.get(f) or ""))
        text = current.get(field) or ""
        keep = int(len(text) * min(0.95, limit / n * 0.95))
        notes.append(f"{field} cut from {len(text)} to {keep} characters")
        current = current.model_copy(update={field: text[:keep]})
        prompt = render(current)
        n = judge.count_tokens(prompt)
        if n <= limit:
            return current, prompt, "; ".join(notes)
    raise ContextLengthError(f"case {clip(case.id)}: cannot truncate the {ctx.metric.name} prompt to {limit} tokens")


def score_chunk(judge: Judge, ctx: MetricContext, cases: Sequence[TestCase]) -> list[ResultRecord]:
    """Scores cases that have every field the metric needs; returns records in input order."""
    if isinstance(ctx.metric, PairwiseMetric):
        return score_pairwise(judge, ctx, cases, lambda case: record_base(ctx, judge, case))
    if isinstance(ctx.metric, LikelihoodMetric):
        from localjudge.runs.likelihood import score_likelihood

        return score_likelihood(judge, ctx, cases, lambda case: record_base(ctx, judge, case))
    if isinstance(ctx.metric, ReferenceMetric):
        return score_reference(ctx, cases, lambda case: record_base(ctx, judge, case))
    if isinstance(ctx.metric, EntailmentMetric):
        from localjudge.runs.entailment import score_entailment

        return score_entailment(judge, ctx, cases, lambda case: record_base(ctx, judge, case))
    if isinstance(ctx.metric, PairwiseLikelihoodMetric):
        from localjudge.runs.pairwise_likelihood import score_pairwise_likelihood

        return score_pairwise_likelihood(judge, ctx, cases, lambda case: record_base(ctx, judge, case))
    return _geval(judge, ctx, cases)


def _geval(judge: Judge, ctx: MetricContext, cases: Sequence[TestCase]) -> list[ResultRecord]:
    m = ctx.metric
    assert isinstance(m, GEvalMetric)  # score_chunk sends the other kinds elsewhere; evaluate scores hybrids
    before = m.reasoning == "before"

    def render(case: TestCase) -> str:
        user = P.user_message(m, list(ctx.steps), case, ctx.hardened, reasoning_first=before)
        return judge.render(P.SYSTEM, user, "Analysis:" if before else P.SCORE_PREFILL)

    fitted = [fit_prompt(judge, ctx, c, render) for c in cases]
    prompts = [p for _, p, _ in fitted]
    reasoning: list[str | None] = [None] * len(cases)
    if before:
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
    out = []
    for (case, prompt, cut), d, why in zip(fitted, dists, reasoning):
        out.append(
            ResultRecord(
                **record_base(ctx, judge, case),
                score=clean_float(d.normalized),
                raw_score=clean_float(d.expected),
                passed=None if not d.scored else d.normalized >= m.threshold,
                distribution={str(k): v for k, v in d.probs.items()} if d.valid_mass > 0 else None,
                valid_mass=d.valid_mass,
                mode=None if d.mode is None else str(d.mode),
                std=clean_float(d.std),
                unscored_reason=d.unscored_reason,
                reasoning=why,
                prompt_tokens=judge.count_tokens(prompt),
                truncated=cut,
            )
        )
    return out
