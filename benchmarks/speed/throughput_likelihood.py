"""Throughput of likelihood scoring against the bare forward floor (`throughput.py --likelihood`).

The items are SummEval dev summaries under the builtin `consistency_likelihood` metric: article,
instruction, then the summary scored token by token (~700 tokens a row). Three methods, run
back to back on every article's 16 summaries so that background load hits all three alike:

  floor      a bare batched forward over the very batches localjudge plans without prefix reuse
             (same right padding, a plain 2D mask), last-position logits only: what any scorer
             of these tokens must at least pay.
  lj         `judge.loglikelihood`, prefix reuse off: output layer and fp32 log-softmax at every
             summary token, on top of the floor's work.
  lj+prefix  `judge.loglikelihood`, prefix reuse on: an article is computed once for its 16
             summaries.

Ratios are floor time / method time summed over the articles (a ratio above 1 is faster than the
floor), with the median of the per-article ratios beside them.
"""

from __future__ import annotations

import statistics
import time

from benchmarks.lib.likelihood_rows import METRIC, floor_pass, likelihood_articles
from localjudge.scoring.likelihood import split_boundary


def run(judge, docs: int | None = None) -> dict:
    """Seconds of floor, lj and lj+prefix over every article, and the largest score difference."""
    plain, shared_prefix = judge.with_options(reuse_prefix=False), judge.with_options(reuse_prefix=True)
    backend = plain.backend
    articles = likelihood_articles(judge, docs)
    times = {"floor": [], "lj": [], "lj+prefix": []}
    tokens, items, real, padded, diff, prefill = 0, 0, 0, 0, 0.0, 0
    for k, (prompts, conts) in enumerate(articles):
        pairs = [split_boundary(p, c) for p, c in zip(prompts, conts)]
        p_ids = [backend.encode(p) for p, _ in pairs]
        c_ids = [backend.encode_continuation(c) for _, c in pairs]
        rows = [p + c for p, c in zip(p_ids, c_ids)]
        plan, _ = backend.plan_continuations(p_ids, c_ids)
        if k == 0:
            floor_pass(backend, rows, plan)  # warm-up: every method runs warm
            plain.loglikelihood(prompts, conts)
        t = time.perf_counter()
        floor_pass(backend, rows, plan)
        times["floor"].append(time.perf_counter() - t)
        t = time.perf_counter()
        whole = plain.loglikelihood(prompts, conts)
        times["lj"].append(time.perf_counter() - t)
        t = time.perf_counter()
        shared = shared_prefix.loglikelihood(prompts, conts)
        times["lj+prefix"].append(time.perf_counter() - t)
        prefix_plan = shared_prefix.backend.stats.last_plan
        diff = max([diff] + [abs(a.mean - b.mean) for a, b in zip(whole, shared)])
        tokens += sum(len(r) for r in rows)
        items += len(rows)
        real, padded, prefill = (
            real + plan.real_tokens,
            padded + plan.padded_tokens,
            prefill + prefix_plan.padded_tokens,
        )
        print(
            f"article {k + 1}/{len(articles)}: " + ", ".join(f"{m} {v[-1]:.2f}s" for m, v in times.items()), flush=True
        )
    out = {
        "metric": METRIC,
        "articles": len(articles),
        "items": items,
        "tokens": tokens,
        "padding_waste": 1 - real / padded,
        "prefix_computed_tokens": prefill,
        "prefix_reuse_max_mean_diff": diff,
        "seconds": {m: sum(v) for m, v in times.items()},
        "per_article": times,
    }
    floor = out["seconds"]["floor"]
    out["ratio"] = {m: floor / s for m, s in out["seconds"].items()}
    out["median_article_ratio"] = {
        m: statistics.median(f / t for f, t in zip(times["floor"], v)) for m, v in times.items()
    }
    out["tokens_per_s"] = {m: tokens / s for m, s in out["seconds"].items()}
    return out


def markdown(results: dict) -> list[str]:
    """The likelihood section of the throughput results."""
    lines = [
        "## Likelihood scoring (`throughput.py --likelihood`)",
        "",
        "SummEval dev summaries under `consistency_likelihood` (article, instruction, summary scored); "
        "floor = a bare batched forward over the batches localjudge plans without prefix reuse. "
        "Methods run back to back on each article's 16 summaries; ratio = floor seconds / method "
        "seconds over all articles (> 1: faster than the floor).",
        "",
        "| config | items | tokens | padding | floor tok/s | lj × floor | lj+prefix × floor | "
        "median per-article (lj / lj+prefix) | max Δ mean log-prob (prefix vs none) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    machines = {
        f"{c['machine']['cpu']}, {c['machine']['cores']} cores ({c['machine']['torch_threads']} torch threads)"
        for c in results.values()
        if "machine" in c
    }
    if machines:
        lines[2] += f" Machine: {'; '.join(sorted(machines))}."
    for key, c in results.items():
        m = c["median_article_ratio"]
        lines.append(
            f"| {key} | {c['items']} ({c['articles']} articles) | {c['tokens']} | {c['padding_waste']:.1%} | "
            f"{c['tokens_per_s']['floor']:.0f} | {c['ratio']['lj']:.2f} | {c['ratio']['lj+prefix']:.2f} | "
            f"{m['lj']:.2f} / {m['lj+prefix']:.2f} | {c['prefix_reuse_max_mean_diff']:.1e} |"
        )
    targets = []
    for key, c in results.items():
        lj, lp = c["ratio"]["lj"], c["ratio"]["lj+prefix"]
        targets.append(
            f"{key}: lj ≥ 0.90× floor: {lj:.2f} {'met' if lj >= 0.9 else 'NOT met'}; "
            f"lj+prefix ≥ 1.5×: {lp:.2f} {'met' if lp >= 1.5 else 'NOT met'}"
        )
    return [*lines, "", "Targets: " + "; ".join(targets), ""]
