"""SummEval pieces of more than one study: summary-level agreement and the builtin likelihood metrics.

`quality/summeval` (summeval.py, ladder.py, geval_ablation.py) and `invariance` score SummEval
with these, so both compute agreement and likelihood rows the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from localjudge.metrics import builtin_metric
from localjudge.metrics.spec import PMIContrast


def agreement(scores: Sequence[float | None], human: Sequence[float], docs: Sequence[str]) -> dict:
    """Summary-level Spearman ρ and Kendall τ-b, averaged over articles; None scores are dropped."""
    from localjudge.stats import summary_level

    keep = [i for i, s in enumerate(scores) if s is not None]
    j = np.array([scores[i] for i in keep], dtype=float)  # (n,)
    h = np.array([human[i] for i in keep], dtype=float)  # (n,)
    g = np.array([docs[i] for i in keep])  # (n,)
    res = summary_level(j, h, g)
    return {
        "spearman": res.means.spearman,
        "kendall_tau_b": res.means.kendall_tau_b,
        "articles_used": res.n_used,
        "articles_skipped": res.n_skipped,
        "unscored": len(scores) - len(keep),
    }


def likelihood_metric(dim: str, pmi: bool = False):
    """The builtin likelihood metric of a dimension, optionally with the article as PMI contrast."""
    metric = builtin_metric(f"{dim}_likelihood")
    return metric.model_copy(update={"pmi": PMIContrast(without=["input"])}) if pmi else metric


# The pairwise criteria `quality/rank` and `quality/heads` compare summaries by: SummEval's definitions of the
# dimensions, written before any run and not tuned.
TASK = "You will be given a news article and two summaries of it. Decide which summary is better."
CRITERIA = {
    "coherence": "The better summary is well-structured and well-organized: it builds from sentence to sentence "
    "to a coherent body of information about the article, not a heap of related facts.",
    "consistency": "The better summary is factually consistent with the article: it states only facts the "
    "article supports and contains no hallucinated facts.",
    "fluency": "The better summary has fewer problems of grammar, spelling, punctuation, word choice and sentence "
    "structure.",
    "relevance": "The better summary selects the important content of the article and leaves out redundancies "
    "and excess information.",
}


def pairwise_metric(dim: str):
    from localjudge.kinds.pairwise import PairwiseMetric

    return PairwiseMetric(name=f"{dim}_pairwise", task=TASK, criteria=CRITERIA[dim])
