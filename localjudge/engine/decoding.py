"""Greedy decoding for the transformers backend, optionally computing a shared prefix once.

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
from typing import Any

import numpy as np

from localjudge.engine.batching import plan_batches
from localjudge.engine.core import BackendCore
from localjudge.engine.oom import run_with_backoff
from localjudge.engine.overflow import check_finite
from localjudge.engine.prefix import plan_prefix_batches, shared_prefix_len

Progress = Callable[[int], None]


class GreedyDecoding(BackendCore):
    """Generation methods of `HFBackend` (which provides the model, tokenizer and runner)."""

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: int,
        progress: Progress | None = None,
        share_prefix: bool = False,
    ) -> list[str]:
        """Greedy continuations of each prompt (deterministic), in input order.

        With `share_prefix`, prompts that share a long prefix (a metric's instructions, an
        article) are batched together and the prefix is computed once, as in scoring, when the
        options' `reuse_prefix` is on (as every record says); otherwise, or when it is off, the
        prompts run whole in length-sorted batches.
        """
        ids = [self.encode(p) for p in prompts]
        self.check_lengths(ids)
        eos = self._eos_ids()
        grid = self.runner.grid
        share_prefix = share_prefix and self.options.reuse_prefix
        if share_prefix and len(ids) > 1:
            plan = plan_prefix_batches(ids, self.token_budget, max_new_tokens, 64, grid)
        else:
            plan = plan_batches([len(r) + max_new_tokens for r in ids], self.token_budget)
        prefix_memo: dict[tuple[int, ...], Any] = {}

        def run(batch: Sequence[int]) -> list[str]:
            rows = [ids[i] for i in batch]
            shared = shared_prefix_len(rows, grid) if share_prefix else 0
            cache = self._cached_prefill(prefix_memo, rows[0][:shared]) if shared else None
            tokens = self._greedy_batch(
                [r[shared:] for r in rows],
                max_new_tokens,
                eos,
                cache,
                shared,
                items=batch,
                ending=lambda i: self.ending(ids[i]),
            )
            return self.tokenizer.batch_decode(tokens, skip_special_tokens=True)

        return _run_plan(plan.batches, run, len(ids), progress)

    def _eos_ids(self) -> set[int]:
        """Token ids that end a generation: the tokenizer's and the generation config's EOS."""
        ids = {self.tokenizer.eos_token_id}
        extra = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        ids |= set(extra) if isinstance(extra, (list, tuple)) else {extra}
        return {i for i in ids if i is not None}

    def _greedy_batch(
        self, rows, max_new_tokens: int, eos: set[int], prefix_cache=None, shared: int = 0, items=None, ending=None
    ):
        """Greedy tokens of each row (cut after EOS), optionally after a cached shared prefix.

        Each new token sees the prefix, the real tokens of its own row, its own earlier new tokens
        and, on sliding layers, only keys less than `window` positions behind, as in a run of the
        row alone (`Runner.step`).
        """
        torch = self._torch
        fwd = self.runner.forward(rows, cache=prefix_cache, shared=shared, keep_cache=True)
        last = torch.from_numpy(fwd.starts + np.array([len(r) for r in rows]) - 1)  # (B,) each row's last token
        with torch.inference_mode():
            state = fwd.states[last.to(fwd.states.device)]  # (B, H)
            new, done = [], torch.zeros(len(rows), dtype=torch.bool)
            names = items if items is not None else range(len(rows))
            for step in range(max_new_tokens):
                live = (~done).nonzero().flatten().tolist()  # a finished row's later states are never read
                check_finite(state[live], live, names, self.options.dtype or "?", ending or (lambda i: "?"))
                token = self.runner.argmax_at(state).cpu()  # (B,)
                token = torch.where(done, torch.full_like(token, self._pad_id), token)
                new.append(token)
                done |= torch.tensor([int(t) in eos for t in token])
                if bool(done.all()) or step == max_new_tokens - 1:
                    break
                state = self.runner.step(token, fwd, step)
        tokens = torch.stack(new, 1).tolist()  # (B, steps)
        return [row[: next((j + 1 for j, t in enumerate(row) if t in eos), len(row))] for row in tokens]


def _run_plan(batches, run: Callable[[Sequence[int]], list[str]], n: int, progress: Progress | None) -> list[str]:
    """Texts of every batch (halved and retried on out-of-memory), in input order."""
    out = [""] * n
    for batch in batches:
        for i, text in zip(batch, run_with_backoff(batch, run)):
            out[i] = text
        if progress:
            progress(len(batch))
    return out
