"""Labelled cases into tuning examples: the prompts the metric sends, and the reading people gave.

The metric's kind says what is trained (`MetricKind.outcomes`, `training_examples`,
`example_readings`): a G-Eval case is one prompt whose target is the human rating spread over the
two nearest scores; an entailment case is one prompt whose target is its yes/no label; a pairwise
case is two prompts, one per order, whose targets swap with the order, so the judge is never taught
a position. A case's score is read back from its examples' distributions exactly as `eval` reads it.
The labels themselves are read by `localjudge.labels`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds import Metric, kind_of
from localjudge.kinds.base import MetricContext
from localjudge.kinds.context_length import within_context
from localjudge.kinds.options import ScoringOptions
from localjudge.labels import Labels
from localjudge.scoring.trie import TokenTree


@dataclass(frozen=True)
class Example:
    """One prompt to train on.

    Attributes:
        case: index of its case.
        ids: the prompt's token ids, exactly as the engine reads them.
        target: (V,) the distribution over the tree's outcomes the judge is taught.
    """

    case: int
    ids: tuple[int, ...]
    target: np.ndarray


@dataclass(frozen=True)
class TuneData:
    """A metric's examples over labelled cases, the tree they are read on, and how a case's score is read."""

    metric: Metric
    tree: TokenTree
    examples: list[Example]
    labels: Labels
    """(C,) each case's human label on the metric's terms, and its group: a group never straddles the split."""
    case_ids: list[str]
    values: np.ndarray
    """(V,) the number each outcome stands for: the scores, or 1/0 for the yes/no (A/B) labels."""

    @property
    def groups(self) -> tuple[str, ...]:
        """(C,) each case's group."""
        return self.labels.groups

    def case_scores(self, dists: np.ndarray) -> np.ndarray:
        """(C,) the metric's score of each case from its examples' normalised distributions (E, V).

        G-Eval: the expected score; entailment: P(yes); pairwise: P(output 1 better), the two
        orders averaged. NaN where a case has no example among `dists`' rows.
        """
        order = np.zeros(len(self.examples), dtype=int)  # (E,) each example's place among its case's
        seen: dict[int, int] = {}
        for e, ex in enumerate(self.examples):
            order[e] = seen.get(ex.case, 0)
            seen[ex.case] = order[e] + 1
        per = kind_of(self.metric).example_readings(self.metric, dists, order[: len(dists)])  # (E,)
        sums, counts = np.zeros(len(self.labels)), np.zeros(len(self.labels))
        for ex, r in zip(self.examples, per):
            sums[ex.case] += r
            counts[ex.case] += 1
        with np.errstate(invalid="ignore"):
            return sums / counts


def build_data(judge: Judge, metric: Metric, cases: Sequence[TestCase], labels: Labels) -> TuneData:
    """The examples of `metric` over `cases` labelled `labels` (`localjudge.labels.read_labels`), prompts
    rendered by `judge`."""
    kind = kind_of(metric)
    scoring = ScoringOptions()
    prepared = kind.prepare(judge, metric, scoring.hardened, scoring.steps_cache)
    ctx: MetricContext[Any] = MetricContext(metric, kind, prepared, scoring)
    outcomes = kind.outcomes(judge, metric)
    examples = [
        Example(i, tuple(judge.backend.encode(ex.prompt)), ex.target)
        for i, (case, label) in enumerate(zip(cases, labels.values))
        for ex in kind.training_examples(metric, within_context(judge, ctx, case).payload, float(label))
    ]
    return TuneData(metric, outcomes.tree, examples, labels, [c.id for c in cases], outcomes.values)
