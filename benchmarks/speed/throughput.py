"""Throughput of exact tree scoring against the hardware floor and the usual alternatives.

One run, one judge, one dtype, the same G-Eval prompts (builtin correctness / faithfulness /
completeness over `localjudge/examples/rag_demo.jsonl`, answers crossed between cases so there are
100 distinct cases per metric, ~300-700 tokens each), measured side by side with repetitions
interleaved so background load hits every method alike:

  floor        a bare batched forward over the very batches localjudge plans (same padding, the
               score tree's tokens appended), logits of the last position only: no masks of ours,
               no log-softmax, no score math. What any scorer must at least pay.
  lj           `judge.score_texts`, prefix reuse off (default tree tolerance: improbable score-tree
               nodes are left unread within a checked 1e-6 bound).
  lj-exact     the same with tree tolerance 0: the output layer at every tree node.
  lj+prefix    `judge.score_texts`, prefix reuse on (shared instructions computed once).
  naive        one item at a time, one forward per score candidate, full-sequence logits.
  gen4         batched greedy generation of 4 tokens, parse the integer.
  gen100       batched greedy generation of 100 tokens (a reason, then a score).
  geval20      the original G-Eval estimate: 20 samples at temperature 1 per item, averaged.

The slow baselines run on a few items (evenly spread over the length order); their per-item and
per-token rates are extrapolated, which the markdown says. Results accumulate per (judge, dtype)
in `throughput_results.json` next to this file; the markdown table is rebuilt from all of them,
including the bf16-vs-fp32 score deviation when both dtypes of a judge are present.

    .venv/bin/python -m benchmarks.speed.throughput --judge smollm2-135m --dtype float32 --items 60
    .venv/bin/python -m benchmarks.speed.throughput --likelihood --judge smollm2-135m   # 800 dev summaries

`--likelihood` measures likelihood scoring instead (`throughput_likelihood.py`): the 800 SummEval
dev summaries scored by the `consistency_likelihood` metric, against the bare forward floor over
the same tokens, with and without prefix reuse.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import re
import statistics
import time
from pathlib import Path

import numpy as np
import torch

import localjudge
from benchmarks.lib.common import kept_section, machine
from benchmarks.lib.measure import PeakRSS, floor_pass, generate_batched, matmul_peak, useful_flops
from benchmarks.speed import throughput_likelihood as TL
from localjudge.io.cases import load_cases
from localjudge.kinds.geval import prompts as P
from localjudge.metrics import builtin_metric

HERE = Path(__file__).parent
RESULTS_JSON = HERE / "throughput_results.json"
RESULTS_MD = HERE / "throughput_results.md"
METRICS = ("correctness", "faithfulness", "completeness")
SLOW = ("naive", "gen100", "geval20")
MACHINE = ("torch_threads", "torch", "gpu")  # what throughput_results.json records beside cpu and cores


# -- inputs -----------------------------------------------------------------------------------------


def build_texts(judge, n: int) -> list[str]:
    """n rendered G-Eval prompts: metrics round-robin, case i's question with case j's answer."""
    cases = load_cases(localjudge.__path__[0] + "/examples/rag_demo.jsonl")
    metrics = [builtin_metric(m) for m in METRICS]
    pairs = [(i, (i + s) % len(cases)) for s in range(len(cases)) for i in range(len(cases))]
    texts = []
    for k in range(n):
        m = metrics[k % len(metrics)]
        i, j = pairs[k // len(metrics)]
        case = cases[i].model_copy(update={"actual_output": cases[j].actual_output})
        texts.append(judge.render(P.SYSTEM, P.user_message(m, m.steps, case), P.SCORE_PREFILL))
    return texts


def spread(n: int, k: int, lengths: list[int]) -> list[int]:
    """k item indices evenly spread over the length order, so their mean length is typical."""
    order = sorted(range(n), key=lambda i: lengths[i])
    return [order[int((q + 0.5) * n / k)] for q in range(min(k, n))]


# -- the methods (the floor, batched generation and peak memory are in _measure.py) ----------------


def naive_loop(model, tokenizer, texts, low, high, device):
    """One item and one score candidate per forward; full logits; candidate log-probs summed."""
    out = []
    for text in texts:
        head = tokenizer(text)["input_ids"]
        logps = []
        for s in range(low, high + 1):
            full = tokenizer(f"{text} {s}")["input_ids"]
            k = len(full) - len(head)
            with torch.inference_mode():
                logits = model(input_ids=torch.tensor([full], device=device), use_cache=False).logits
                logp = torch.log_softmax(logits[0].float(), dim=-1)  # (L, V)
                target = torch.tensor(full[-k:], device=device)
                logps.append(float(logp[torch.arange(len(full) - k - 1, len(full) - 1), target].sum()))
        p = np.exp(np.array(logps) - max(logps))
        out.append(float((p / p.sum()) @ np.arange(low, high + 1)))
    return out


def parse_score(text: str, low: int, high: int) -> float | None:
    m = re.search(r"\d+", text)
    return float(m.group()) if m and low <= int(m.group()) <= high else None


# -- the run ----------------------------------------------------------------------------------------


def run(args) -> dict:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    judge = localjudge.load_judge(args.judge, device=device, dtype=args.dtype)
    backend, model, tok = judge.backend, judge.backend.model, judge.backend.tokenizer
    pad = backend.pad_id
    texts = build_texts(judge, args.items)
    ids = [backend.encode(t) for t in texts]
    lengths = [len(r) for r in ids]
    tree = judge.score_tree(1, 5)
    tree_tokens = [int(x) for x in tree.token_ids[1:]]
    small = spread(len(texts), args.slow_items, lengths)
    small_texts, small_ids = [texts[i] for i in small], [ids[i] for i in small]

    # the judge's settings compared, each a judge on the same weights: warm-up, and the plans
    tolerance = judge.info.tree_tolerance
    lj = judge.with_options(reuse_prefix=False)
    lj_exact = judge.with_options(reuse_prefix=False, tree_tolerance=0.0)
    lj_prefix = judge.with_options(reuse_prefix=True)
    rows_before = lj.backend.stats.head_rows
    base = lj.score_texts(texts, 1, 5)
    rows_per_item = (lj.backend.stats.head_rows - rows_before) / len(texts)
    plan = lj.backend.stats.last_plan
    exact = lj_exact.score_texts(texts, 1, 5)
    unread = max(abs(a.expected - b.expected) for a, b in zip(base, exact) if a.expected == a.expected)
    reused = lj_prefix.score_texts(texts, 1, 5)
    prefix_plan = lj_prefix.backend.stats.last_plan
    diff = max(abs(a.expected - b.expected) for a, b in zip(base, reused) if a.expected == a.expected)
    floor_pass(model, ids, plan, tree_tokens, pad, device)  # warm-up: every method runs warm

    budget = backend.token_budget
    methods = {
        "floor": (len(texts), lambda: floor_pass(model, ids, plan, tree_tokens, pad, device)),
        "lj": (len(texts), lambda: lj.score_texts(texts, 1, 5)),
        "lj-exact": (len(texts), lambda: lj_exact.score_texts(texts, 1, 5)),
        "lj+prefix": (len(texts), lambda: lj_prefix.score_texts(texts, 1, 5)),
        "naive": (len(small), lambda: naive_loop(model, tok, small_texts, 1, 5, device)),
        "gen4": (len(texts), lambda: generate_batched(model, tok, ids, 4, budget, pad, device, do_sample=False)),
        "gen100": (
            len(small),
            lambda: generate_batched(model, tok, small_ids, 100, budget, pad, device, do_sample=False),
        ),
        "geval20": (
            len(small),
            lambda: generate_batched(
                model,
                tok,
                small_ids,
                4,
                budget,
                pad,
                device,
                do_sample=True,
                temperature=1.0,
                top_k=0,
                num_return_sequences=20,
            ),
        ),
    }
    if args.skip_slow:
        for k in SLOW:
            methods.pop(k)
    times = {k: [] for k in methods}
    mem = {k: 0 for k in methods}
    for rep in range(args.reps):
        for name, (_, fn) in methods.items():
            if rep and name in SLOW:
                continue  # the slow baselines cost minutes each: one repetition
            with PeakRSS() as m:
                t = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t)
            mem[name] = max(mem[name], m.delta)
            print(f"rep {rep} {name:10s} {times[name][-1]:7.2f}s", flush=True)

    body = sum(p.numel() for n, p in model.named_parameters() if "embed" not in n and "lm_head" not in n)
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    flops = [useful_flops(config, body, n + len(tree_tokens), rows_per_item) for n in lengths]
    peak = matmul_peak(model.dtype, device)
    out = {
        "judge": args.judge,
        "dtype": args.dtype,
        "items": len(texts),
        "slow_items": len(small),
        "reps": args.reps,
        "mean_prompt_tokens": float(np.mean(lengths)),
        "min_prompt_tokens": min(lengths),
        "max_prompt_tokens": max(lengths),
        "padding_waste": plan.padding_waste,
        "prefix_padding_waste": prefix_plan.padding_waste,
        "batches": len(plan.batches),
        "prefix_batches": len(prefix_plan.batches),
        "prefix_reuse_max_expected_diff": diff,
        "matmul_peak_flops": peak,
        "tree_nodes": tree.n_nodes,
        "head_rows_per_item": rows_per_item,
        "tree_tolerance": tolerance,
        "unread_nodes_max_expected_diff": unread,
        "normalized": [d.normalized for d in base],
        "methods": {},
    }
    for name, (n, _) in methods.items():
        on = range(len(texts)) if n == len(texts) else small  # the items the method ran on
        tokens, work = sum(lengths[i] for i in on), sum(flops[i] for i in on)
        t = statistics.median(times[name])
        out["methods"][name] = {
            "n": n,
            "seconds": times[name],
            "items_per_s": n / t,
            "tokens_per_s": tokens / t,
            "peak_mem_bytes": mem[name],
            "useful_flops_per_s": work / t,
            "mfu": work / t / peak,
        }
    f = out["methods"]["floor"]
    for v in out["methods"].values():
        v["items_ratio"] = v["items_per_s"] / f["items_per_s"]
        v["tokens_ratio"] = v["tokens_per_s"] / f["tokens_per_s"]
        v["mem_ratio"] = v["peak_mem_bytes"] / f["peak_mem_bytes"] if f["peak_mem_bytes"] else None
    return out


# -- reporting --------------------------------------------------------------------------------------


def best_of_reps(c: dict) -> dict:
    """Per-method rates from the fastest repetition (background load only ever slows a run down)."""
    out = {}
    for name, v in c["methods"].items():
        t, tm = min(v["seconds"]), statistics.median(v["seconds"])
        out[name] = {
            **v,
            "items_per_s": v["n"] / t,
            "tokens_per_s": v["tokens_per_s"] * tm / t,
            "mfu": v["mfu"] * tm / t,
        }
    f = out["floor"]
    for v in out.values():
        v["items_ratio"] = v["items_per_s"] / f["items_per_s"]
        v["tokens_ratio"] = v["tokens_per_s"] / f["tokens_per_s"]
    return out


def slow_note(c: dict) -> str:
    return f"slow baselines on {c['slow_items']}" if any(k in c["methods"] for k in SLOW) else "no slow baselines"


def rows_note(c: dict) -> str:
    """What the tree reader skipped, for results that recorded it."""
    if "head_rows_per_item" not in c:
        return ""
    return (
        f" Output-layer rows per item: {c['head_rows_per_item']:.1f} of {c['tree_nodes']} tree nodes "
        f"(tolerance {c['tree_tolerance']:g}); against reading all of them (lj-exact), max |expected diff| "
        f"{c['unread_nodes_max_expected_diff']:.1e}."
    )


def paired_median(c: dict, name: str) -> float:
    """Median over repetitions of floor time / method time, each pair measured back to back."""
    floor = c["methods"]["floor"]["seconds"]
    return statistics.median(f / t for f, t in zip(floor, c["methods"][name]["seconds"]))


def _ratio_target(c: dict, best: dict, name: str, goal: float) -> str:
    """With 3+ repetitions the verdict uses the paired median, which drifting machine speed moves least."""
    fastest = best[name]["items_ratio"]
    if c["reps"] < 3:
        return f"{name} ≥ {goal:.2f}× floor: {fastest:.2f} {'met' if fastest >= goal else 'NOT met'}"
    paired = paired_median(c, name)
    return (
        f"{name} ≥ {goal:.2f}× floor: paired median {paired:.2f} (fastest repetition {fastest:.2f}) "
        f"{'met' if paired >= goal else 'NOT met'}"
    )


def targets(c: dict) -> list[str]:
    m = best_of_reps(c)
    lj, lp = m["lj"]["items_ratio"], m["lj+prefix"]["items_ratio"]
    rows = [
        _ratio_target(c, m, "lj", 0.9),
        _ratio_target(c, m, "lj+prefix", 1.3),
        f"padding waste ≤ 10%: {c['padding_waste']:.1%} {'met' if c['padding_waste'] <= 0.10 else 'NOT met'}",
    ]
    best = max(lj, lp)
    if "naive" in m:
        r = best / m["naive"]["tokens_ratio"]
        rows.append(f"≥ 5× naive (per token): {r:.1f}× {'met' if r >= 5 else 'NOT met'}")
    if "geval20" in m:
        r = best / m["geval20"]["tokens_ratio"]
        rows.append(f"≥ 10× G-Eval 20 samples (per token): {r:.1f}× {'met' if r >= 10 else 'NOT met'}")
    return rows


def markdown(all_results: dict) -> str:
    mach = all_results["machine"]
    lines = [
        "# Throughput results",
        "",
        f"Machine: {mach['cpu']}, {mach['cores']} cores ({mach['torch_threads']} torch threads), "
        f"torch {mach['torch']}, GPU: {mach['gpu'] or 'none'}. Machines are shared, so absolute "
        "numbers are noisy; the ratios (measured side by side, repetitions interleaved, fastest "
        "repetition) are the result.",
        "",
        "Made by `benchmarks/speed/throughput.py`. Ratios are to the floor (a bare batched forward over "
        "the same batches, last-position logits only). `naive`, `gen100` and `geval20` ran on "
        "a few items spread over the length order, one repetition; their rates are per item/per token of those "
        "items (extrapolated to the set; the tokens ratio corrects for their length).",
        "",
    ]
    for key, c in all_results.get("configs", {}).items():
        lines += [
            f"## {key}",
            "",
            f"{c['items']} prompts ({c['min_prompt_tokens']}-{c['max_prompt_tokens']} tokens, mean "
            f"{c['mean_prompt_tokens']:.0f}), {slow_note(c)}, {c['reps']} reps. "
            f"Padding waste {c['padding_waste']:.1%} ({c['batches']} batches), with prefix plan "
            f"{c['prefix_padding_waste']:.1%} ({c['prefix_batches']} batches). Matmul peak "
            f"{c['matmul_peak_flops'] / 1e9:.0f} GFLOP/s. Prefix reuse vs none: max |expected diff| "
            f"{c['prefix_reuse_max_expected_diff']:.1e}.{rows_note(c)}",
            "",
            "| method | items/s | × floor | tokens/s | × floor | peak mem MiB | × floor | MFU |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name, v in best_of_reps(c).items():
            mr = f"{v['mem_ratio']:.2f}" if v["mem_ratio"] is not None else "-"
            lines.append(
                f"| {name} (n={v['n']}) | {v['items_per_s']:.3f} | {v['items_ratio']:.3f} | "
                f"{v['tokens_per_s']:.0f} | {v['tokens_ratio']:.3f} | {v['peak_mem_bytes'] / 2**20:.0f} "
                f"| {mr} | {v['mfu']:.1%} |"
            )
        f = c["methods"]["floor"]["seconds"]
        paired = ", ".join(
            f"{k}: " + " / ".join(f"{a / b:.2f}" for a, b in zip(f, c["methods"][k]["seconds"]))
            for k in ("lj", "lj-exact", "lj+prefix", "gen4")
            if k in c["methods"]
        )
        lines += [
            "",
            f"Per-repetition items/s ratios to the floor of the same repetition ({paired}): their spread "
            "shows how much the shared machine's load moved between phases.",
            "",
            "Targets: " + "; ".join(targets(c)),
            "",
        ]
    if all_results.get("likelihood"):
        lines += TL.markdown(all_results["likelihood"])
    lines += ["## bf16 vs fp32 score deviation", ""]
    for judge in sorted({c["judge"] for c in all_results.get("configs", {}).values()}):
        a, b = all_results["configs"].get(f"{judge}/float32"), all_results["configs"].get(f"{judge}/bfloat16")
        if not (a and b):
            continue
        n = min(len(a["normalized"]), len(b["normalized"]))
        d = [abs(x - y) for x, y in zip(a["normalized"][:n], b["normalized"][:n]) if x == x and y == y]
        lines.append(
            f"- {judge}: max |Δ normalised expected| over {len(d)} items = {max(d):.4f} "
            f"(mean {np.mean(d):.4f}): {'within' if max(d) <= 0.01 else 'NOT within'} 0.01"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judge", default="smollm2-135m")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    ap.add_argument("--items", type=int, default=60)
    ap.add_argument("--slow-items", type=int, default=3, help="items for naive / gen100 / geval20")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="12 items, 2 slow items, 1 rep")
    ap.add_argument("--skip-slow", action="store_true", help="floor / lj / lj+prefix / gen4 only")
    ap.add_argument("--tag", default="", help="suffix of the results key (e.g. a code change)")
    ap.add_argument("--report", action="store_true", help="only rebuild the markdown from the JSON")
    ap.add_argument("--likelihood", action="store_true", help="likelihood scoring of SummEval dev summaries instead")
    ap.add_argument("--docs", type=int, default=None, help="--likelihood: only the first N articles (default all 50)")
    ap.add_argument(
        "--threads", type=int, default=1, help="torch threads; 1 is fastest on a shared, oversubscribed CPU"
    )
    args = ap.parse_args()
    if args.quick:
        args.items, args.slow_items, args.reps = 12, 2, 1
    if args.report:
        RESULTS_MD.write_text(markdown(json.loads(RESULTS_JSON.read_text())) + kept_section(RESULTS_MD))
        return
    torch.set_num_threads(args.threads)
    key = f"{args.judge}/{args.dtype}{args.tag}"
    if args.likelihood:
        judge = localjudge.load_judge(
            args.judge, device="cuda" if torch.cuda.is_available() else "cpu", dtype=args.dtype
        )
        result = TL.run(judge, args.docs)
    else:
        result = run(args)
    with open(HERE / ".throughput.lock", "w") as lock:  # several configs may run at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        all_results = json.loads(RESULTS_JSON.read_text()) if RESULTS_JSON.exists() else {"configs": {}}
        if args.likelihood:  # its own machine line: the tables above may come from another host
            result["machine"] = machine(*MACHINE)
        else:
            all_results["machine"] = machine(*MACHINE)
        all_results.setdefault("likelihood" if args.likelihood else "configs", {})[key] = result
        RESULTS_JSON.write_text(json.dumps(all_results, indent=1))
        RESULTS_MD.write_text(markdown(all_results) + kept_section(RESULTS_MD))
    if args.likelihood:
        print("\n".join(TL.markdown({key: result})))
    else:
        print(markdown({"machine": all_results["machine"], "configs": {key: result}}))


if __name__ == "__main__":
    main()
