"""A label field of cases read on the metric's own terms, with each case's group.

One reader for every feature: a rating is mapped linearly from the labels' scale onto the metric's
(`--human-scale`), a yes/no label is 1 or 0, a choice between two outputs is 1 or 2 (read as 1.0
when output 1 is better). What kind of label a metric takes is its kind's answer
(`MetricKind.label_kind`). A case's group defaults to its input (cases about one source stay
together), else its id.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from localjudge.errors import ConfigError, DataError, clip
from localjudge.io.cases import TestCase
from localjudge.kinds import KINDS, Metric, kind_of
from localjudge.kinds.training import LabelKind


@dataclass(frozen=True, eq=False)
class Labels:
    """The human labels of C cases for one metric, on the metric's terms."""

    values: np.ndarray
    """(C,) float64: a rating on the metric's low..high, 1/0, or 1.0 when output 1 is better else 0.0."""
    groups: tuple[str, ...]
    """(C,) each case's group: cases of one group never straddle a split."""
    field: str
    """The case field the labels were read from."""
    kind: LabelKind
    """What the labels say: a rating, yes/no, or a choice between two outputs."""
    scale: tuple[float, float] | None = None
    """A rating's (low, high) on the metric's scale; None for other labels."""

    def __len__(self) -> int:
        return len(self.values)


def read_labels(
    metric: Metric,
    cases: Sequence[TestCase],
    field: str,
    scale: tuple[float, float] | None = None,
    group: str | None = None,
) -> Labels:
    """Each case's label in `field` on the metric's terms, and its group (`group_names`).

    Args:
        metric: the metric the labels judge; its kind says what kind of label it takes.
        cases: the labelled cases.
        field: the case field holding each case's label.
        scale: the (low, high) of ratings given on another scale than the metric's (`--human-scale`).
        group: the case field grouping cases; None: the input, else the case id.

    Raises:
        ConfigError: the metric takes no labels, or `scale` is empty.
        DataError: a case lacks its label or its group, or a label lies outside the scale or is not 1/0 (1/2).

    Examples:
        >>> from localjudge.metrics import builtin_metric
        >>> cases = [TestCase(id="a", input="x", extra={"h": 10}), TestCase(id="b", input="x", extra={"h": 0})]
        >>> read_labels(builtin_metric("coherence"), cases, "h", scale=(0, 10)).values.tolist()
        [5.0, 1.0]
    """
    kind = kind_of(metric)
    label_kind = kind.label_kind(metric)
    if label_kind is None:
        takes = ", ".join(name for name, k in KINDS.items() if k.trainable)
        raise ConfigError(
            f"metric {clip(metric.name)} is a {kind.name} metric, which does not learn from labels; use a metric "
            f"of a kind that does ({takes})"
        )
    human = np.array([_number(c, field) for c in cases], dtype=np.float64)  # (C,)
    groups = tuple(group_names(cases, group))
    if label_kind == "rating":
        own = kind.label_scale(metric)
        assert own is not None, "a rating metric has a scale"
        values = _on_scale(human, scale or own, own, field)
        return Labels(values, groups, field, label_kind, (float(own[0]), float(own[1])))
    if label_kind == "binary":
        return Labels(_binary(human, (1, 0), field, "1 (yes) or 0 (no)"), groups, field, label_kind)
    chosen = _binary(human, (1, 2), field, "1 or 2 (the better output)")
    return Labels((chosen == 1).astype(float), groups, field, label_kind)


def group_names(cases: Sequence[TestCase], group_field: str | None) -> list[str]:
    """Each case's group: the `group_field` value, else its input (cases about one source stay together), else its id.

    Raises:
        DataError: a case lacks the group field.
    """
    if group_field is None:
        return [str(c.get("input") or c.id) for c in cases]
    missing = [c.id for c in cases if c.get(group_field) is None]
    if missing:
        raise DataError(f"case {clip(missing[0])} has no {clip(group_field)} field to group by; give every case one")
    return [str(c.get(group_field)) for c in cases]


def _number(case: TestCase, field: str) -> float:
    value = case.get(field)
    if isinstance(value, bool):
        return float(value)
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise DataError(
            f"case {clip(case.id)}: field {clip(field)} must hold a number (the human label), got {clip(value)}"
        )
    return float(value)


def _on_scale(human: np.ndarray, scale: tuple[float, float], own: tuple[float, float], field: str) -> np.ndarray:
    """Human ratings on `scale`, mapped linearly onto the metric's `own` (low, high)."""
    lo, hi = scale
    low, high = own
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
