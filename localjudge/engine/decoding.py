"""Greedy decoding, optionally computing a prefix the prompts share once.

A generate-and-parse judge, a reasoning step before the score, or a bias study's generators send
many prompts that share a long prefix (the metric's instructions, an article). With
`share_prefix` (and the options' `reuse_prefix`, as in scoring) they are batched by
`plan_prefix_batches`, the prefix is prefilled once (KV cache), and each batch is decoded with
the attention a row would get alone (`engine.runner`: packed rows and per-row blocks, or
right-padded rows under 4D masks), so the tokens are those of
transformers' `generate`, and with the batch-invariant options bitwise the same in any batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from localjudge.engine.batching import plan_batches
from localjudge.engine.loop import Batch, Context, Progress, run_batches
from localjudge.engine.overflow import check_finite
from localjudge.engine.prefix import plan_prefix_batches


def generate(
    ctx: Context,
    ids: Sequence[Sequence[int]],
    max_new_tokens: int,
    eos: set[int],
    decode: Callable[[list[list[int]]], list[str]],
    progress: Progress | None = None,
    share_prefix: bool = False,
) -> list[str]:
    """Greedy continuations of each prompt (deterministic), in input order.

    With `share_prefix`, prompts that share a long prefix are batched together and the prefix is
    computed once, when the options' `reuse_prefix` is on; otherwise the prompts run whole in
    length-sorted batches.

    Args:
        ctx: the runner, options and counters.
        ids: token ids of each prompt (checked: not empty, within the context).
        max_new_tokens: most tokens generated per prompt.
        eos: token ids that end a generation (kept in the tokens `decode` gets).
        decode: the text of each row of generated token ids.
        progress: called with the number of prompts finished after each batch.
    """
    share_prefix = share_prefix and ctx.options.reuse_prefix
    if share_prefix and len(ids) > 1:
        plan = plan_prefix_batches(ids, ctx.token_budget, max_new_tokens, 64, ctx.runner.grid)
    else:
        plan = plan_batches([len(r) + max_new_tokens for r in ids], ctx.token_budget)

    def run(batch: Batch) -> list[str]:
        rows = [ids[i][batch.shared :] for i in batch.items]
        tokens = greedy_batch(ctx, rows, max_new_tokens, eos, batch, lambda i: ctx.ending(ids[i]))
        return decode(tokens)

    return run_batches(plan, run, len(ids), ctx.runner, ids if share_prefix else None, progress)


def greedy_batch(
    ctx: Context,
    rows: Sequence[Sequence[int]],
    max_new_tokens: int,
    eos: set[int],
    batch: Batch,
    ending: Callable[[int], str],
) -> list[list[int]]:
    """Greedy tokens of each row (cut after EOS), after the batch's cached prefix.

    Each new token sees the prefix, the real tokens of its own row, its own earlier new tokens
    and, on sliding layers, only keys less than `window` positions behind, as in a run of the
    row alone (`Runner.step`). An item whose states overflowed is refused (`engine.overflow`).
    """
    runner = ctx.runner
    fwd = runner.forward(rows, cache=batch.cache, shared=batch.shared, keep_cache=True)
    last = torch.from_numpy(fwd.starts + np.array([len(r) for r in rows]) - 1)  # (B,) each row's last token
    with torch.inference_mode():
        state = fwd.states[last.to(fwd.states.device)]  # (B, H)
        new, done = [], torch.zeros(len(rows), dtype=torch.bool)
        for step in range(max_new_tokens):
            live = (~done).nonzero().flatten().tolist()  # a finished row's later states are never read
            check_finite(state[live], live, batch.items, ctx.options.dtype or "?", ending)
            token = runner.argmax_at(state).cpu()  # (B,)
            token = torch.where(done, torch.full_like(token, runner.pad_id), token)
            new.append(token)
            done |= torch.tensor([int(t) in eos for t in token])
            if bool(done.all()) or step == max_new_tokens - 1:
                break
            state = runner.step(token, fwd, step)
    tokens = torch.stack(new, 1).tolist()  # (B, steps)
    return [row[: next((j + 1 for j, t in enumerate(row) if t in eos), len(row))] for row in tokens]
