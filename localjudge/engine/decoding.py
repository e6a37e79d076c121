"""Greedy decoding for the transformers backend, optionally computing a shared prefix once.

A generate-and-parse judge, a reasoning step before the score, or a bias study's generators send
many prompts that share a long prefix (the metric's instructions, an article). With
`share_prefix` they are batched by `plan_prefix_batches`, the prefix is prefilled once (KV
cache), and each batch is decoded with explicit 4D masks over [prefix | pad … | suffix | new]:
the same attention a row would get alone, so the tokens equal transformers' `generate`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from localjudge.engine import masks
from localjudge.engine.batching import plan_batches
from localjudge.engine.core import BackendCore
from localjudge.engine.oom import run_with_backoff
from localjudge.engine.prefix import expand_cache, plan_prefix_batches, shared_prefix_len

Progress = Callable[[int], None]


class GreedyDecoding(BackendCore):
    """Generation methods of `HFBackend` (which provides the model, tokenizer, masks and prefill)."""

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: int,
        progress: Progress | None = None,
        share_prefix: bool = False,
    ) -> list[str]:
        """Greedy continuations of each prompt (deterministic), in input order.

        With `share_prefix`, prompts that share a long prefix (a metric's instructions, an
        article) are batched together and the prefix is computed once, as in scoring; otherwise
        transformers' `generate` runs on length-sorted batches.
        """
        torch = self._torch
        ids = [self.encode(p) for p in prompts]
        self.check_lengths(ids)
        if share_prefix and len(ids) > 1:
            return self._generate_shared(ids, max_new_tokens, progress)
        plan = plan_batches([len(r) + max_new_tokens for r in ids], self.token_budget)

        def run(batch: Sequence[int]) -> list[str]:
            x, real = masks.pad_rows([ids[i] for i in batch], self._pad_id)  # (B, W) each
            width = x.shape[1]
            with torch.inference_mode():
                gen = self.model.generate(
                    input_ids=x.to(self.device),
                    attention_mask=real.long().to(self.device),
                    max_new_tokens=max_new_tokens,
                    do_sample=False,
                    pad_token_id=self._pad_id,
                )
            return self.tokenizer.batch_decode(gen[:, width:].cpu(), skip_special_tokens=True)

        return _run_plan(plan.batches, run, len(ids), progress)

    def _generate_shared(self, ids: list[list[int]], max_new_tokens: int, progress: Progress | None) -> list[str]:
        """Greedy decoding with the prefix of each batch computed once (`plan_prefix_batches`)."""
        eos = self._eos_ids()
        plan = plan_prefix_batches(ids, self.token_budget, max_new_tokens, max_batch=64)
        prefix_memo: dict[tuple[int, ...], Any] = {}

        def run(batch: Sequence[int]) -> list[str]:
            rows = [ids[i] for i in batch]
            shared = shared_prefix_len(rows)
            if not shared:
                tokens = self._greedy_batch(rows, max_new_tokens, eos)
            else:
                cache = self._cached_prefill(prefix_memo, rows[0][:shared])
                tokens = self._greedy_batch([r[shared:] for r in rows], max_new_tokens, eos, cache, shared)
            return self.tokenizer.batch_decode(tokens, skip_special_tokens=True)

        return _run_plan(plan.batches, run, len(ids), progress)

    def _eos_ids(self) -> set[int]:
        """Token ids that end a generation: the tokenizer's and the generation config's EOS."""
        ids = {self.tokenizer.eos_token_id}
        extra = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        ids |= set(extra) if isinstance(extra, (list, tuple)) else {extra}
        return {i for i in ids if i is not None}

    def _greedy_batch(self, rows, max_new_tokens: int, eos: set[int], prefix_cache=None, shared: int = 0):
        """Greedy tokens of each row (cut after EOS), optionally after a cached shared prefix.

        The rows are left-padded after the prefix: [prefix | pad … | suffix | new tokens]. Every
        query sees the prefix, the real tokens of its own row up to its position and, on sliding
        layers, only keys less than `window` positions behind, as in a run of the row alone.
        """
        from transformers import DynamicCache

        torch = self._torch
        b, lengths = len(rows), [len(r) for r in rows]
        width = max(lengths)
        x, real = masks.pad_rows(rows, self._pad_id)  # (B, W) each
        lens = torch.tensor(lengths).unsqueeze(1)  # (B, 1)
        slot = torch.arange(width).unsqueeze(0)  # (1, W)
        positions = (slot - (width - lens)).clamp(min=0) + shared  # (B, W)
        kpos = torch.cat([torch.arange(shared).expand(b, shared), positions], 1)  # (B, K)
        kreal = torch.cat([torch.ones((b, shared), dtype=torch.bool), real], 1)  # (B, K)
        attn = self._attention(lengths, width, np.zeros((0, 0), dtype=bool), kpos, kreal, shared)
        cache = expand_cache(prefix_cache, b) if prefix_cache is not None else DynamicCache()
        step_ids, step_pos = x, positions
        qpos = positions[:, -1]  # (B,) position of each row's last token
        new, done = [], torch.zeros(b, dtype=torch.bool)
        with torch.inference_mode():
            for step in range(max_new_tokens):
                if step:
                    qpos = qpos + 1
                    kpos = torch.cat([kpos, qpos.unsqueeze(1)], 1)
                    kreal = torch.cat([kreal, torch.ones((b, 1), dtype=torch.bool)], 1)
                    attn = self._step_attention(kpos, kreal, qpos)
                    step_pos = qpos.unsqueeze(1)
                out = self.model(
                    input_ids=step_ids.to(self.device),
                    attention_mask=attn,
                    position_ids=step_pos.to(self.device),
                    use_cache=True,
                    logits_to_keep=1,
                    **{self._cache_kw: cache},
                )
                token = out.logits[:, -1].argmax(-1).cpu()  # (B,)
                token = torch.where(done, torch.full_like(token, self._pad_id), token)
                new.append(token)
                done |= torch.tensor([int(t) in eos for t in token])
                if bool(done.all()):
                    break
                step_ids = token.unsqueeze(1)
        tokens = torch.stack(new, 1).tolist()  # (B, steps)
        return [row[: next((j + 1 for j, t in enumerate(row) if t in eos), len(row))] for row in tokens]

    def _step_attention(self, kpos, kreal, qpos):
        """Mask of one decoding step (B, 1, 1, K), or one per attention layer type."""

        def build(window):
            m = kreal & (kpos <= qpos.unsqueeze(1))
            if window is not None:
                m &= (qpos.unsqueeze(1) - kpos) < window
            m = m[:, None, None, :]
            m = masks.additive(m, self.model.dtype) if self._eager else m
            return m.to(self.device)

        return self._per_layer_type(build)


def _run_plan(batches, run: Callable[[Sequence[int]], list[str]], n: int, progress: Progress | None) -> list[str]:
    """Texts of every batch (halved and retried on out-of-memory), in input order."""
    out = [""] * n
    for batch in batches:
        for i, text in zip(batch, run_with_backoff(batch, run)):
            out[i] = text
        if progress:
            progress(len(batch))
    return out
