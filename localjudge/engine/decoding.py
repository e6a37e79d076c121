"""Greedy decoding, optionally computing a prefix the prompts share once, optionally reading each step.

A generate-and-parse judge, a reasoning step before the score, or a bias study's generators send
many prompts that share a long prefix (the metric's instructions, an article). With
`share_prefix` (and the options' `reuse_prefix`, as in scoring) they are batched by
`plan_prefix_batches`, the prefix is prefilled once (KV cache), and each batch is decoded with
the attention a row would get alone (`engine.runner`: packed rows and per-row blocks, or
right-padded rows under 4D masks), so the tokens are those of
transformers' `generate`, and with the batch-invariant options bitwise the same in any batch.

`generate_logprobs` decodes the same way and reads each step's top tokens from the full softmax
(the OpenAI endpoints' log-probabilities). Its steps attend in the block a fresh forward over the
row would use (`Runner.step` with `fresh`), so with the batch-invariant engine each reading is
bitwise what `token_logprobs` reads at the end of the prompt and the tokens generated so far.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import torch

from localjudge.engine.backend import Generation, GenerationRequest
from localjudge.engine.batching import plan_batches
from localjudge.engine.loop import Batch, Context, Progress, run_batches
from localjudge.engine.overflow import check_finite
from localjudge.engine.prefix import plan_prefix_batches
from localjudge.engine.runner import Forward


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
        fwd = ctx.runner.forward(rows, cache=batch.cache, shared=batch.shared, keep_cache=True)
        got = greedy_steps(ctx, fwd, rows, [max_new_tokens] * len(rows), eos, batch, lambda i: ctx.ending(ids[i]))
        return decode([g.tokens for g in got])

    return run_batches(plan, run, len(ids), ctx.runner, ids if share_prefix else None, progress)


def generate_logprobs(
    ctx: Context,
    requests: Sequence[GenerationRequest],
    top: int,
    eos: set[int],
    surfaces: Sequence[str],
) -> list[Generation]:
    """`Backend.generate_logprobs`: greedy continuations with each step's `top` most likely tokens.

    Prompts that share a long prefix are batched together and the prefix computed once (the
    options' `reuse_prefix`), except those whose prompt tokens are read too (`echo`): their
    every position is in their own forward.

    Args:
        ctx: the runner, options and counters.
        requests: the prompts (checked: not empty, within the context) and how far to go.
        top: tokens read at each step (at least 1: the greedy token is the first).
        eos: token ids that end a generation (left out of the tokens returned).
        surfaces: the text each token id adds, for the stop strings (ids past it add none).
    """
    assert top >= 1, "the greedy token is the first of the top tokens: read at least one"
    ids = [list(r.ids) for r in requests]
    # an echoed prompt is read from its first token on: nothing of it may come from a cached prefix
    shareable = [[-1 - i] if r.echo else ids[i] for i, r in enumerate(requests)]
    share = ctx.options.reuse_prefix and len(ids) > 1
    longest = max(r.max_new_tokens for r in requests)
    if share:
        plan = plan_prefix_batches(shareable, ctx.token_budget, longest, 64, ctx.runner.grid)
    else:
        plan = plan_batches([len(r) + q.max_new_tokens for r, q in zip(ids, requests)], ctx.token_budget)

    def run(batch: Batch) -> list[Generation]:
        asked = [requests[i] for i in batch.items]
        texts = [""] * len(asked)

        def ends(b: int, token: int) -> bool:
            texts[b] += surfaces[token] if token < len(surfaces) else ""
            return any(s in texts[b] for s in asked[b].stops)

        def ending(i: int) -> str:
            return ctx.ending(ids[i])

        rows = [ids[i][batch.shared :] for i in batch.items]
        fwd = ctx.runner.forward(rows, cache=batch.cache, shared=batch.shared, keep_cache=True)
        echoed = _prompt_readings(ctx, fwd, rows, [r.echo for r in asked], batch, top, ending)
        got = greedy_steps(ctx, fwd, rows, [r.max_new_tokens for r in asked], eos, batch, ending, top, ends)
        out = []
        for g, prompt in zip(got, echoed):
            n = len(g.tokens) - int(g.eos)  # an EOS that ended it is not returned
            out.append(Generation(prompt, g.tokens[:n], g.readings[:n], "stop" if g.stopped else "length"))
        return out

    return run_batches(plan, run, len(ids), ctx.runner, shareable if share else None)


class Greedy(NamedTuple):
    """One row's greedy continuation (`greedy_steps`)."""

    tokens: list[int]
    """The generated ids, an end-of-sequence token last when one ended it."""
    readings: np.ndarray
    """(len(tokens), 1 + 2 * top) each token's reading with `top` (`Runner.top_logprobs_at`); else (len(tokens), 0)."""
    stopped: bool
    """Ended by an end-of-sequence token or `ends`, before its limit."""
    eos: bool
    """Ended by an end-of-sequence token (the last of `tokens`)."""


def greedy_steps(
    ctx: Context,
    fwd: Forward,
    rows: Sequence[Sequence[int]],
    limits: Sequence[int],
    eos: set[int],
    batch: Batch,
    ending: Callable[[int], str],
    top: int = 0,
    ends: Callable[[int, int], bool] | None = None,
) -> list[Greedy]:
    """Greedy tokens of each row (cut after EOS), after the forward over the rows (`keep_cache`).

    Each new token sees the prefix, the real tokens of its own row, its own earlier new tokens
    and, on sliding layers, only keys less than `window` positions behind, as in a run of the
    row alone (`Runner.step`). An item whose states overflowed is refused (`engine.overflow`).

    Args:
        fwd: the forward over the rows, after the batch's cached prefix, its cache kept.
        limits: most tokens each row generates.
        top: read each step's `top` most likely tokens from the full softmax; the greedy token is
            then the first of them, and the steps attend as fresh forwards (`Runner.step`'s `fresh`).
        ends: (row, its new token) -> whether the row's generation ends there (a stop string).
    """
    runner = ctx.runner
    last = torch.from_numpy(fwd.starts + np.array([len(r) for r in rows]) - 1)  # (B,) each row's last token
    tokens: list[list[int]] = [[] for _ in rows]
    reads: list[list[np.ndarray]] = [[] for _ in rows]
    stopped, ended_eos = [False] * len(rows), [False] * len(rows)
    done = torch.tensor([n == 0 for n in limits])
    with torch.inference_mode():
        state = fwd.states[last.to(fwd.states.device)]  # (B, H)
        for step in range(max(limits, default=0)):
            live = (~done).nonzero().flatten().tolist()  # a finished row's later states are never read
            check_finite(state[live], live, batch.items, ctx.options.dtype or "?", ending)
            if top:
                read = runner.top_logprobs_at(state, torch.zeros(len(rows), dtype=torch.long), top).cpu().numpy()
                read[:, 0] = read[:, 1]  # the greedy token's log P
                token = torch.from_numpy(read[:, 1 + top]).long()  # (B,)
            else:
                token = runner.argmax_at(state).cpu()  # (B,)
            token = torch.where(done, torch.full_like(token, runner.pad_id), token)
            for b in live:
                t = int(token[b])
                tokens[b].append(t)
                if top:
                    reads[b].append(read[b])
                ended_eos[b] = t in eos
                stopped[b] = ended_eos[b] or (ends is not None and ends(b, t))
                if stopped[b] or len(tokens[b]) == limits[b]:
                    done[b] = True
            if bool(done.all()):
                break
            state = runner.step(token, fwd, step, fresh=bool(top))
    width = 1 + 2 * top if top else 0
    return [
        Greedy(t, np.array(r).reshape(len(t), width), s, e) for t, r, s, e in zip(tokens, reads, stopped, ended_eos)
    ]


def _prompt_readings(
    ctx: Context,
    fwd: Forward,
    rows: Sequence[Sequence[int]],
    echo: Sequence[bool],
    batch: Batch,
    top: int,
    ending: Callable[[int], str],
) -> list[np.ndarray]:
    """(n - 1, 1 + 2 * top) readings of each echoed row's tokens after the first (the state at token t
    reads token t + 1, as `engine.likelihood` reads them); (0, 1 + 2 * top) for the others."""
    out = [np.zeros((0, 1 + 2 * top)) for _ in rows]
    picked = [b for b, e in enumerate(echo) if e and len(rows[b]) > 1]
    if not picked:
        return out
    assert batch.shared == 0, "an echoed prompt is planned without a cached prefix"
    counts = [len(rows[b]) - 1 for b in picked]
    index = np.concatenate([np.arange(fwd.starts[b], fwd.starts[b] + c) for b, c in zip(picked, counts)])
    targets = torch.cat([torch.tensor(rows[b][1:]) for b in picked])  # (K,)
    with torch.inference_mode():
        states = fwd.states[torch.from_numpy(index).to(fwd.states.device)]  # (K, H)
        check_finite(states, np.repeat(picked, counts), batch.items, ctx.options.dtype or "?", ending)
        read = ctx.runner.top_logprobs_at(states, targets, top).cpu().numpy()  # (K, 1 + 2 * top)
    ctx.counters.head_rows += len(targets)
    for b, part in zip(picked, np.split(read, np.cumsum(counts)[:-1])):
        out[b] = part
    return out
