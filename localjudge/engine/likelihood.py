"""Log-likelihood of given continuations: one batched forward, the output layer only where it counts.

Each row is prompt + continuation, laid out by `engine.runner` (packed, or right-padded in the
stock engine). A prefix that a batch's rows share (a metric's instruction, an article that 16
summaries follow) is computed once and kept as a KV cache, as in scoring. The final hidden state at
the position before each continuation token goes through the output layer (fp32 by default) and
x - logsumexp(x); no other position is read, so an item costs its body forward plus one output
row per continuation token.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from localjudge.engine.batching import BatchPlan, plan_batches
from localjudge.engine.loop import Batch, Context, Progress, run_batches
from localjudge.engine.overflow import check_finite
from localjudge.engine.prefix import plan_prefix_batches

PLAIN_LOGIT_BYTES = 256 * 2**20
"""Logits a plain forward (a model whose output layer cannot be applied apart) keeps at every slot, at most."""


def token_logprobs(
    ctx: Context,
    prompts: Sequence[Sequence[int]],
    continuations: Sequence[Sequence[int]],
    progress: Progress | None = None,
    top: int = 0,
) -> list[np.ndarray]:
    """log P(token | everything before it) of every continuation token, in input order.

    Args:
        ctx: the runner, options and counters.
        prompts: token ids of each prompt (checked: not empty, within the context with the continuation).
        continuations: token ids of each continuation; an empty one gives an empty array.
        progress: called with the number of items finished after each batch.
        top: also read the `top` most likely tokens at each position (`Runner.top_logprobs_at`).

    Returns:
        One float64 array per item: shape (len(continuation),), or with `top` (len(continuation), 1 + 2 * top):
        the token's log P, the top tokens' log P, their ids.
    """
    rows = [list(p) + list(c) for p, c in zip(prompts, continuations)]
    out = [np.zeros((0, 1 + 2 * top) if top else 0) for _ in rows]
    live = [i for i, c in enumerate(continuations) if c]
    if not live:
        return out
    plan, shareable = plan_continuations(ctx, prompts, continuations)
    ctx.counters.last_plan = plan

    def run(batch: Batch) -> list[np.ndarray]:
        items = [live[j] for j in batch.items]
        return logprob_batch(
            ctx,
            [rows[i][batch.shared :] for i in items],
            [len(continuations[i]) for i in items],
            batch,
            items,
            lambda i: ctx.ending(prompts[i]),
            top,
        )

    # a batch shares at most its prompts' common prefix but their last tokens (`plan_continuations`),
    # so the shareable rows start with the tokens the rows do
    got = run_batches(plan, run, len(live), ctx.runner, shareable if ctx.options.reuse_prefix else None, progress)
    for i, lp in zip(live, got):
        out[i] = lp
    if progress and len(live) < len(rows):
        progress(len(rows) - len(live))
    return out


def plan_continuations(
    ctx: Context, prompts: Sequence[Sequence[int]], continuations: Sequence[Sequence[int]]
) -> tuple[BatchPlan, list[list[int]]]:
    """The batches `token_logprobs` runs, over the items with a non-empty continuation.

    Returns:
        The plan (indices into those items) and, per item, the tokens a batch may share.
    """
    runner = ctx.runner
    live = [i for i, c in enumerate(continuations) if c]
    # the plain forward keeps logits at every position: fewer tokens per batch
    budget = (
        ctx.token_budget
        if runner.decoder is not None
        else max(64, min(ctx.token_budget, PLAIN_LOGIT_BYTES // (4 * runner.logit_width)))
    )
    # what a batch may share: the prompt but its last token, whose hidden state reads the
    # first continuation token; unique placeholders stand for the rest of the row
    shareable = [list(prompts[i][:-1]) + [-1 - i] * (len(continuations[i]) + 1) for i in live]
    if ctx.options.reuse_prefix and len(live) > 1:
        return plan_prefix_batches(shareable, budget, 0, 256, runner.grid), shareable
    return plan_batches([len(r) for r in shareable], budget), shareable


def logprob_batch(
    ctx: Context,
    rows: Sequence[Sequence[int]],
    cont_lens: Sequence[int],
    batch: Batch,
    items: Sequence[int],
    ending: Callable[[int], str],
    top: int = 0,
) -> list[np.ndarray]:
    """Continuation log-probabilities of the rows, after the batch's cached prefix (with `top`: and the
    most likely tokens at each position, as `token_logprobs` says).

    An item whose states overflowed is refused (`engine.overflow`), named by `items` (the call's
    index of each row) and `ending`.
    """
    runner = ctx.runner
    fwd = runner.forward(rows, cache=batch.cache, shared=batch.shared)
    # the state at token t predicts token t + 1: each row reads its tokens n - c - 1 .. n - 2
    index = np.concatenate(
        [np.arange(s + len(r) - c - 1, s + len(r) - 1) for s, r, c in zip(fwd.starts, rows, cont_lens)]
    )
    targets = torch.cat([torch.tensor(r[len(r) - c :]) for r, c in zip(rows, cont_lens)])  # (K,)
    with torch.inference_mode():
        picked = fwd.states[torch.from_numpy(index).to(fwd.states.device)]  # (K, H)
        check_finite(picked, np.repeat(np.arange(len(rows)), cont_lens), items, ctx.options.dtype or "?", ending)
        if top:
            logp = runner.top_logprobs_at(picked, targets, top).cpu().numpy()  # (K, 1 + 2 * top)
        else:
            logp = runner.logprobs_at(picked, targets).cpu().numpy()  # (K,)
    ctx.counters.head_rows += len(targets)
    return list(np.split(logp, np.cumsum(cont_lens)[:-1]))
