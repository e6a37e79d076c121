"""How well a tuned reading agrees with people on held-out cases: one number per metric kind."""

from __future__ import annotations

import numpy as np

from localjudge.kinds.entailment import EntailmentMetric
from localjudge.kinds.geval.spec import GEvalMetric
from localjudge.stats import correlations, summary_level
from localjudge.stats.classification import roc_auc


def agreement_name(data) -> str:
    """What `agreement` measures for the data's metric."""
    if isinstance(data.metric, GEvalMetric):
        return "Spearman rho of expected score vs human, per group averaged (all cases when no group has 3)"
    if isinstance(data.metric, EntailmentMetric):
        return "ROC AUC of P(yes) against the human labels"
    return "accuracy of P(output 1 better) > 0.5 against the human choices"


def agreement(data, scores: np.ndarray, cases: np.ndarray) -> float | None:
    """Agreement of `scores` (n,) of the cases `cases` (n,) with their human labels; None when undefined."""
    human = data.human[cases]  # (n,)
    ok = np.isfinite(scores)
    scores, human, cases = scores[ok], human[ok], cases[ok]
    if len(scores) == 0:
        return None
    if isinstance(data.metric, GEvalMetric):
        groups = np.array([data.groups[i] for i in cases])
        level = summary_level(scores, human, groups)
        if level.n_used:
            return level.means.spearman
        return correlations(scores, human).spearman
    if isinstance(data.metric, EntailmentMetric):
        return roc_auc(scores, human.astype(int))
    return float(np.mean((scores > 0.5) == (human == 1)))
