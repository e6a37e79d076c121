"""Scores one chunk of cases with a reference metric: overlap with the reference, no model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from localjudge.io.cases import TestCase
from localjudge.lexical import rouge_l, tokens
from localjudge.metrics.spec import ReferenceMetric
from localjudge.runs.records import ResultRecord, unscored

if TYPE_CHECKING:
    from localjudge.runs.chunk import MetricContext

REFERENCE_VERSION = "rouge-l-v1"
"""Version of the overlap measure (tokenisation of `localjudge.lexical`), recorded as the template version."""


def score_reference(
    ctx: MetricContext, cases: Sequence[TestCase], base: Callable[[TestCase], dict]
) -> list[ResultRecord]:
    """Records of cases that have the target and the reference, in input order.

    raw_score = score = ROUGE-L F1 in [0, 1]. A field with no token to compare (ROUGE-L reads
    ASCII letters and digits, as rouge-score does) is unscored with the reason, not scored 0.
    """
    m = ctx.metric
    assert isinstance(m, ReferenceMetric)  # score_chunk's dispatch
    out = []
    for case in cases:
        target, reference = _text(case.get(m.target)), _text(case.get(m.reference))
        blank = [f for f, t in ((m.target, target), (m.reference, reference)) if not tokens(t)]
        if blank:
            reason = f"the {blank[0]} has no ASCII letters or digits for ROUGE-L"
            out.append(unscored(base(case), reason))
            continue
        f1 = rouge_l(target, reference)
        passed = None if m.threshold is None else f1 >= m.threshold
        out.append(
            ResultRecord(**base(case), score=f1, raw_score=f1, passed=passed, distribution=None, valid_mass=None)
        )
    return out


def _text(value: str | list[str] | None) -> str:
    # a list field (context chunks) is compared as one text
    return "\n".join(value) if isinstance(value, list) else (value or "")
