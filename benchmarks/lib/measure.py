"""Measurement helpers shared by `throughput.py` (CPU) and `gpu.py`: peak memory, matmul peak, FLOPs, baselines.

The floor is a bare batched forward over the batches and padding localjudge plans (last-position
logits only); `generate_batched` is the generate-and-parse baseline's generation. Both take a
model and token ids directly, so they measure the same work on any architecture.
"""

from __future__ import annotations

import ctypes
import gc
import threading
import time

import psutil
import torch

from localjudge.engine.batching import plan_batches


def _malloc_trim() -> None:
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:  # not glibc
        pass


class PeakRSS:
    """Peak resident memory above the level at entry, sampled every 2 ms (CPU); CUDA peak on GPU."""

    def __enter__(self):
        gc.collect()
        _malloc_trim()  # give freed heap back to the OS, or the baseline hides this phase's peak
        self.proc = psutil.Process()
        self.base = self.proc.memory_info().rss
        self.peak = self.base
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._sample, daemon=True)
        self._t.start()
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        return self

    def _sample(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            time.sleep(0.002)

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()
        self.delta = self.peak - self.base
        if torch.cuda.is_available():
            self.delta = torch.cuda.max_memory_allocated()


def matmul_peak(dtype: torch.dtype, device: str, size: int = 2048, seconds: float = 2.0) -> float:
    """Measured FLOP/s of a large square matmul in `dtype` (the device's practical peak)."""
    a = torch.randn(size, size, device=device).to(dtype)
    b = torch.randn(size, size, device=device).to(dtype)
    torch.matmul(a, b)
    best, deadline = 0.0, time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(4):
            torch.matmul(a, b)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        best = max(best, 4 * 2 * size**3 / (time.perf_counter() - t))
    return best


def useful_flops(config, n_params_body: int, seq_len: int, kept: float) -> float:
    """Forward FLOPs of one unpadded sequence: 2·params·tokens + causal attention + `kept` output rows."""
    hidden = config.hidden_size
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or hidden // heads
    attn = 4 * config.num_hidden_layers * heads * head_dim * seq_len * (seq_len + 1) / 2
    return 2 * n_params_body * seq_len + attn + 2 * config.vocab_size * hidden * kept


def floor_pass(model, ids, plan, tree_tokens, pad_id, device):
    """The same batches and padding as localjudge, a plain 2D mask, last-position logits only."""
    t = len(tree_tokens)
    for batch in plan.batches:
        rows = [ids[i] for i in batch]
        width = max(len(r) for r in rows)
        x = torch.full((len(rows), width + t), pad_id, dtype=torch.long)
        attn = torch.zeros_like(x)
        for b, r in enumerate(rows):
            x[b, width - len(r) : width] = torch.tensor(r)
            attn[b, width - len(r) :] = 1
        x[:, width:] = torch.tensor(tree_tokens)
        with torch.inference_mode():
            model(input_ids=x.to(device), attention_mask=attn.to(device), logits_to_keep=1, use_cache=False)


def generate_batched(model, tokenizer, ids, new_tokens, budget, pad_id, device, **sample):
    """Batched left-padded generation of exactly `new_tokens` tokens per row, by token budget."""
    texts = [""] * len(ids)
    plan = plan_batches([len(r) + new_tokens for r in ids], budget)
    for batch in plan.batches:
        width = max(len(ids[i]) for i in batch)
        x = torch.full((len(batch), width), pad_id, dtype=torch.long)
        attn = torch.zeros_like(x)
        for b, i in enumerate(batch):
            x[b, width - len(ids[i]) :] = torch.tensor(ids[i])
            attn[b, width - len(ids[i]) :] = 1
        with torch.inference_mode():
            gen = model.generate(
                input_ids=x.to(device),
                attention_mask=attn.to(device),
                pad_token_id=pad_id,
                max_new_tokens=new_tokens,
                min_new_tokens=new_tokens,
                **sample,
            )
        rep = gen.shape[0] // len(batch)
        decoded = tokenizer.batch_decode(gen[:, width:].cpu(), skip_special_tokens=True)
        for b, i in enumerate(batch):
            texts[i] = "\x00".join(decoded[b * rep : (b + 1) * rep])
    return texts
