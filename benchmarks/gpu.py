"""GPU throughput of the tree-scoring engine on real architectures, no downloads needed.

Builds Llama-3.2-1B, Llama-3.1-8B and Qwen2.5-7B from their configs (values below) with random
bf16 weights, SDPA attention, and a byte-level BPE tokenizer trained on the fly and padded with
dummy tokens to the model's vocabulary. Prompts are G-Eval-shaped token sequences: three "metrics",
each a shared 300-token instruction prefix followed by a per-item 150-450-token case and
"Score:". Random weights give meaningless scores but the exact cost of real ones.

Measured side by side, repetitions interleaved, as ratios to the floor (a bare batched forward
over the same batches and padding, last-position logits only): the engine without and with prefix
reuse, and greedy generate-and-parse (4 tokens; 100 tokens on a subset). MFU counts the useful
FLOPs of the unpadded prompts against a bf16 matmul measured in the same run.

    python benchmarks/gpu.py                 # one H200: all three models, < 8 min
    python benchmarks/gpu.py --tiny          # scaled-down configs, runs anywhere (CPU check)
    python benchmarks/gpu.py --models llama3.2-1b --items 96
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from _measure import PeakRSS, floor_pass, generate_batched, matmul_peak, useful_flops  # noqa: E402

from localjudge.engine.hf import HFBackend  # noqa: E402
from localjudge.engine.options import EngineOptions  # noqa: E402
from localjudge.scoring.distribution import outcome_mass, score_distribution  # noqa: E402
from localjudge.scoring.trie import build_score_tree  # noqa: E402
from localjudge.testing.tiny_tokenizer import build_tiny_tokenizer  # noqa: E402

# Values copied from the models' config.json files (hidden, layers, heads, kv heads, MLP, vocab, rope).
CONFIGS = {
    "llama3.2-1b": dict(
        arch="llama",
        hidden_size=2048,
        num_hidden_layers=16,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=64,
        intermediate_size=8192,
        vocab_size=128256,
        rope_theta=500000.0,
        rms_norm_eps=1e-5,
        tie_word_embeddings=True,
        max_position_embeddings=131072,
    ),
    "llama3.1-8b": dict(
        arch="llama",
        hidden_size=4096,
        num_hidden_layers=32,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        intermediate_size=14336,
        vocab_size=128256,
        rope_theta=500000.0,
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        max_position_embeddings=131072,
    ),
    "qwen2.5-7b": dict(
        arch="qwen2",
        hidden_size=3584,
        num_hidden_layers=28,
        num_attention_heads=28,
        num_key_value_heads=4,
        intermediate_size=18944,
        vocab_size=152064,
        rope_theta=1000000.0,
        rms_norm_eps=1e-6,
        tie_word_embeddings=False,
        max_position_embeddings=32768,
    ),
}
TINY = dict(
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    intermediate_size=128,
    vocab_size=2048,
)


def build_model(name: str, tiny: bool, device: str, dtype: torch.dtype):
    """A random-weight model of the named architecture (scaled down with `tiny`), eval mode."""
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    spec = dict(CONFIGS[name])
    arch = spec.pop("arch")
    if tiny:
        spec.update(TINY)
        spec.pop("head_dim") if arch == "qwen2" else None
    cls, cfg = (LlamaForCausalLM, LlamaConfig) if arch == "llama" else (Qwen2ForCausalLM, Qwen2Config)
    config = cfg(**spec, attn_implementation="sdpa", pad_token_id=0, bos_token_id=0, eos_token_id=0)
    before = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # initialise in bf16 directly: an 8B model in fp32 is 32 GB
    try:
        with torch.device(device):
            model = cls(config)
    finally:
        torch.set_default_dtype(before)
    return model.eval()


def padded_tokenizer(vocab_size: int):
    """The tiny trained BPE tokenizer with dummy special tokens up to the model's vocabulary."""
    tok = build_tiny_tokenizer()
    tok.add_tokens([f"<|r{i}|>" for i in range(vocab_size - len(tok))], special_tokens=True)
    return tok


def geval_like_ids(tok, n: int, seed: int = 0) -> list[list[int]]:
    """n prompts: three shared 300-token prefixes (metrics), per-item 150-450-token cases, 'Score:'."""
    rng = random.Random(seed)
    words = min(len(tok), 527)  # the trained part of the vocabulary
    prefixes = [[rng.randrange(1, words) for _ in range(300)] for _ in range(3)]
    tail = tok("\n\nScore:")["input_ids"]
    return [prefixes[k % 3] + [rng.randrange(1, words) for _ in range(rng.randint(150, 450))] + tail for k in range(n)]


def bench_model(name: str, args, device: str) -> dict:
    dtype = torch.bfloat16
    tok = padded_tokenizer(TINY["vocab_size"] if args.tiny else CONFIGS[name]["vocab_size"])
    model = build_model(name, args.tiny, device, dtype)
    options = EngineOptions(device=device, dtype="bfloat16", token_budget=args.budget)
    backend = HFBackend(model, tok, max_context=8192, options=options)
    tree = build_score_tree(backend.token_surfaces(), 1, 5)
    tree_tokens = [int(x) for x in tree.token_ids[1:]]
    ids = geval_like_ids(tok, args.items)
    subset = ids[: max(1, args.items // 8)]

    def engine(reuse: bool):
        backend.options = backend.options.replace(reuse_prefix=reuse)
        lp = backend.tree_logprobs(ids, tree)
        return [score_distribution(row, 1, 5) for row in outcome_mass(tree, lp.edge_logp, lp.end_logp)]

    engine(False)  # warm-up and the plans
    plan = backend.last_plan
    engine(True)
    prefix_plan = backend.last_plan
    pad = backend._pad_id
    methods = {
        "floor": (len(ids), lambda: floor_pass(model, ids, plan, tree_tokens, pad, device)),
        "lj": (len(ids), lambda: engine(False)),
        "lj+prefix": (len(ids), lambda: engine(True)),
        "gen4": (len(ids), lambda: generate_batched(model, tok, ids, 4, args.budget, pad, device, do_sample=False)),
        "gen100": (
            len(subset),
            lambda: generate_batched(model, tok, subset, 100, args.budget, pad, device, do_sample=False),
        ),
    }
    times = {k: [] for k in methods}
    mem = dict.fromkeys(methods, 0)
    for _ in range(args.reps):
        for key, (_, fn) in methods.items():
            with PeakRSS() as m:
                if device == "cuda":
                    torch.cuda.synchronize()
                t = time.perf_counter()
                fn()
                if device == "cuda":
                    torch.cuda.synchronize()
                times[key].append(time.perf_counter() - t)
            mem[key] = max(mem[key], m.delta)
    body = sum(p.numel() for n, p in model.named_parameters() if "embed" not in n and "lm_head" not in n)
    flops = [useful_flops(model.config, body, len(r) + len(tree_tokens), len(tree_tokens) + 1) for r in ids]
    peak = matmul_peak(dtype, device, size=2048 if args.tiny else 8192)
    out = {
        "model": name,
        "tiny": args.tiny,
        "items": len(ids),
        "budget": args.budget,
        "mean_prompt_tokens": statistics.mean(len(r) for r in ids),
        "padding_waste": plan.padding_waste,
        "prefix_padding_waste": prefix_plan.padding_waste,
        "matmul_peak_flops": peak,
        "methods": {},
    }
    for key, (n, _) in methods.items():
        on = ids if n == len(ids) else subset
        work = sum(flops[: len(on)]) if on is subset else sum(flops)
        t = statistics.median(times[key])
        out["methods"][key] = {
            "n": n,
            "seconds": times[key],
            "items_per_s": n / t,
            "tokens_per_s": sum(map(len, on)) / t,
            "peak_mem_bytes": mem[key],
            "mfu": work / t / peak,
        }
    f = out["methods"]["floor"]
    for v in out["methods"].values():
        v["items_ratio"] = v["items_per_s"] / f["items_per_s"]
        v["mem_ratio"] = v["peak_mem_bytes"] / f["peak_mem_bytes"] if f["peak_mem_bytes"] else None
    model = backend = None  # frees the weights before the next model (the closures above hold the same cells)
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()
    return out


def markdown(results: list[dict], machine: str) -> str:
    lines = [
        f"# GPU benchmark ({machine})",
        "",
        "| model | method | items/s | × floor | tokens/s | peak mem GiB | × floor | MFU |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for k, v in r["methods"].items():
            mr = f"{v['mem_ratio']:.2f}" if v["mem_ratio"] else "-"
            lines.append(
                f"| {r['model']}{' (tiny)' if r['tiny'] else ''} | {k} (n={v['n']}) | "
                f"{v['items_per_s']:.2f} | {v['items_ratio']:.3f} | {v['tokens_per_s']:.0f} | "
                f"{v['peak_mem_bytes'] / 2**30:.2f} | {mr} | {v['mfu']:.1%} |"
            )
    lines.append("")
    for r in results:
        lines.append(
            f"- {r['model']}: {r['items']} prompts, mean {r['mean_prompt_tokens']:.0f} tokens, "
            f"budget {r['budget']}, padding waste {r['padding_waste']:.1%} "
            f"(prefix plan {r['prefix_padding_waste']:.1%}), bf16 matmul peak "
            f"{r['matmul_peak_flops'] / 1e12:.1f} TFLOP/s"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tiny", action="store_true", help="scaled-down configs (checks the script on CPU)")
    ap.add_argument("--models", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument("--items", type=int, default=None, help="prompts per model (default 384 GPU, 12 tiny)")
    ap.add_argument("--budget", type=int, default=None, help="tokens per batch (default 32768 GPU, 2048 CPU)")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = ap.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    args.items = args.items or (12 if args.tiny else 384)
    args.budget = args.budget or (32768 if device == "cuda" else 2048)
    machine = torch.cuda.get_device_name() if device == "cuda" else "CPU"
    results = []
    for name in args.models:
        t = time.perf_counter()
        results.append(bench_model(name, args, device))
        print(f"{name}: {time.perf_counter() - t:.0f}s", file=sys.stderr, flush=True)
    payload = {"machine": machine, "torch": torch.__version__, "results": results}
    print(json.dumps(payload, indent=1))
    print(markdown(results, machine))
    if args.out:
        args.out.write_text(json.dumps(payload, indent=1))


if __name__ == "__main__":
    main()
