"""The GPU check: throughput, MFU, token budgets, out-of-memory halving and bitwise batch invariance.

One script, no network; never run on a GPU yet, so its run time there is not measured. For each
registry judge's real architecture (Llama-3.1-8B, Qwen2.5-7B, Gemma-2-9B by default; `gpu_configs.json`)
a random-weight bf16 model is built on the GPU (fp32 on a CPU) and wrapped with the public
`Judge.from_model` (see `_gpu_workload.py`):

- throughput: G-Eval-shaped scoring (1-10 scale; three shared 300-token instructions, 150-450-token
  cases) and SummEval-shaped likelihood (400-token articles, four 40-80-token summaries each),
  without and with prefix reuse, side by side with a bare forward floor over the same tokens and
  token budget, repetitions interleaved; as ratios to the floor and as MFU: the useful FLOPs of
  the unpadded sequences against a bf16 matmul measured in the same run;
- token budget sweep: scoring with prefix reuse at several budgets;
- out-of-memory halving: on a GPU a real out-of-memory error under a lowered memory cap and a huge
  budget; on the CPU one raised by the model above two rows; the halvings counted from the log and
  the results compared with an unconstrained run;
- bitwise (`_gpu_bitwise.py`): a few items alone vs among random companions, two budgets, prefix
  reuse off and on: score distributions, likelihood log-probabilities and greedy generations;
- precision (`--precision`, `_gpu_precision.py`): fp32, bf16 and fp16 side by side on the Qwen2.5-Coder
  0.5B and 1.5B and Qwen2.5-7B shapes: speed, bitwise, distance from fp32, items the overflow check refused.

A run is appended to `gpu_results.md` with the device described (`--results` to write elsewhere).
`--tiny` runs every section on toy shapes anywhere (the CPU check `test_gpu_bench.py` runs).
`--engine-option KEY=VALUE` passes extra `EngineOptions` fields (e.g. batch invariance) to every judge.

    python -m benchmarks.gpu.gpu
    python -m benchmarks.gpu.gpu --tiny --results /tmp/gpu_tiny.md
    python -m benchmarks.gpu.gpu --models llama3.2-1b --items 64
    python -m benchmarks.gpu.gpu --precision       # + fp16 / bf16 / fp32 on the 0.5B, 1.5B and 7B Qwen shapes
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import math
import statistics
import sys
import time
from pathlib import Path

import torch

from benchmarks.gpu import _gpu_bitwise as bitwise_section
from benchmarks.gpu import (
    _gpu_oom,
    _gpu_precision,
)
from benchmarks.gpu import _gpu_workload as W
from benchmarks.lib.common import machine
from benchmarks.lib.measure import matmul_peak, useful_flops

HERE = Path(__file__).resolve().parent

LOW, HIGH = 1, 10
DEFAULT_MODELS = ["llama3.1-8b", "qwen2.5-7b", "gemma2-9b"]
RESULTS = HERE / "gpu_results.md"


def _timed(fn, device: str) -> tuple[float, int | None]:
    """Seconds and peak device memory (bytes; None on the CPU) of one call."""
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    W.sync(device)
    t = time.perf_counter()
    fn()
    W.sync(device)
    seconds = time.perf_counter() - t
    return seconds, torch.cuda.max_memory_allocated() if device.startswith("cuda") else None


def throughput(name, model, tok, args, device, peak) -> dict:
    """Scoring and likelihood, floor vs lj vs lj+prefix, interleaved repetitions."""
    judges = {r: W.make_judge(name, model, tok, device, args.budget, r, args.extra) for r in (False, True)}
    texts = W.geval_prompts(args.items, args.tiny)
    prompts, conts = W.likelihood_pairs(args.articles, 4, args.tiny)
    ids = [tok(t)["input_ids"] for t in texts]
    tree = judges[False].score_tree(LOW, HIGH)
    tree_tokens = [int(x) for x in tree.token_ids[1:]]
    rows = [tok(p)["input_ids"] + tok(c, add_special_tokens=False)["input_ids"] for p, c in zip(prompts, conts)]
    pad = tok.pad_token_id
    methods = {
        "score floor": lambda: W.floor_scoring(model, ids, tree_tokens, args.budget, pad, device),
        "score lj": lambda: judges[False].score_texts(texts, LOW, HIGH),
        "score lj+prefix": lambda: judges[True].score_texts(texts, LOW, HIGH),
        "loglik floor": lambda: W.floor_likelihood(model, rows, args.budget, pad, device),
        "loglik lj": lambda: judges[False].loglikelihood(prompts, conts),
        "loglik lj+prefix": lambda: judges[True].loglikelihood(prompts, conts),
    }
    for fn in methods.values():
        fn()  # warm-up: kernels, trees, the head split check
    times: dict[str, list[float]] = {k: [] for k in methods}
    mem: dict[str, int | None] = dict.fromkeys(methods)
    for _ in range(args.reps):
        for key, fn in methods.items():
            seconds, used = _timed(fn, device)
            times[key].append(seconds)
            mem[key] = used if used is None else max(used, mem[key] or 0)
    body = W.body_params(model)
    config = model.config.get_text_config()
    work = {
        "score": sum(useful_flops(config, body, len(r) + len(tree_tokens), len(tree_tokens) + 1) for r in ids),
        "loglik": sum(useful_flops(config, body, len(r), len(c)) for r, c in zip(rows, conts)),
    }
    out = {}
    for key in methods:
        kind = key.split()[0]
        t = statistics.median(times[key])
        floor = statistics.median(times[f"{kind} floor"])
        n = len(texts) if kind == "score" else len(prompts)
        out[key] = {
            "n": n,
            "items_per_s": n / t,
            "x_floor": floor / t,
            "mfu": work[kind] / t / peak,
            "peak_mem": mem[key],
        }
    return {
        "methods": out,
        "mean_tokens": {"score": statistics.mean(map(len, ids)), "loglik": statistics.mean(map(len, rows))},
        "attn": getattr(config, "_attn_implementation", None),
    }


def budget_sweep(name, model, tok, args, device, floor_items_per_s) -> list[dict]:
    texts = W.geval_prompts(args.items, args.tiny)
    out = []
    for budget in args.sweep:
        judge = W.make_judge(name, model, tok, device, budget, True, args.extra)
        seconds, used = _timed(lambda j=judge: j.score_texts(texts, LOW, HIGH), device)
        rate = len(texts) / seconds
        out.append({"budget": budget, "items_per_s": rate, "x_floor": rate / floor_items_per_s, "peak_mem": used})
    return out


def bench_model(name: str, args, device: str, peak: float, deadline: float) -> dict:
    t0 = time.perf_counter()
    tok = W.tokenizer()
    model = W.build_model(name, args.tiny, device, args.dtype)
    out = {"model": name, "build_s": time.perf_counter() - t0, "skipped": []}
    out["throughput"] = throughput(name, model, tok, args, device, peak)
    floor_rate = out["throughput"]["methods"]["score floor"]["items_per_s"]
    sections = [
        ("sweep", lambda: budget_sweep(name, model, tok, args, device, floor_rate)),
        ("oom", lambda: _gpu_oom.oom_halving(name, model, tok, args, device)),
        ("bitwise", lambda: _bitwise(name, model, tok, args, device)),
    ]
    for key, fn in sections:
        if time.perf_counter() > deadline:
            out["skipped"].append(key)
            continue
        out[key] = fn()
    out["seconds"] = time.perf_counter() - t0
    return out


def _bitwise(name, model, tok, args, device) -> dict:
    texts = W.geval_prompts(args.bitwise_items * 3, args.tiny, seed=7)
    _, conts = W.likelihood_pairs(args.bitwise_items, 3, args.tiny, seed=8)
    # each item's prompt is scored and continued greedily, and its continuation's likelihood read
    items = list(zip(texts, conts))
    targets, pool = items[: args.bitwise_items], items[args.bitwise_items :]
    make = lambda budget, reuse: W.make_judge(name, model, tok, device, budget, reuse, args.extra)  # noqa: E731
    return bitwise_section.bitwise(make, targets, pool, args.bitwise_budgets, args.trials)


def describe(device: str) -> str:
    m = machine("torch", "transformers", "python")
    cpu = f"{m['cpu']} ({m['cores']} cores)"
    soft = f"torch {m['torch']}, transformers {m['transformers']}, Python {m['python']}"
    if not device.startswith("cuda"):
        return f"CPU only: {cpu}; {soft}"
    p = torch.cuda.get_device_properties(0)
    gpu = f"{p.name}, {p.total_memory / 2**30:.0f} GiB, compute {p.major}.{p.minor}, CUDA {torch.version.cuda}"
    return f"{gpu}; host {cpu}; {soft}"


def markdown(run: dict) -> str:
    gib = lambda b: "-" if b is None else f"{b / 2**30:.1f}"  # noqa: E731
    lines = [f"## {run['date']}: {run['device']}", ""]
    lines.append(
        f"{'Tiny shapes (a check that the script runs, not a measurement). ' if run['tiny'] else ''}"
        f"{run['dtype']} matmul peak measured: {run['peak'] / 1e12:.1f} TFLOP/s. Budget {run['budget']}, "
        f"{run['reps']} interleaved repetitions, median. Engine options added: {run['extra'] or 'none'}."
    )
    for r in run["results"]:
        t = r["throughput"]
        lines += [
            "",
            f"### {r['model']} (attention {t['attn']}; built in {r['build_s']:.0f} s, section {r['seconds']:.0f} s)",
        ]
        lines += ["", "| method | items | items/s | × floor | MFU | peak GiB |", "|---|---|---|---|---|---|"]
        for k, v in t["methods"].items():
            rate = f"{v['items_per_s']:.2f} | {v['x_floor']:.2f} | {v['mfu']:.1%}"
            lines.append(f"| {k} | {v['n']} | {rate} | {gib(v['peak_mem'])} |")
        tokens = t["mean_tokens"]
        lines.append(f"\nmean tokens per row: scoring {tokens['score']:.0f}, likelihood {tokens['loglik']:.0f}")
        if "sweep" in r:
            lines += ["", "| budget (lj+prefix scoring) | items/s | × floor | peak GiB |", "|---|---|---|---|"]
            lines += [
                f"| {s['budget']} | {s['items_per_s']:.2f} | {s['x_floor']:.2f} | {gib(s['peak_mem'])} |"
                for s in r["sweep"]
            ]
        if "oom" in r:
            o = r["oom"]
            outcome = o["error"] or f"{o['halvings']} halvings, max |Δp| vs unconstrained {o['max_abs_diff']:.2g}"
            lines.append(f"\nout-of-memory halving ({o['how']}): {outcome}")
        if "bitwise" in r:
            lines += ["", *bitwise_section.markdown(r["bitwise"])]
        if r["skipped"]:
            lines.append(f"\nskipped (time limit): {', '.join(r['skipped'])}")
    if run.get("precision"):
        lines += ["", "### fp32, bf16 and fp16 (`--precision`; random weights: see `_gpu_precision.py`)"]
        for p in run["precision"]:
            lines += ["", *_gpu_precision.markdown(p)]
    if run["skipped_models"]:
        lines.append(f"\nmodels skipped (time limit): {', '.join(run['skipped_models'])}")
    return "\n".join(lines) + "\n"


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tiny", action="store_true", help="toy shapes: every section, anywhere (the CPU check)")
    ap.add_argument("--models", nargs="+", default=DEFAULT_MODELS, choices=list(W.CONFIGS))
    ap.add_argument("--items", type=int, default=None, help="scoring prompts (default 128 GPU, 12 tiny)")
    ap.add_argument("--articles", type=int, default=None, help="likelihood articles, 4 summaries each (32 / 3)")
    ap.add_argument("--budget", type=int, default=None, help="token budget (default 16384 GPU, 1024 tiny)")
    ap.add_argument("--reps", type=int, default=None, help="timed repetitions, interleaved (default 2 GPU, 1 tiny)")
    ap.add_argument("--trials", type=int, default=None, help="bitwise: batches per target, configuration and kind")
    ap.add_argument("--bitwise-items", type=int, default=None, help="bitwise: target items (default 3 GPU, 2 tiny)")
    ap.add_argument("--oom-headroom-gib", type=float, default=2.0, help="GPU memory cap above the weights")
    ap.add_argument("--deadline", type=float, default=None, help="seconds after which later sections are skipped")
    ap.add_argument("--engine-option", action="append", default=[], help="KEY=VALUE (JSON value) EngineOptions field")
    ap.add_argument("--results", type=Path, default=None, help="markdown file to append to (default gpu_results.md)")
    ap.add_argument("--json", type=Path, default=None, help="also write the run as JSON here")
    ap.add_argument(
        "--precision",
        action="store_true",
        help="also fp32, bf16 and fp16 side by side on the Qwen 0.5B, 1.5B and 7B shapes (`_gpu_precision.py`)",
    )
    args = ap.parse_args(argv)
    args.extra = {k: json.loads(v) for k, _, v in (o.partition("=") for o in args.engine_option)}
    gpu = torch.cuda.is_available()
    tiny = args.tiny
    args.dtype = torch.bfloat16 if gpu else torch.float32
    args.items = args.items or (8 if tiny else 128)
    args.articles = args.articles or (2 if tiny else 32)
    args.budget = args.budget or (1024 if tiny else 16384)
    args.reps = args.reps or (1 if tiny else 2)
    args.trials = args.trials or (1 if tiny else 2)
    args.bitwise_items = args.bitwise_items or (2 if tiny else 3)
    args.deadline = args.deadline or (math.inf if tiny else 270.0)  # the CPU check runs every section
    args.precision_seconds = 240.0  # the precision section's own share after the deadline
    args.sweep = [256, 2048] if tiny else [4096, 8192, 16384, 32768, 65536]
    args.oom_budget = 4096 if tiny or not gpu else 262144
    args.bitwise_budgets = [args.budget, max(64, args.budget // 8)]
    if args.results is None and not args.tiny:
        args.results = RESULTS
    return args


def main(argv=None) -> dict:
    args = parse_args(argv)
    start = time.perf_counter()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    threads = torch.get_num_threads()
    if device == "cpu":
        torch.set_num_threads(1)  # toy forwards are per-op overhead; a second thread only spins
    try:
        return _run(args, device, start)
    finally:
        torch.set_num_threads(threads)


def _run(args, device: str, start: float) -> dict:
    peak = matmul_peak(args.dtype, device, size=512 if args.tiny else 8192, seconds=0.5 if args.tiny else 2.0)
    run = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "device": describe(device),
        "tiny": args.tiny,
        "dtype": str(args.dtype).removeprefix("torch."),
        "peak": peak,
        "budget": args.budget,
        "reps": args.reps,
        "extra": args.extra,
        "results": [],
        "skipped_models": [],
    }
    for name in args.models:
        if time.perf_counter() > start + args.deadline:
            run["skipped_models"].append(name)
            continue
        run["results"].append(bench_model(name, args, device, peak, start + args.deadline))
        gc.collect()  # the model went with bench_model's frame: free it before the next one is built
        if device == "cuda":
            torch.cuda.empty_cache()
        print(f"{name}: {run['results'][-1]['seconds']:.0f} s", file=sys.stderr, flush=True)
    if args.precision:
        run["precision"] = []
        # tiny: one shape is the check that the section runs (every dtype costs a model build and a bitwise pass)
        for name in _gpu_precision.PRECISION_MODELS[: 1 if args.tiny else None]:
            if time.perf_counter() > start + args.deadline + args.precision_seconds:
                run["skipped_models"].append(f"{name} (precision)")
                continue
            run["precision"].append(_gpu_precision.precision(name, args, device))
            gc.collect()
            if device == "cuda":
                torch.cuda.empty_cache()
            print(f"{name} precision: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    run["seconds"] = time.perf_counter() - start
    text = markdown(run)
    print(text)
    if args.results:
        with open(args.results, "a", encoding="utf-8") as f:
            f.write("\n" + text)
    if args.json:
        args.json.write_text(json.dumps(run, indent=1, default=str))
    return run


if __name__ == "__main__":
    main()
