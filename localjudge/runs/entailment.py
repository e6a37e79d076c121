"""Scores one chunk of cases with an entailment metric: P(yes) per response or per sentence.

Per sentence, every sentence of the target is asked about (all of a case's prompts share its
source, hence one prefill) and the score is the least supported sentence's P(yes): one unsupported
claim makes the response unsupported. A case where any prompt puts less than `min_valid_mass` on
the two answers is unscored, with the reason and every reading taken.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.metrics.entailment import EntailmentMetric, entailment_prompt
from localjudge.runs.chunk import MetricContext, fit_prompt
from localjudge.runs.records import EntailmentDetail, ResultRecord, SentenceSupport, unscored
from localjudge.scoring.spans import split_sentences


def score_entailment(
    judge: Judge, ctx: MetricContext, cases: Sequence[TestCase], base: Callable[[TestCase], dict]
) -> list[ResultRecord]:
    """Records of cases that have every field the metric needs, in input order."""
    m = ctx.metric
    assert isinstance(m, EntailmentMetric)  # score_chunk's dispatch
    fitted = [
        fit_prompt(judge, ctx, c, lambda case: entailment_prompt(judge, m, case, _target(m, case))) for c in cases
    ]
    units = [_units(m, _target(m, case)) for case, _, _ in fitted]
    prompts = [entailment_prompt(judge, m, case, u) for (case, _, _), us in zip(fitted, units) for u in us]
    dists = iter(judge.score_labels(prompts, list(m.labels), min_valid_mass=ctx.min_valid_mass))
    yes, _ = m.labels
    out = []
    for (case, prompt, cut), us in zip(fitted, units):
        fields: dict[str, Any] = dict(prompt_tokens=judge.count_tokens(prompt), truncated=cut)
        if not us:
            out.append(unscored(base(case), f"the {m.target} is blank", **fields))
            continue
        ds = [next(dists) for _ in us]
        read = [
            SentenceSupport(text=u, p_yes=d.probs[yes] if d.valid_mass > 0 else None, valid_mass=d.valid_mass)
            for u, d in zip(us, ds)
        ]
        detail = EntailmentDetail(unit=m.unit, sentences=read)
        mass = min(d.valid_mass for d in ds)
        bad = next((k for k, d in enumerate(ds) if not d.scored), None)
        if bad is not None:
            where = "" if m.unit == "response" else f" (sentence {bad + 1} of {len(us)})"
            out.append(
                unscored(base(case), f"{ds[bad].unscored_reason}{where}", valid_mass=mass, entailment=detail, **fields)
            )
            continue
        worst = min(range(len(us)), key=lambda k: ds[k].probs[yes])
        p = ds[worst].probs[yes]
        out.append(
            ResultRecord(
                **base(case),
                score=p,
                raw_score=p,
                passed=None if m.threshold is None else p >= m.threshold,
                distribution=dict(ds[worst].probs),
                valid_mass=mass,
                mode=ds[worst].mode,
                entailment=detail,
                **fields,
            )
        )
    return out


def _target(m: EntailmentMetric, case: TestCase) -> str:
    return str(case.get(m.target) or "").strip()


def _units(m: EntailmentMetric, text: str) -> list[str]:
    """What is asked about: the whole target, or each of its sentences (none when it is blank)."""
    if not text:
        return []
    return [text] if m.unit == "response" else (split_sentences(text) or [text])
