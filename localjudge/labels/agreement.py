"""How well a reading agrees with people's labels: one figure per kind of label, named in words.

- rating: Spearman ρ per group, averaged over groups of 3 or more (the summary level of SummEval);
  over all cases when no group has 3;
- binary: ROC AUC of the score against the 1/0 labels;
- preference: accuracy of P(output 1 better) > 0.5 against the choices.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from localjudge.errors import ConfigError, clip
from localjudge.kinds import Metric, kind_of
from localjudge.kinds.training import LabelKind
from localjudge.labels.read import Labels
from localjudge.stats import correlations, summary_level
from localjudge.stats.classification import roc_auc

NAMES: dict[LabelKind, str] = {
    "rating": "Spearman rho of expected score vs human, per group averaged (all cases when no group has 3)",
    "binary": "ROC AUC of P(yes) against the human labels",
    "preference": "accuracy of P(output 1 better) > 0.5 against the human choices",
}
"""What `agreement` measures for each kind of label, in words."""


class Agreement(NamedTuple):
    """An agreement figure and what it measures."""

    name: str
    """What the figure measures, in words."""
    value: float | None
    """The figure; None where it is undefined (no scored case, a single class)."""


def agreement_name(kind: LabelKind) -> str:
    """What `agreement` measures for labels of `kind`."""
    return NAMES[kind]


def agreement(metric: Metric, scores: np.ndarray, labels: Labels, cases: np.ndarray | None = None) -> Agreement:
    """Agreement of `scores` with the labels: of every case, or (n,) scores of the cases `cases` (n,).

    Unscored cases (NaN) are left out. Raises `ConfigError` when the labels are not of the kind the metric takes.

    Examples:
        >>> from localjudge.metrics import builtin_metric
        >>> labels = Labels(np.array([1.0, 2, 3, 4]), ("a",) * 4, "h", "rating", (1.0, 5.0))
        >>> agreement(builtin_metric("coherence"), np.array([0.1, 0.3, np.nan, 0.9]), labels).value
        1.0
    """
    takes = kind_of(metric).label_kind(metric)
    if takes != labels.kind:
        raise ConfigError(f"metric {clip(metric.name)} takes {takes} labels, not {labels.kind} ones")
    index = np.arange(len(labels)) if cases is None else np.asarray(cases)
    human = labels.values[index]  # (n,)
    ok = np.isfinite(scores)
    scores, human, index = scores[ok], human[ok], index[ok]
    name = NAMES[labels.kind]
    if len(scores) == 0:
        return Agreement(name, None)
    if labels.kind == "rating":
        groups = np.array([labels.groups[i] for i in index])
        return Agreement(name, spearman_agreement(scores, human, groups, fall_back=True))
    if labels.kind == "binary":
        return Agreement(name, roc_auc(scores, human.astype(int)))
    return Agreement(name, float(np.mean((scores > 0.5) == (human == 1))))


def spearman_agreement(
    scores: np.ndarray, human: np.ndarray, groups: np.ndarray | None, fall_back: bool = False
) -> float | None:
    """Spearman ρ per group then averaged when there are groups, else over all items.

    With groups and none of 3 items, None, or with `fall_back` the ρ over all items.
    """
    if groups is not None:
        level = summary_level(scores, human, groups)
        if level.n_used or not fall_back:
            return level.means.spearman
    return correlations(scores, human).spearman
