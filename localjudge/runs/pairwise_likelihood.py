"""Scores one chunk of cases with a pairwise likelihood metric: each output read alone, then compared."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from localjudge.errors import ContextLengthError, clip
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.metrics.pairwise_likelihood import PairwiseLikelihoodMetric, condition_prompts
from localjudge.runs.chunk import MetricContext
from localjudge.runs.records import ResultRecord, unscored
from localjudge.scoring.aggregate import read_tokens
from localjudge.scoring.likelihood import ContinuationLogprobs


def score_pairwise_likelihood(
    judge: Judge, ctx: MetricContext, cases: Sequence[TestCase], base: Callable[[TestCase], dict]
) -> list[ResultRecord]:
    """Records of cases that have both outputs, in input order; `base(case)` gives provenance fields."""
    m = ctx.metric
    assert isinstance(m, PairwiseLikelihoodMetric)  # score_chunk's dispatch
    read = [condition_prompts(judge, m, c) for c in cases]
    for case, (prompt, _, conts) in zip(cases, read):
        n = judge.count_tokens(prompt) + max(len(judge.backend.encode_continuation(c)) for c in conts)
        if n > judge.info.context_length:
            raise ContextLengthError(
                f"case {clip(case.id)}: the {m.name} prompt and the longer output have {n} tokens, more than the "
                f"judge's context of {judge.info.context_length}; shorten the case"
            )
    prompts = [p for p, _, conts in read for _ in conts]
    conts = [c for _, _, cs in read for c in cs]
    given = judge.loglikelihood(prompts, conts)
    without = None
    if m.pmi is not None:
        contrasts = [w for _, w, cs in read for _ in cs]
        assert all(w is not None for w in contrasts)  # a PMI metric always has its contrast prompt
        without = judge.loglikelihood([str(w) for w in contrasts], conts)
    surfaces = judge.backend.token_surfaces()
    f1, f2 = m.output_fields
    out = []
    for k, case in enumerate(cases):
        values = [
            _reading(m, given[2 * k + o], None if without is None else without[2 * k + o], surfaces) for o in (0, 1)
        ]
        pair = {f1: values[0], f2: values[1]}
        blank = [f for f, c in zip(m.output_fields, read[k][2]) if not c.strip()]
        if blank or not all(math.isfinite(v) for v in values):
            why = f"{blank[0]} is blank" if blank else "a reading of an output is not finite"
            out.append(unscored(base(case), why, prompt_tokens=judge.count_tokens(read[k][0])))
            continue
        raw = values[0] - values[1]
        # the same operations for a pair and its swap: swapping the outputs gives exactly 1 - p
        p = 1 / (1 + math.exp(-raw)) if raw >= 0 else 1 - 1 / (1 + math.exp(raw))
        out.append(
            ResultRecord(
                **base(case),
                score=p,
                raw_score=raw,
                passed=None if m.threshold is None else p >= m.threshold,
                distribution={f1: p, f2: 1 - p},
                valid_mass=None,
                mode=f1 if raw > 0 else f2 if raw < 0 else None,
                pair=pair,
                prompt_tokens=judge.count_tokens(read[k][0]),
            )
        )
    return out


def _reading(
    m: PairwiseLikelihoodMetric,
    given: ContinuationLogprobs,
    without: ContinuationLogprobs | None,
    surfaces: list[str],
) -> float:
    """One output's aggregate of its token log-probabilities (or per-token PMI); NaN for an empty output."""
    if not given.n_tokens:
        return math.nan
    values = np.array(given.logprobs)  # (T,)
    if without is not None:
        values = values - np.array(without.logprobs)
    lm = m.as_likelihood()
    return read_tokens(
        values,
        [surfaces[i] for i in given.token_ids],
        lm.aggregation,
        unit=lm.unit,
        focus=lm.focus,
        quantile=lm.quantile,
        below=lm.below,
    ).value
