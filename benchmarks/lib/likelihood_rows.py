"""SummEval summaries as likelihood rows, and the bare forward over them: the floor of likelihood scoring.

`speed` (throughput_likelihood.py, llamacpp.py) and `invariance` time the same rows against the
same floor; the rows are rendered by the builtin `consistency_likelihood` metric.
"""

from __future__ import annotations

import torch

from benchmarks.lib.common import SUMMEVAL_DATA, load_summeval

METRIC = "consistency_likelihood"


def likelihood_articles(judge, docs: int | None):
    """Per article: (prompts, continuations) of its summaries, as the metric renders them."""
    from localjudge.kinds.likelihood import prompts as L
    from localjudge.metrics import builtin_metric

    metric = builtin_metric(METRIC)
    groups: dict[str, tuple[list[str], list[str]]] = {}
    for c in load_summeval(SUMMEVAL_DATA, docs):
        p = L.condition_prompt(judge, metric, c)
        prompts, conts = groups.setdefault(c.extra["doc_id"], ([], []))
        prompts.append(p)
        conts.append(L.continuation(p, c.actual_output))
    return list(groups.values())


def floor_pass(backend, rows: list[list[int]], plan) -> None:
    """The plan's batches, right-padded, one plain forward each, last-position logits only."""
    for batch in plan.batches:
        width = max(len(rows[i]) for i in batch)
        x = torch.full((len(batch), width), backend.pad_id, dtype=torch.long)
        attn = torch.zeros_like(x)
        for b, i in enumerate(batch):
            x[b, : len(rows[i])] = torch.tensor(rows[i])
            attn[b, : len(rows[i])] = 1
        with torch.inference_mode():
            backend.model(
                input_ids=x.to(backend.device),
                attention_mask=attn.to(backend.device),
                logits_to_keep=1,
                use_cache=False,
            )
