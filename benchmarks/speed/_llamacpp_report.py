"""The markdown of `llamacpp_results.md`, rebuilt from `llamacpp_results.json` (no torch, no llama.cpp)."""

from __future__ import annotations

from benchmarks.lib.common import cell

SPEED_PAIRS = (  # (llama.cpp method, localjudge method) set side by side as a speed ratio
    ("lcpp-last", "floor/fp32"),
    ("lcpp-cont", "lj/fp32"),
    ("lcpp-cont", "lj/bf16"),
    ("lcpp-cont", "lj/bf16full"),
    ("lcpp-all", "lj/fp32"),
    ("lcpp-cont+prefix", "lj+prefix/fp32"),
    ("lcpp-cont+prefix", "lj+prefix/bf16"),
    ("lcpp-cont+prefix", "lj+prefix/bf16full"),
)


def markdown(results: dict) -> list[str]:
    """The whole results file but its hand-written notes."""
    lines = [
        "# llama.cpp beside localjudge (`benchmarks/speed/llamacpp.py`)",
        "",
        "Same GGUF files, same prompts, same token ids: the likelihood items of `throughput.py --likelihood` "
        "(SummEval dev, `consistency_likelihood`: article, instruction, summary scored token by token). "
        "Methods ran back to back on each article's 16 summaries, order rotated per article; "
        "tok/s counts every token of every row (prefix methods: the effective rate); "
        "× floor/fp32 = floor/fp32 seconds / method seconds (> 1: faster than the bare fp32 forward). "
        "floor = one plain forward of the stock transformers model (`batch_invariant=False`) over the rows, "
        "last-position logits only, no prefix reuse; lj = localjudge's default engine (batch-invariant: "
        "block attention, fixed-shape GEMMs, fp32 output layer), prefix reuse off unless `+prefix`; "
        "`bf16` is the CPU's default bf16 (mixed precision: bf16 linear layers, fp32 between them), "
        "`bf16full` every op in bf16 (`mixed_precision=False`).",
        "",
    ]
    for name, r in results.items():
        lines += _judge(name, r)
    return lines


def _judge(name: str, r: dict) -> list[str]:
    m, lc = r["machine"], r["llama_cpp"]
    items = f"{r['items']} summaries (first {r['per_article']} of each of {r['articles']} articles)"
    lines = [
        f"## {name} (`{r['gguf']}`, sha256 {r['gguf_sha256'][:12]}…)",
        "",
        f"- Ran {r['started']} – {r['finished']}: `{r['command']}`",
        f"- Machine: {m['cpu']}, {m['cores']} cores, torch {m['torch']} ({m['torch_threads']} threads), "
        f"transformers {m['transformers']}, Python {m['python']}.",
        f"- llama-cpp-python {r['llama_cpp_python']}, built from the PyPI sdist: `{r['llama_cpp_build']}`; "
        f"ggml: `{lc['system_info']}`.",
        f"- Threads: {r['threads']} for torch and for llama.cpp. llama.cpp settings: n_ctx {lc['n_ctx']}, "
        f"n_batch {lc['n_batch']}, n_ubatch {lc['n_ubatch']}, "
        f"{lc['n_threads']} threads, flash_attn {lc['flash_attn']}; one sequence per decode "
        f"({lc['decodes_per_article']} decodes per article). localjudge: "
        + ", ".join(f"{v:.1f} batches per article ({k})" for k, v in r["lj_batches_per_article"].items())
        + ".",
        f"- Items: {items}, {r['tokens']} row tokens × {r['reps']} pass(es), {r['continuation_tokens']} continuation "
        f"tokens (log-probs read). torch matmul peak (2048², measured now): "
        + ", ".join(f"{k} {v:.0f} GFLOP/s" for k, v in r["matmul_peak_gflops"].items())
        + ".",
        "",
        "| method | seconds | tok/s | × floor/fp32 | median per-article | CPU seconds | tok/CPU-s | useful GFLOP/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ratio, median = r.get("ratio_to_floor_fp32", {}), r.get("median_article_ratio", {})
    for method, s in r["seconds"].items():
        lines.append(
            f"| {method} | {s:.1f} | {r['tokens_per_s'][method]:.0f} | {cell(ratio.get(method), '{:.2f}')} | "
            f"{cell(median.get(method), '{:.2f}')} | {r['cpu_seconds'][method]:.1f} | "
            f"{r['tokens_per_cpu_s'][method]:.0f} | {r['useful_gflops_per_s'][method]:.1f} |"
        )
    lines += ["", "llama.cpp against localjudge, time ratios (> 1: llama.cpp faster), wall and CPU:", ""]
    for a, b in SPEED_PAIRS:
        if a in r["seconds"] and b in r["seconds"]:
            w, c = r["seconds"][b] / r["seconds"][a], r["cpu_seconds"][b] / r["cpu_seconds"][a]
            lines.append(f"- {a} vs {b}: {w:.2f}× wall, {c:.2f}× CPU")
    lines += [
        "",
        "Per-token log-probabilities of the continuation tokens, same token ids (llama.cpp: float32 logits, "
        "log-softmax in float64; it multiplies with the quantised weights, transformers with the weights "
        "dequantised to float):",
        "",
        "| reference vs other | tokens | max |Δ| | mean |Δ| | max |Δ item mean| | Pearson of item means |",
        "|---|---|---|---|---|---|",
    ]
    for pair, c in r["logprobs"].items():
        lines.append(
            f"| {pair} | {c['tokens']} | {c['max_abs']:.2e} | {c['mean_abs']:.2e} | {c['max_abs_item_mean']:.2e} | "
            f"{cell(c['item_mean_pearson'], '{:.6f}')} |"
        )
    lines += ["", "Tokenisation, llama.cpp's tokenizer against localjudge's (transformers) on the same texts:", ""]
    for part, t in r["tokenisation"].items():
        diff = t["first_difference"]
        where = (
            f"; first difference: item {diff['item']} at token {diff['position']} (lengths {diff['lengths']})"
            if diff
            else ""
        )
        lines.append(f"- {part}: {t['identical']}/{t['texts']} identical{where}")
    return [*lines, ""]
