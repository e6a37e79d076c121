"""Exact tree scoring: one batched forward over prompt + token tree per batch.

For a batch of B prompts and a tree of N nodes (root + T tokens), the model sees every prompt
followed by the T tree tokens (`engine.runner` builds every forward: packed back to back in the
batch-invariant engine, right-padded under a 4D mask in the stock one). The state at each
prompt's last token and at its T tree tokens are the final hidden states at the root and at every
tree node, which is all the exact score math needs: no per-score or per-example forward pass.
`tree_head.read_tree` applies the output layer only at the nodes that can move the score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from localjudge.engine import masks
from localjudge.engine.batching import plan_batches
from localjudge.engine.loop import Batch, Context, Progress, run_batches
from localjudge.engine.overflow import check_finite
from localjudge.engine.prefix import plan_prefix_batches
from localjudge.engine.tree_head import read_tree
from localjudge.scoring.distribution import TreeLogprobs
from localjudge.scoring.trie import TokenTree


def tree_logprobs(
    ctx: Context, ids: Sequence[Sequence[int]], tree: TokenTree, progress: Progress | None = None
) -> TreeLogprobs:
    """Edge and end log-probabilities at every tree node for every prompt, in input order.

    The prompts must have been checked (not empty, within the context).
    """
    runner = ctx.runner
    n = tree.n_nodes
    ancestry = masks.tree_ancestry(tree)
    # models may pad their output layer beyond the tokenizer (Qwen2.5: 152064 vs 151665);
    # those ids are never produced as text, so they count as ending the outcome
    cont = np.ones(runner.logit_width, dtype=bool)
    cont[tree.continue_ids[tree.continue_ids < runner.logit_width]] = False  # True where a token ends it
    ends_mask = torch.from_numpy(cont).to(runner.device)
    # a model that cannot be split gives logits at every slot: one row per batch
    vocab_rows = 256 if runner.decoder is not None else 1
    if ctx.options.reuse_prefix and len(ids) > 1:
        plan = plan_prefix_batches(ids, ctx.token_budget, n - 1, vocab_rows, runner.grid)
    else:
        plan = plan_batches([len(r) + n - 1 for r in ids], ctx.token_budget, max_batch=vocab_rows)
    ctx.counters.last_plan = plan

    def run(batch: Batch) -> list[tuple[np.ndarray, np.ndarray]]:
        rows = [ids[i][batch.shared :] for i in batch.items]
        return tree_batch(ctx, rows, tree, ancestry, ends_mask, batch, lambda i: ctx.ending(ids[i]))

    read = run_batches(plan, run, len(ids), runner, ids if ctx.options.reuse_prefix else None, progress)
    edge = np.zeros((len(ids), n))
    end = np.zeros((len(ids), n))
    for i, (e, f) in enumerate(read):
        edge[i], end[i] = e, f
    return TreeLogprobs(edge, end)


def tree_batch(
    ctx: Context,
    rows: Sequence[Sequence[int]],
    tree: TokenTree,
    ancestry: np.ndarray,
    ends_mask: torch.Tensor,
    batch: Batch,
    ending: Callable[[int], str],
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Edge and end log-probabilities at the tree nodes of each row, after the batch's cached prefix.

    An item whose states overflowed is refused (`engine.overflow`), named by `batch.items` and
    `ending` (an item's prompt end).
    """
    fwd = ctx.runner.forward(rows, tree.token_ids[1:], tree.depths[1:], ancestry, batch.cache, batch.shared)
    lengths = np.array([len(r) for r in rows])
    root = fwd.starts + lengths - 1  # (B,) each row's last token
    nodes = fwd.tails[:, None] + np.arange(tree.n_nodes - 1)[None]  # (B, T)
    index = torch.from_numpy(np.concatenate([root[:, None], nodes], 1)).to(fwd.states.device)  # (B, N)
    states = fwd.states[index]  # (B, N, H)
    b, n = index.shape
    check_finite(states.reshape(b * n, -1), np.repeat(np.arange(b), n), batch.items, ctx.options.dtype or "?", ending)
    with torch.inference_mode():
        read = read_tree(states, ctx.runner.head, tree, ends_mask, ctx.options.tree_tolerance, ctx.runner.chunks)
    ctx.counters.head_rows += read.rows
    return [(read.edge[b], read.end[b]) for b in range(len(rows))]
