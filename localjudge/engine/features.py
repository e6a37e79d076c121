"""What a judge's hidden states say about a continuation: its tokens' states pooled, and their log-probabilities.

A head (`localjudge.heads`) reads a judge through these features: each item is a prompt (a
source) and a continuation (the output judged), laid out and batched exactly as likelihoods are
(`engine.likelihood`: a prefix the rows share, such as an article that 16 summaries follow, is
computed once). One pass gives, per item, the states after each asked decoder layer averaged over
the continuation's own tokens, and the log-probability of each continuation token. Each item's
pooling runs alone in float64 over states the engine computed, so with the batch-invariant engine
the features are the same bits in any batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from localjudge.engine.backend import ContinuationFeatures
from localjudge.engine.likelihood import plan_continuations
from localjudge.engine.loop import Batch, Context, Progress, run_batches
from localjudge.engine.overflow import check_finite


def continuation_features(
    ctx: Context,
    prompts: Sequence[Sequence[int]],
    continuations: Sequence[Sequence[int]],
    layers: Sequence[int],
    progress: Progress | None = None,
) -> list[ContinuationFeatures]:
    """Pooled states at `layers` and token log-probabilities of every continuation, in input order.

    Args:
        ctx: the runner, options and counters.
        prompts: token ids of each prompt (checked by the backend: not empty, within the context).
        continuations: token ids of each continuation; every one must hold a token.
        layers: decoder layers to read, 1 (the first layer's output) to the number of layers (the
            final, normed state).
        progress: called with the number of items finished after each batch.
    """
    assert all(continuations), "every continuation holds a token (the caller refuses empty outputs)"
    rows = [list(p) + list(c) for p, c in zip(prompts, continuations)]
    plan, shareable = plan_continuations(ctx, prompts, continuations)
    ctx.counters.last_plan = plan

    def run(batch: Batch) -> list[ContinuationFeatures]:
        items = list(batch.items)
        return _feature_batch(
            ctx,
            [rows[i][batch.shared :] for i in items],
            [len(continuations[i]) for i in items],
            batch,
            items,
            lambda i: ctx.ending(prompts[i]),
            layers,
        )

    return run_batches(plan, run, len(rows), ctx.runner, shareable if ctx.options.reuse_prefix else None, progress)


def _feature_batch(
    ctx: Context, rows, cont_lens: Sequence[int], batch: Batch, items: Sequence[int], ending, layers: Sequence[int]
) -> list[ContinuationFeatures]:
    runner = ctx.runner
    fwd = runner.forward(rows, cache=batch.cache, shared=batch.shared, layers=layers)
    assert fwd.hidden is not None
    # the state at token t predicts token t + 1: a row reads log P at n - c - 1 .. n - 2 and pools n - c .. n - 1
    ends = [int(s) + len(r) for s, r in zip(fwd.starts, rows)]
    before = np.concatenate([np.arange(e - c - 1, e - 1) for e, c in zip(ends, cont_lens)])
    targets = torch.cat([torch.tensor(r[len(r) - c :]) for r, c in zip(rows, cont_lens)])  # (N,)
    owner = np.repeat(np.arange(len(rows)), cont_lens)
    with torch.inference_mode():
        picked = fwd.states[torch.from_numpy(before).to(fwd.states.device)]  # (N, H)
        check_finite(picked, owner, items, ctx.options.dtype or "?", ending)
        logp = runner.logprobs_at(picked, targets).cpu().numpy()  # (N,)
        out = []
        for b, (e, c) in enumerate(zip(ends, cont_lens)):
            own = fwd.hidden[:, e - c : e].double()  # (K, c, H)
            check_finite(own.transpose(0, 1), np.full(c, b), items, ctx.options.dtype or "?", ending)
            out.append(ContinuationFeatures(own.mean(1).cpu().numpy(), logp[owner == b]))
    ctx.counters.head_rows += len(targets)
    return out
