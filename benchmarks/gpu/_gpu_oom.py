"""Out-of-memory halving, exercised: scoring that runs out of memory must still give the same scores.

On a GPU the error is real: the process's memory is capped just above what the weights hold and
the token budget is huge, so the first batches do not fit and the engine halves them
(`localjudge.engine.oom`). A CPU cannot run out, so there the model raises CUDA's error itself
when a forward holds more tokens than two prompts with their score tree (rows are packed into
one sequence by the batch-invariant engine, so tokens, not rows, tell the batch's size). The
engine's back-off warnings are counted from its log.
"""

from __future__ import annotations

import logging

import torch

from benchmarks.gpu import _gpu_workload as W

LOW, HIGH = 1, 10


class _OOMCount(logging.Handler):
    """Counts the engine's out-of-memory back-off warnings."""

    def __init__(self):
        super().__init__()
        self.n = 0

    def emit(self, record):
        self.n += "out of memory" in record.getMessage()


def oom_halving(name, model, tok, args, device) -> dict:
    """Scoring that runs out of memory: halvings counted, results compared with an unconstrained run."""
    texts = W.geval_prompts(args.items, args.tiny)
    expected = W.make_judge(name, model, tok, device, args.budget, False, args.extra).score_texts(texts, LOW, HIGH)
    judge = W.make_judge(name, model, tok, device, args.oom_budget, False, args.extra)
    counter = _OOMCount()
    logging.getLogger("localjudge").addHandler(counter)
    hook = None
    if device.startswith("cuda"):  # a real one: a memory cap just above what is held now
        torch.cuda.empty_cache()
        total = torch.cuda.get_device_properties(0).total_memory
        cap = min(1.0, (torch.cuda.memory_allocated() + args.oom_headroom_gib * 2**30) / total)
        torch.cuda.set_per_process_memory_fraction(cap)
        how = f"memory capped at {cap * total / 2**30:.1f} GiB, budget {args.oom_budget}"
    else:  # the CPU cannot run out: the model raises CUDA's error above two prompts' tokens
        limit = 2 * (max(len(judge.backend.encode(t)) for t in texts) + 64)  # 64: the 1-10 tree and grid pads

        def hook(module, a, kw):
            x = kw.get("input_ids") if kw.get("input_ids") is not None else kw.get("inputs_embeds")
            if x is not None and x.shape[0] * x.shape[1] > limit:
                raise torch.cuda.OutOfMemoryError("CUDA out of memory (raised by the benchmark above 2 prompts)")

        hook = model.get_decoder().register_forward_pre_hook(hook, with_kwargs=True)
        how = f"model raises out-of-memory above {limit} tokens (2 prompts), budget {args.oom_budget}"
    try:
        got = judge.score_texts(texts, LOW, HIGH)
        error = None
    except Exception as exc:  # reported, not hidden: the section failed
        got, error = None, f"{type(exc).__name__}: {str(exc)[:120]}"
    finally:
        logging.getLogger("localjudge").removeHandler(counter)
        if hook is not None:
            hook.remove()
        if device.startswith("cuda"):
            torch.cuda.set_per_process_memory_fraction(1.0)
            torch.cuda.empty_cache()
    diff = None
    if got is not None:
        diff = max(abs(a.probs[v] - b.probs[v]) for a, b in zip(expected, got) for v in range(LOW, HIGH + 1))
    return {"how": how, "halvings": counter.n, "error": error, "max_abs_diff": diff}
