"""What the batch-invariant engine costs, and how far bf16 sits from fp32, measured side by side.

One judge, SummEval dev summaries (`consistency_likelihood` prompts: article, instruction, summary;
for scoring the same text followed by a 1-10 question). In one run, repetitions interleaved:

  floor        a bare batched forward of the stock model over the likelihood rows (no prefix
               reuse, last-position logits only), as in `throughput_likelihood.py`
  stock        `batch_invariant=False`: stock linear layers and SDPA, grid 1, fp32 output layer
  invariant    the default: block attention, fixed-shape GEMMs, grid 64, fp32 output layer

for likelihood (prefix reuse on) and for score reading (1-10). Ratios are floor seconds / method
seconds. Then, per dtype, whether items alone and batched agree to the bit, and bf16 against fp32:
the largest change of a normalised expected score and of a per-token log-probability, with the
output layer in fp32 (the default) and in bf16.

    .venv/bin/python benchmarks/invariance.py --judge smollm2-135m --docs 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine
from throughput_likelihood import _articles, floor_pass

from localjudge import load_judge
from localjudge.engine.options import EngineOptions
from localjudge.scoring.likelihood import split_boundary

HERE = Path(__file__).parent
RESULTS_JSON, RESULTS_MD = HERE / "invariance_results.json", HERE / "invariance_results.md"


def _items(judge, docs: int):
    groups = _articles(judge, docs)
    pairs = [split_boundary(p, c) for ps, cs in groups for p, c in zip(ps, cs)]
    prompts = [judge.backend.encode(p) for p, _ in pairs]
    conts = [judge.backend.encode_continuation(c) for _, c in pairs]
    questions = [p + c + "\n\nRate the summary's consistency with the article from 1 to 10. Score:" for p, c in pairs]
    return prompts, conts, questions


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _speed(name: str, dtype: str, docs: int, reps: int) -> dict:
    stock = load_judge(name, options=EngineOptions(dtype=dtype, device="cpu", batch_invariant=False))
    inv = load_judge(name, options=EngineOptions(dtype=dtype, device="cpu"))
    prompts, conts, questions = _items(stock, docs)
    rows = [p + c for p, c in zip(prompts, conts)]
    from localjudge.engine.batching import plan_batches

    plan = plan_batches([len(r) for r in rows], stock.backend.token_budget)
    times: dict[str, list[float]] = {k: [] for k in ("floor", "stock_ll", "inv_ll", "stock_score", "inv_score")}
    for _ in range(reps):
        times["floor"].append(_timed(lambda: floor_pass(stock.backend, rows, plan)))
        times["stock_ll"].append(_timed(lambda: stock.backend.token_logprobs(prompts, conts)))
        times["inv_ll"].append(_timed(lambda: inv.backend.token_logprobs(prompts, conts)))
        times["stock_score"].append(_timed(lambda: stock.score_texts(questions, 1, 10)))
        times["inv_score"].append(_timed(lambda: inv.score_texts(questions, 1, 10)))
    best = {k: min(v) for k, v in times.items()}
    return {
        "judge": name,
        "dtype": dtype,
        "items": len(rows),
        "tokens": sum(len(r) for r in rows),
        "seconds": best,
        "likelihood_vs_floor": {"stock": best["floor"] / best["stock_ll"], "invariant": best["floor"] / best["inv_ll"]},
        "scoring_vs_floor": {
            "stock": best["floor"] / best["stock_score"],
            "invariant": best["floor"] / best["inv_score"],
        },
        "invariant_vs_stock": {
            "likelihood": best["stock_ll"] / best["inv_ll"],
            "scoring": best["stock_score"] / best["inv_score"],
        },
        "gemm": inv.info.gemm,
        "bitwise": inv.info.bitwise,
    }


def _deviation(name: str, docs: int) -> dict:
    """bf16 against fp32 on the same items: normalised expected score and per-token log-probability."""
    ref = load_judge(name, options=EngineOptions(dtype="float32", device="cpu"))
    prompts, conts, questions = _items(ref, docs)
    want = ref.score_texts(questions, 1, 10)
    want_ll = ref.backend.token_logprobs(prompts, conts)
    out: dict = {"items": len(questions)}
    for head in (True, False):
        low = load_judge(name, options=EngineOptions(dtype="bfloat16", device="cpu", fp32_head=head))
        got = low.score_texts(questions, 1, 10)
        got_ll = low.backend.token_logprobs(prompts, conts)
        out["fp32_head" if head else "bf16_head"] = {
            "max_normalized_delta": float(max(abs(a.normalized - b.normalized) for a, b in zip(want, got))),
            "max_token_logprob_delta": float(max(np.abs(a - b).max() for a, b in zip(want_ll, got_ll))),
            "max_mean_logprob_delta": float(max(abs(a.mean() - b.mean()) for a, b in zip(want_ll, got_ll))),
        }
    return out


def _bitwise(name: str, dtype: str, docs: int) -> dict:
    """Items alone against the same items batched (two budgets, prefix reuse on and off)."""
    judge = load_judge(name, options=EngineOptions(dtype=dtype, device="cpu"))
    prompts, conts, questions = _items(judge, docs)
    alone = [judge.score_texts([q], 1, 10)[0].probs for q in questions]
    ll_alone = [judge.backend.token_logprobs([p], [c])[0] for p, c in zip(prompts, conts)]
    same, total = 0, 0
    for budget in (1024, 8192):
        for reuse in (True, False):
            other = load_judge(name, options=judge.options.replace(token_budget=budget, reuse_prefix=reuse))
            got = other.score_texts(questions[::-1], 1, 10)[::-1]
            lls = other.backend.token_logprobs(prompts[::-1], conts[::-1])[::-1]
            same += sum(g.probs == a for g, a in zip(got, alone)) + sum(
                np.array_equal(a, b) for a, b in zip(ll_alone, lls)
            )
            total += 2 * len(questions)
    return {"dtype": dtype, "equal": int(same), "compared": total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judge", default="smollm2-135m")
    parser.add_argument("--docs", type=int, default=2, help="SummEval articles (16 summaries each) for fp32 speed")
    parser.add_argument("--bf16-docs", type=int, default=1, help="articles for bf16 speed, deviation and bit checks")
    parser.add_argument("--reps", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    result = {
        "machine": machine("torch_threads", "torch", "transformers"),
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "speed": [
            _speed(args.judge, "float32", args.docs, args.reps),
            _speed(args.judge, "bfloat16", args.bf16_docs, 1),
        ],
        "bf16_vs_fp32": _deviation(args.judge, args.bf16_docs),
        "bitwise": [_bitwise(args.judge, d, args.bf16_docs) for d in ("float32", "bfloat16")],
    }
    RESULTS_JSON.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
