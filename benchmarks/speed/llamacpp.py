"""llama.cpp beside localjudge on the same GGUF files and prompts: prompt processing and log-probabilities.

Build llama-cpp-python first (it is not a localjudge dependency, and not part of `make test`);
from its PyPI source distribution, for this CPU (-march=native), many minutes on 2 cores:

    CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAMA_CURL=OFF" CMAKE_BUILD_PARALLEL_LEVEL=2 \\
        .venv/bin/python -m pip install --no-binary llama-cpp-python llama-cpp-python==0.3.36
    .venv/bin/python -m benchmarks.speed.llamacpp --judges smollm2-135m gemma3-270m --docs 4
    .venv/bin/python -m benchmarks.speed.llamacpp --judges qwen2.5-coder-1.5b --docs 2 \
        --methods lj/fp32 lj+prefix/fp32 lj/bf16 lj+prefix/bf16 lcpp-cont lcpp-cont+prefix

Only the judges the chosen methods need are loaded (`floor/*` and the stock engine need their own copy:
four copies of the 1.5B judge do not fit in 24 GB). bf16 is the CPU's default bf16, mixed precision;
bf16full runs every op in bf16 (`mixed_precision=False`).

The items are the likelihood prompts of `throughput.py --likelihood` (SummEval dev, builtin
`consistency_likelihood`: article, instruction, summary scored token by token), first `--docs`
articles with their 16 summaries each, tokenised once by localjudge; every method gets those ids.
Methods, run back to back on each article (order rotated per article) so load hits all alike:

  floor/<dtype>      the bare batched forward of `lib/likelihood_rows.floor_pass`
  lj/<dtype>         `judge.backend.token_logprobs` (the likelihood metric's path), prefix reuse off
  lj+prefix/<dtype>  the same, prefix reuse on (an article computed once for its summaries)
  lcpp-<way>         llama.cpp, one sequence per decode (`_llamacpp.py`: last, all, cont, cont+prefix)

Speed is reported as tokens of the rows per second and as ratios to floor/fp32 (> 1: faster);
log-probabilities of the continuation tokens are compared for the same token ids (llama.cpp's
from its float32 logits, log-softmax in float64). Results: `llamacpp_results.{json,md}`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

from benchmarks.lib.common import EMBEDDED_JUDGES, kept_section, machine
from benchmarks.lib.llamacpp import gguf_path
from benchmarks.speed._logprobs import common_prefix_len, compare_logprobs, tokenisation_agreement

HERE = Path(__file__).resolve().parent
LARGER = ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
RESULTS_JSON = HERE / "llamacpp_results.json"
RESULTS_MD = HERE / "llamacpp_results.md"
DTYPES = {"fp32": ("float32", None), "bf16": ("bfloat16", None), "bf16full": ("bfloat16", False)}
"""Method dtype -> (dtype, mixed_precision): bf16 is the CPU's default bf16 (mixed precision), bf16full
every op in bf16."""
COMPARED = (  # (reference, other): log-prob deviations reported
    ("lj/fp32", "lcpp-cont"),
    ("lj/bf16", "lcpp-cont"),
    ("lj/fp32", "lj/bf16"),
    ("lj/fp32", "lj/bf16full"),
    ("lj/fp32", "lj+prefix/bf16"),
    ("lj/fp32", "lj+prefix/fp32"),
    ("lcpp-cont", "lcpp-all"),
    ("lcpp-cont", "lcpp-cont+prefix"),
)


METHODS = (
    "floor/fp32",
    "lj/fp32",
    "lj+prefix/fp32",
    "floor/bf16",
    "lj/bf16",
    "lj+prefix/bf16",
    "lj/bf16full",
    "lj+prefix/bf16full",
    "lcpp-last",
    "lcpp-all",
    "lcpp-cont",
    "lcpp-cont+prefix",
)


class Article(NamedTuple):
    """One article's summaries: texts, token ids, and what the methods need besides."""

    prompt_texts: list[str]
    cont_texts: list[str]
    """The prompts and continuations with the boundary rule applied (what is tokenised)."""
    prompts: list[list[int]]
    conts: list[list[int]]
    rows: list[list[int]]
    shared: int
    """Tokens all of its prompts share before their last token (what cont+prefix decodes once)."""
    plans: dict
    """Per dtype, localjudge's batch plan without prefix reuse (the floor runs the same batches)."""


def load_articles(judges: dict, docs: int, per_article: int) -> list[Article]:
    """The likelihood items of `throughput_likelihood`, first `per_article` summaries of each article."""
    from benchmarks.lib import likelihood_rows as LR

    return [
        article(judges, prompts[:per_article], conts[:per_article])
        for prompts, conts in LR.likelihood_articles(judges["lj/fp32"], docs)
    ]


def article(judges: dict, prompts: list[str], conts: list[str]) -> Article:
    """Summaries of one article, tokenised by the fp32 judge (the boundary rule of `judge.loglikelihood`)."""
    from localjudge.scoring.likelihood import split_boundary

    backend = judges["lj/fp32"].backend
    texts = [split_boundary(p, c) for p, c in zip(prompts, conts)]
    p_ids = [backend.encode(p) for p, _ in texts]
    c_ids = [backend.encode_continuation(c) for _, c in texts]
    plans = {k: judges[f"lj/{k}"].backend.plan_continuations(p_ids, c_ids)[0] for k in DTYPES if f"lj/{k}" in judges}
    rows = [p + c for p, c in zip(p_ids, c_ids)]
    shared = common_prefix_len([p[:-1] for p in p_ids])
    return Article([p for p, _ in texts], [c for _, c in texts], p_ids, c_ids, rows, shared, plans)


def methods(judges: dict, lcpp) -> dict:
    """Method name -> function of an article, returning its items' log-prob arrays (None: speed only)."""
    from benchmarks.lib import likelihood_rows as LR

    def floor(k):  # the stock model (batch_invariant=False): linear layers and attention as transformers has them
        return lambda a: LR.floor_pass(judges[f"stock/{k}"].backend, a.rows, a.plans[k])

    def lj(key):
        return lambda a: judges[key].backend.token_logprobs(a.prompts, a.conts)

    def last(a):
        for r in a.rows:
            lcpp.last(r)

    def cont_prefix(a):
        if a.shared:
            lcpp.prefill(a.rows[0][: a.shared])
        return [lcpp.cont(r, len(c), keep=a.shared) for r, c in zip(a.rows, a.conts)]

    out = {}
    for k in DTYPES:
        out[f"floor/{k}"], out[f"lj/{k}"] = floor(k), lj(f"lj/{k}")
    for k in DTYPES:
        out[f"lj+prefix/{k}"] = lj(f"lj+prefix/{k}")
    out["lcpp-last"] = last
    out["lcpp-all"] = lambda a: [lcpp.all(r, len(c)) for r, c in zip(a.rows, a.conts)]
    out["lcpp-cont"] = lambda a: [lcpp.cont(r, len(c)) for r, c in zip(a.rows, a.conts)]
    out["lcpp-cont+prefix"] = cont_prefix
    return out


def output_rows(method: str, row: list[int], cont: list[int]) -> int:
    """Positions whose logits a method computes: the last, every one, or those reading the continuation."""
    if method.startswith("floor") or method == "lcpp-last":
        return 1
    return len(row) if method == "lcpp-all" else len(cont)


def measure(fns: dict, articles: list[Article], warm: Article, reps: int) -> tuple[dict, dict, dict]:
    """Wall and CPU seconds per (rep, article) of every method, order rotated; log-probs of rep 0 in item order."""
    names = list(fns)
    wall: dict[str, list[float]] = {m: [] for m in names}
    cpu: dict[str, list[float]] = {m: [] for m in names}
    logps: dict[str, list] = {}
    for m in names:  # warm-up: every method runs warm
        fns[m](warm)
    for rep in range(reps):
        for k, art in enumerate(articles):
            s = (k + rep) % len(names)
            for m in names[s:] + names[:s]:
                t, c = time.perf_counter(), time.process_time()  # process time: every thread's CPU
                out = fns[m](art)
                wall[m].append(time.perf_counter() - t)
                cpu[m].append(time.process_time() - c)
                if rep == 0 and out is not None:
                    logps.setdefault(m, []).extend(out)
            line = ", ".join(f"{m} {v[-1]:.1f}s" for m, v in wall.items())
            print(f"rep {rep} article {k + 1}/{len(articles)}: {line}", flush=True)
    return wall, cpu, logps


def run_judge(name: str, args) -> dict:
    """Everything measured for one embedded judge."""
    import torch

    from benchmarks.lib.measure import matmul_peak, useful_flops
    from benchmarks.speed._llamacpp import LlamaCpp
    from localjudge import load_judge
    from localjudge.engine.options import EngineOptions
    from localjudge.weights.hashes import fresh_sha256

    path = gguf_path(name)
    # only the judges the chosen methods run: four copies of the 1.5B judge would not fit in memory
    wanted = {"lj/fp32"} | {m.split("+prefix")[0].replace("floor/", "stock/") for m in args.methods if "/" in m}
    judges = {
        f"lj/{k}": load_judge(
            name, options=EngineOptions(dtype=dt, mixed_precision=mixed, reuse_prefix=False), progress=False
        )
        for k, (dt, mixed) in DTYPES.items()
        if f"lj/{k}" in wanted
    }
    for k in DTYPES:
        if f"lj/{k}" in judges:
            judges[f"lj+prefix/{k}"] = judges[f"lj/{k}"].with_options(reuse_prefix=True)  # the same weights
    for k, (dt, mixed) in DTYPES.items():
        if f"stock/{k}" in wanted:
            opts = EngineOptions(
                device="cpu", dtype=dt, mixed_precision=mixed, batch_invariant=False, reuse_prefix=False
            )
            judges[f"stock/{k}"] = load_judge(name, options=opts, progress=False)
    articles = load_articles(judges, args.docs, args.per_article)
    warm = article(judges, articles[0].prompt_texts[:2], articles[0].cont_texts[:2])
    rows = [r for a in articles for r in a.rows]
    conts = [c for a in articles for c in a.conts]
    n_ctx = -(-max(len(r) for r in rows) // 256) * 256
    n_batch = args.n_batch or n_ctx
    lcpp = LlamaCpp(path, n_ctx, n_batch, args.n_ubatch or n_batch, args.threads, args.flash_attn)
    prompt_tok = tokenisation_agreement(
        [p for a in articles for p in a.prompts], [lcpp.tokenize_prompt(t) for a in articles for t in a.prompt_texts]
    )
    cont_tok = tokenisation_agreement(conts, [lcpp.tokenize_continuation(t) for a in articles for t in a.cont_texts])
    every = methods(judges, lcpp)
    fns = {m: every[m] for m in METHODS if m in args.methods}
    started = datetime.now(timezone.utc)
    wall, cpu, logps = measure(fns, articles, warm, args.reps)
    finished = datetime.now(timezone.utc)

    model = judges["lj/fp32"].backend.model
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    body = sum(p.numel() for n, p in model.named_parameters() if "embed" not in n and "lm_head" not in n)
    tokens = sum(len(r) for r in rows) * args.reps
    out: dict = {"judge": name, "gguf": path.name, "gguf_sha256": fresh_sha256(path), "threads": args.threads}
    out |= {"items": len(rows), "articles": len(articles), "per_article": args.per_article, "reps": args.reps}
    out |= {"tokens": tokens, "continuation_tokens": sum(map(len, conts))}
    out |= {"started": started.isoformat(timespec="seconds"), "finished": finished.isoformat(timespec="seconds")}
    out["llama_cpp"] = lcpp.settings | {"system_info": lcpp.system_info(), "decodes_per_article": args.per_article}
    out["lj_batches_per_article"] = {
        k: statistics.mean(len(a.plans[k].batches) for a in articles) for k in articles[0].plans
    }
    out["torch_threads"] = torch.get_num_threads()
    out["tokenisation"] = {"prompts": prompt_tok, "continuations": cont_tok}
    out["seconds"] = {m: sum(v) for m, v in wall.items()}
    out["cpu_seconds"] = {m: sum(v) for m, v in cpu.items()}
    out["tokens_per_s"] = {m: tokens / s for m, s in out["seconds"].items()}
    out["tokens_per_cpu_s"] = {m: tokens / s for m, s in out["cpu_seconds"].items()}
    if "floor/fp32" in wall:
        floor = wall["floor/fp32"]
        out["ratio_to_floor_fp32"] = {m: sum(floor) / s for m, s in out["seconds"].items()}
        out["median_article_ratio"] = {m: statistics.median(f / t for f, t in zip(floor, v)) for m, v in wall.items()}
    # forward FLOPs of the rows without padding or reuse, output layer at the rows each method computes
    flops = {m: sum(useful_flops(config, body, len(r), output_rows(m, r, c)) for r, c in zip(rows, conts)) for m in fns}
    out["useful_gflops_per_s"] = {m: flops[m] * args.reps / out["seconds"][m] / 1e9 for m in fns}
    # fp32 only: a bare bf16 matmul on a CPU without native bf16 takes a scalar path that runs for minutes
    out["matmul_peak_gflops"] = {"fp32": matmul_peak(torch.float32, "cpu") / 1e9}
    pairs = [(a, b) for a, b in COMPARED if a in logps and b in logps]
    out["logprobs"] = {f"{a} vs {b}": compare_logprobs(logps[a], logps[b]) for a, b in pairs}
    lcpp.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judges", nargs="+", default=list(EMBEDDED_JUDGES), choices=[*EMBEDDED_JUDGES, *LARGER])
    ap.add_argument("--docs", type=int, default=4, help="SummEval dev articles")
    ap.add_argument("--per-article", type=int, default=16, help="summaries of each article (it has 16)")
    ap.add_argument("--reps", type=int, default=1, help="passes over the articles")
    ap.add_argument("--threads", type=int, default=2, help="torch and llama.cpp threads")
    ap.add_argument("--n-batch", type=int, default=0, help="llama.cpp logical batch; 0: the context (a row per decode)")
    # measured here on a 700-token row: a row in one ubatch and flash attention were fastest (~1.5x over 512, off)
    ap.add_argument("--n-ubatch", type=int, default=0, help="llama.cpp physical batch; 0: n_batch")
    ap.add_argument(
        "--flash-attn", action=argparse.BooleanOptionalAction, default=True, help="llama.cpp flash attention"
    )
    ap.add_argument(
        "--methods", nargs="+", default=list(METHODS), choices=METHODS, metavar="METHOD", help=", ".join(METHODS)
    )
    args = ap.parse_args(argv)

    from benchmarks.lib.llamacpp import INSTALL, require_llama_cpp

    llama_cpp = require_llama_cpp()  # before minutes of judge loading
    import torch

    torch.set_num_threads(args.threads)
    # results accumulate per judge; each records its own machine, command and build
    results = json.loads(RESULTS_JSON.read_text()) if RESULTS_JSON.exists() else {}
    context = {
        "machine": machine("torch_threads", "torch", "transformers", "python"),
        "llama_cpp_python": llama_cpp.__version__,
        "llama_cpp_build": INSTALL,
        "command": " ".join(["benchmarks/speed/llamacpp.py", *(argv if argv is not None else sys.argv[1:])]),
    }
    for name in args.judges:
        results[f"{name}, {args.threads} threads"] = context | run_judge(name, args)
        RESULTS_JSON.write_text(json.dumps(results, indent=1) + "\n")
    from benchmarks.speed._llamacpp_report import markdown

    RESULTS_MD.write_text("\n".join(markdown(results)) + kept_section(RESULTS_MD))
    print(f"wrote {RESULTS_JSON.name} and {RESULTS_MD.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
