"""Labelled cases into tuning examples: the prompt the metric sends, and the reading people gave.

One example per prompt: a G-Eval case is one prompt whose target is the human rating spread over
the two nearest scores; an entailment case is one prompt whose target is its yes/no label; a
pairwise case is two prompts, one per order, whose targets swap with the order, so the judge is
never taught a position. Each kind also says how a case's score is read back from its
examples' distributions, exactly as `eval` reads it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from localjudge.errors import ConfigError, DataError, clip
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds import Metric, kind_of
from localjudge.kinds.base import MetricContext
from localjudge.kinds.context_length import within_context
from localjudge.kinds.entailment import EntailmentMetric
from localjudge.kinds.geval.spec import GEvalMetric
from localjudge.kinds.pairwise import PairwiseMetric
from localjudge.kinds.settings import ScoringOptions
from localjudge.scoring.trie import TokenTree
from localjudge.tune.reading import soft_target

TUNABLE = ("geval", "entailment", "pairwise")
"""Metric kinds whose reading is a distribution over a score or label tree, hence trainable."""


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
    human: np.ndarray
    """(C,) each case's human rating, on the metric's own scale (labels as 0/1)."""
    groups: list[str]
    """(C,) each case's group: cases of one group never straddle training and validation."""
    case_ids: list[str]
    values: np.ndarray
    """(V,) the number each outcome stands for: the scores, or 1/0 for the yes/no (A/B) labels."""

    def case_scores(self, dists: np.ndarray) -> np.ndarray:
        """(C,) the metric's score of each case from its examples' normalised distributions (E, V).

        G-Eval: the expected score; entailment: P(yes); pairwise: P(output 1 better), the two
        orders averaged. NaN where a case has no example among `dists`' rows.
        """
        per = dists @ self.values  # (E,) each example's reading
        sums, counts = np.zeros(len(self.human)), np.zeros(len(self.human))
        for ex, r in zip(self.examples, per):
            sums[ex.case] += r
            counts[ex.case] += 1
        with np.errstate(invalid="ignore"):
            return sums / counts


def check_tunable(metric: Metric) -> None:
    """Raises `ConfigError` unless the metric's reading can be trained (a tunable kind, read where it is trained)."""
    kind = kind_of(metric)
    if kind.name not in TUNABLE:
        raise ConfigError(
            f"metric {clip(metric.name)} is a {kind.name} metric; tuning trains a judge's reading of a score or "
            f"label distribution: use a {', '.join(TUNABLE)} metric"
        )
    if isinstance(metric, GEvalMetric) and metric.reasoning == "before":
        raise ConfigError(
            f"metric {clip(metric.name)} reads its score after generated reasoning; tune it with reasoning "
            "'none' or 'after' (the score is read at the same place)"
        )
    if isinstance(metric, EntailmentMetric) and metric.unit != "response":
        raise ConfigError(
            f"metric {clip(metric.name)} asks about each sentence and keeps the least supported one; a label for "
            "the whole response does not say which sentence is wrong: tune a metric with unit: response"
        )
    if isinstance(metric, PairwiseMetric) and metric.allow_tie:
        raise ConfigError(f"metric {clip(metric.name)} allows ties; tune a pairwise metric without them")


def read_labels(
    metric: Metric, cases: Sequence[TestCase], human_field: str, human_scale: tuple[float, float] | None
) -> np.ndarray:
    """(C,) each case's human label on the metric's own terms: a rating on low..high, or 1/0.

    G-Eval ratings on another scale (`human_scale`) are mapped linearly onto the metric's;
    entailment labels are 1 (supported) or 0; pairwise labels are 1 or 2 (the better output),
    read as 1 when output 1 is better.

    Raises:
        ConfigError: the metric cannot be tuned.
        DataError: a case lacks its label, or a label lies outside the scale.
    """
    check_tunable(metric)
    human = np.array([_label(c, human_field) for c in cases])  # (C,)
    if isinstance(metric, GEvalMetric):
        return _on_scale(human, human_scale or (metric.low, metric.high), metric.low, metric.high, human_field)
    if isinstance(metric, EntailmentMetric):
        return _binary(human, (1, 0), human_field, "1 (supported) or 0 (not)")
    return (_binary(human, (1, 2), human_field, "1 or 2 (the better output)") == 1).astype(float)


def build_data(
    judge: Judge, metric: Metric, cases: Sequence[TestCase], human: np.ndarray, groups: list[str]
) -> TuneData:
    """The examples of `metric` over `cases` labelled `human` (`read_labels`), prompts rendered by `judge`."""
    kind = kind_of(metric)
    scoring = ScoringOptions()
    prepared = kind.prepare(judge, metric, scoring.hardened, scoring.steps_cache)
    ctx: MetricContext[Any] = MetricContext(metric, kind, prepared, scoring)
    prompts = [within_context(judge, ctx, c).payload for c in cases]
    ids = [c.id for c in cases]
    if isinstance(metric, GEvalMetric):
        tree = judge.score_tree(metric.low, metric.high)
        values = np.arange(metric.low, metric.high + 1, dtype=np.float64)
        examples = [
            Example(i, tuple(judge.backend.encode(p)), soft_target(h, metric.low, metric.high))
            for i, (p, h) in enumerate(zip(prompts, human))
        ]
        return TuneData(metric, tree, examples, human, groups, ids, values)
    yes_no = np.array([1.0, 0.0])
    if isinstance(metric, EntailmentMetric):
        tree = judge.label_tree(list(metric.labels))
        examples = [
            Example(i, tuple(judge.backend.encode(p)), np.array([h, 1.0 - h]))
            for i, (p, h) in enumerate(zip(prompts, human))
        ]
        return TuneData(metric, tree, examples, human, groups, ids, yes_no)
    tree = judge.label_tree(["A", "B"])
    examples = []
    for i, ((first, second), h) in enumerate(zip(prompts, human)):  # output 1 shown first, then second
        examples.append(Example(i, tuple(judge.backend.encode(first)), np.array([h, 1.0 - h])))
        examples.append(Example(i, tuple(judge.backend.encode(second)), np.array([1.0 - h, h])))
    return _PairData(metric, tree, examples, human, groups, ids, yes_no)


def group_names(cases: Sequence[TestCase], group_field: str | None) -> list[str]:
    """Each case's group: the `group_field` value, else its input (cases about one source stay together).

    Raises:
        DataError: a case lacks the group field.
    """
    if group_field is None:
        return [str(c.get("input") or c.id) for c in cases]
    missing = [c.id for c in cases if c.get(group_field) is None]
    if missing:
        raise DataError(f"case {clip(missing[0])} has no {clip(group_field)} field to group by; give every case one")
    return [str(c.get(group_field)) for c in cases]


class _PairData(TuneData):
    """Pairwise: the second order's reading of output 1 is its P(B)."""

    def case_scores(self, dists: np.ndarray) -> np.ndarray:
        sums, counts = np.zeros(len(self.human)), np.zeros(len(self.human))
        seen: dict[int, int] = {}
        for ex, d in zip(self.examples, dists):
            order = seen.get(ex.case, 0)
            seen[ex.case] = order + 1
            sums[ex.case] += d[0] if order == 0 else d[1]
            counts[ex.case] += 1
        with np.errstate(invalid="ignore"):
            return sums / counts


def _label(case: TestCase, field: str) -> float:
    value = case.get(field)
    if isinstance(value, bool):
        return float(value)
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise DataError(
            f"case {clip(case.id)}: field {clip(field)} must hold a number (the human label), got {clip(value)}"
        )
    return float(value)


def _on_scale(human: np.ndarray, scale: tuple[float, float], low: int, high: int, field: str) -> np.ndarray:
    """Human ratings on `scale`, mapped linearly onto the metric's low..high."""
    lo, hi = scale
    if not lo < hi:
        raise ConfigError(f"--human-scale {lo:g} {hi:g}: the low end must be below the high end")
    outside = np.flatnonzero((human < lo) | (human > hi))
    if len(outside):
        raise DataError(
            f"{len(outside)} labels in {clip(field)} lie outside {lo:g}..{hi:g} (e.g. {human[outside[0]]:g}); "
            "give their scale with --human-scale LOW HIGH"
        )
    return low + (human - lo) / (hi - lo) * (high - low)


def _binary(human: np.ndarray, allowed: tuple[int, int], field: str, meaning: str) -> np.ndarray:
    bad = np.flatnonzero(~np.isin(human, allowed))
    if len(bad):
        raise DataError(f"{len(bad)} labels in {clip(field)} are not {meaning} (e.g. {human[bad[0]]:g})")
    return human.astype(float)
