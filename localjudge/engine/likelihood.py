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
from typing import Any

import numpy as np

from localjudge.engine.batching import BatchPlan, plan_batches
from localjudge.engine.core import BackendCore
from localjudge.engine.oom import run_with_backoff
from localjudge.engine.overflow import check_finite
from localjudge.engine.prefix import plan_prefix_batches, shared_prefix_len

Progress = Callable[[int], None]

PLAIN_LOGIT_BYTES = 256 * 2**20
"""Logits a plain forward (a model whose output layer cannot be applied apart) keeps at every slot, at most."""


class ContinuationScoring(BackendCore):
    """Log-likelihood methods of `HFBackend` (which provides the model, masks and prefill)."""

    def token_logprobs(
        self,
        prompts: Sequence[Sequence[int]],
        continuations: Sequence[Sequence[int]],
        progress: Progress | None = None,
    ) -> list[np.ndarray]:
        """log P(token | everything before it) of every continuation token, in input order.

        Args:
            prompts: token ids of each prompt (at least one token each).
            continuations: token ids of each continuation; an empty one gives an empty array.
            progress: called with the number of items finished after each batch.

        Returns:
            One float64 array of shape (len(continuation),) per item.
        """
        rows = [list(p) + list(c) for p, c in zip(prompts, continuations)]
        self.check_lengths(prompts)  # a continuation needs a prompt to follow
        self.check_lengths(rows, [f"item {i} (prompt + continuation)" for i in range(len(rows))])
        out = [np.zeros(0) for _ in rows]
        live = [i for i, c in enumerate(continuations) if c]
        if not live:
            return out
        plan, shareable = self.plan_continuations(prompts, continuations)
        self.last_plan: BatchPlan | None = plan  # the declared type, not a narrower one of its own
        memo: dict[tuple[int, ...], Any] = {}

        def run(batch: Sequence[int]) -> list[np.ndarray]:
            items = [live[j] for j in batch]
            grid = self.runner.grid
            shared = shared_prefix_len([shareable[j] for j in batch], grid) if self.options.reuse_prefix else 0
            cache = self._cached_prefill(memo, rows[items[0]][:shared]) if shared else None
            return self._logprob_batch(
                [rows[i][shared:] for i in items],
                [len(continuations[i]) for i in items],
                cache,
                shared,
                items=items,
                ending=lambda i: self.ending(prompts[i]),
            )

        for batch in plan.batches:
            for j, lp in zip(batch, run_with_backoff(batch, run)):
                out[live[j]] = lp
            if progress:
                progress(len(batch))
        if progress and len(live) < len(rows):
            progress(len(rows) - len(live))
        return out

    def plan_continuations(
        self, prompts: Sequence[Sequence[int]], continuations: Sequence[Sequence[int]]
    ) -> tuple[BatchPlan, list[list[int]]]:
        """The batches `token_logprobs` runs, over the items with a non-empty continuation.

        Returns:
            The plan (indices into those items) and, per item, the tokens a batch may share.
        """
        live = [i for i, c in enumerate(continuations) if c]
        # the plain forward keeps logits at every position: fewer tokens per batch
        budget = (
            self.token_budget
            if self.runner.decoder is not None
            else max(64, min(self.token_budget, PLAIN_LOGIT_BYTES // (4 * self._logit_width)))
        )
        # what a batch may share: the prompt but its last token, whose hidden state reads the
        # first continuation token; unique placeholders stand for the rest of the row
        shareable = [list(prompts[i][:-1]) + [-1 - i] * (len(continuations[i]) + 1) for i in live]
        if self.options.reuse_prefix and len(live) > 1:
            return plan_prefix_batches(shareable, budget, 0, 256, self.runner.grid), shareable
        return plan_batches([len(r) for r in shareable], budget), shareable

    def _logprob_batch(
        self, rows, cont_lens, prefix_cache=None, shared: int = 0, items=None, ending=None
    ) -> list[np.ndarray]:
        """Continuation log-probabilities of the rows, optionally after a cached prefix.

        An item whose states overflowed is refused (`engine.overflow`), named by `items` and `ending`.
        """
        torch = self._torch
        fwd = self.runner.forward(rows, cache=prefix_cache, shared=shared)
        # the state at token t predicts token t + 1: each row reads its tokens n - c - 1 .. n - 2
        index = np.concatenate(
            [np.arange(s + len(r) - c - 1, s + len(r) - 1) for s, r, c in zip(fwd.starts, rows, cont_lens)]
        )
        targets = torch.cat([torch.tensor(r[len(r) - c :]) for r, c in zip(rows, cont_lens)])  # (K,)
        with torch.inference_mode():
            picked = fwd.states[torch.from_numpy(index).to(fwd.states.device)]  # (K, H)
            check_finite(
                picked,
                np.repeat(np.arange(len(rows)), cont_lens),
                items if items is not None else range(len(rows)),
                self.options.dtype or "?",
                ending or (lambda i: "?"),
            )
            logp = self.runner.logprobs_at(picked, targets).cpu().numpy()
        self.head_rows += len(targets)
        return list(np.split(logp, np.cumsum(cont_lens)[:-1]))
