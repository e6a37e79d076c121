"""`localjudge serve` beside llama.cpp's own OpenAI-compatible server on the same GGUF and the same G-Eval requests.

Both servers get the very same HTTP requests: the G-Eval prompt of each case (localjudge's rendering, chat
template included) as `/v1/completions` with `max_tokens: 1`, `temperature: 0` and `logprobs: 20`, what a
client that reads a score from the top log-probabilities sends. llama.cpp's server is llama-cpp-python's
`llama_cpp.server` with its defaults (`logits_all` on, which its logprobs need; the prompt it processed last
kept, so an article's summaries in a row reuse the article) and this machine's threads; localjudge's is
`localjudge serve` with its defaults. Each runs alone, in its own process, under 1, 4, 8 and 16 clients.
localjudge's native `/v1/evaluate` of the same cases runs beside them: the record each case gets offline.

Log-probabilities compared per case: the score tokens ("1".."5") both top-20 lists hold, and the expected
score each implies (the top-list probabilities of the scores, renormalised; localjudge's exact distribution
from its `localjudge` extension beside them).

    CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAMA_CURL=OFF" CMAKE_BUILD_PARALLEL_LEVEL=2 \\
        .venv/bin/python -m pip install --no-binary llama-cpp-python "llama-cpp-python[server]==0.3.36"
    python -m benchmarks.serve.serve_llamacpp            # smollm2-135m, fluency, the 48 demo cases

Writes serve_llamacpp_results.{md,json} beside this script.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.lib.common import machine
from benchmarks.lib.llamacpp import INSTALL, gguf_path, require_llama_cpp
from benchmarks.serve.serve_load import DATA, HERE, _quantile, _send, _start_server

TOP = 20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--judge", default="smollm2-135m")
    ap.add_argument("--metric", default="fluency")
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 4, 8, 16])
    ap.add_argument("--cases", type=int, default=48, help="First N cases of the demo file.")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    lc = require_llama_cpp()
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()[: args.cases]]
    prompts, low, high = _prompts(args.judge, args.metric, args.cases)
    completion = [{"prompt": p, "max_tokens": 1, "temperature": 0, "logprobs": TOP} for p in prompts]
    native = [{"cases": [r], "metrics": [args.metric]} for r in rows]
    runs: dict[str, list[dict]] = {}
    answers: dict[str, list] = {}

    proc, url = _start_server(args.judge, "cpu")
    try:
        extension = [{**c, "localjudge": {"low": low, "high": high}} for c in completion]
        exact = [a["choices"][0]["localjudge"] for a in _send(url, "/v1/completions", extension, 1)[2]]
        runs["localjudge /v1/completions"], answers["localjudge"] = _under_load(
            url, "/v1/completions", completion, args
        )
        runs["localjudge /v1/evaluate"], records = _under_load(url, "/v1/evaluate", native, args)
        # where the first token is not a score (SmolLM2 answers " " before the digit), the next position
        first = [a["choices"][0]["text"] for a in answers["localjudge"]]
        after = [{**c, "prompt": c["prompt"] + t} for c, t in zip(completion, first)]
        answers["localjudge next"] = _send(url, "/v1/completions", after, 1)[2]
    finally:
        proc.terminate()
        proc.wait(60)
    proc, url = _start_llamacpp(gguf_path(args.judge), args.threads)
    try:
        runs["llama.cpp /v1/completions"], answers["llama.cpp"] = _under_load(url, "/v1/completions", completion, args)
        answers["llama.cpp next"] = _send(url, "/v1/completions", after, 1)[2]
    finally:
        proc.terminate()
        proc.wait(60)

    scores = [str(k) for k in range(low, high + 1)]
    compared = {
        "first": _compare(answers["localjudge"], answers["llama.cpp"], exact, records, scores),
        "next": _compare(answers["localjudge next"], answers["llama.cpp next"], exact, records, scores),
        "same_first_token": sum(
            a["choices"][0]["text"] == b["choices"][0]["text"]
            for a, b in zip(answers["localjudge"], answers["llama.cpp"])
        ),
    }
    result = {
        "judge": args.judge,
        "metric": args.metric,
        "cases": len(rows),
        "gguf": gguf_path(args.judge).name,
        "llama_cpp": f"llama-cpp-python {lc.__version__}; {lc.llama_print_system_info().decode().strip()}",
        "llama_cpp_build": INSTALL,
        "threads": args.threads,
        "runs": runs,
        "logprobs": compared,
        "machine": machine("torch_threads", "torch", "python"),
        "note": args.note,
    }
    (HERE / "serve_llamacpp_results.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (HERE / "serve_llamacpp_results.md").write_text(_markdown(result), encoding="utf-8")


def _prompts(judge_name: str, metric_name: str, n: int) -> tuple[list[str], int, int]:
    """The G-Eval prompt of each case as localjudge renders it, and the metric's scale."""
    from localjudge import load_judge
    from localjudge.io.cases import load_cases
    from localjudge.kinds.geval import prompts as P
    from localjudge.kinds.geval.steps import resolve_steps
    from localjudge.metrics import builtin_metric
    from localjudge.runs.options import ScoringOptions

    judge = load_judge(judge_name, device="cpu", dtype="float32")
    metric = builtin_metric(metric_name)
    steps, _ = resolve_steps(judge, metric)
    hardened = ScoringOptions().hardened
    texts = [
        judge.render(P.SYSTEM, P.user_message(metric, steps, case, hardened), P.SCORE_PREFILL)
        for case in load_cases(DATA)[:n]
    ]
    return texts, metric.low, metric.high


def _start_llamacpp(gguf: Path, threads: int) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--n_ctx", "4096", "--n_threads", str(threads), "--n_threads_batch", str(threads)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc, url
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"llama_cpp.server exited with {proc.returncode}: {' '.join(cmd)}") from None
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("llama_cpp.server did not start in 5 minutes")


def _under_load(url: str, path: str, bodies: list[dict], args) -> tuple[list[dict], list]:
    """A warm-up, then every body under each client count; the answers of the first count."""
    _send(url, path, bodies[:2], 1)
    runs, first = [], None
    for c in args.clients:
        wall, latencies, got = _send(url, path, bodies, c)
        first = first if first is not None else got
        runs.append(
            {
                "clients": c,
                "requests": len(bodies),
                "requests_per_s": len(bodies) / wall,
                "p50_s": statistics.median(latencies),
                "p95_s": _quantile(latencies, 0.95),
            }
        )
        print(path, runs[-1], flush=True)
    return runs, first or []


def _top(answer: dict, scores: list[str]) -> dict[str, float]:
    """The score tokens' log-probabilities in an answer's top list (a leading space stripped)."""
    top = answer["choices"][0]["logprobs"]["top_logprobs"][0]
    out: dict[str, float] = {}
    for token, lp in top.items():
        key = token.strip()
        if key in scores and key not in out:
            out[key] = lp
    return out


def _expected(top: dict[str, float]) -> float | None:
    if not top:
        return None
    mass = {k: math.exp(v) for k, v in top.items()}
    total = sum(mass.values())
    return sum(int(k) * p for k, p in mass.items()) / total


def _compare(ours: list, theirs: list, exact: list, records: list, scores: list[str]) -> dict:
    diffs, gaps, gaps_exact, both = [], [], [], 0
    same_record, any_diffs, overlap = 0, [], []
    for a, b, x, r in zip(ours, theirs, exact, records):
        la = a["choices"][0]["logprobs"]["top_logprobs"][0]
        lb = b["choices"][0]["logprobs"]["top_logprobs"][0]
        overlap.append(len(set(la) & set(lb)))
        any_diffs += [abs(la[k] - lb[k]) for k in set(la) & set(lb)]
        ta, tb = _top(a, scores), _top(b, scores)
        shared = set(ta) & set(tb)
        both += bool(shared)
        diffs += [abs(ta[k] - tb[k]) for k in shared]
        ea, eb = _expected(ta), _expected(tb)
        if ea is not None and eb is not None:
            gaps.append(abs(ea - eb))
        if eb is not None and x.get("expected") is not None:
            gaps_exact.append(abs(x["expected"] - eb))
        same_record += r["records"][0]["raw_score"] == x.get("expected")
    return {
        "top_list_tokens_in_common_mean": statistics.fmean(overlap),
        "top_list_logprob_abs_diff": {"max": max(any_diffs), "mean": statistics.fmean(any_diffs)},
        "cases_with_a_score_token_in_both_top_lists": both,
        "score_token_logprob_abs_diff": {
            "max": max(diffs, default=None),
            "mean": statistics.fmean(diffs) if diffs else None,
        },
        "expected_score_from_top_lists_abs_diff": {
            "max": max(gaps, default=None),
            "mean": statistics.fmean(gaps) if gaps else None,
        },
        "localjudge_exact_vs_llamacpp_top_list_expected_abs_diff": {
            "max": max(gaps_exact, default=None),
            "mean": statistics.fmean(gaps_exact) if gaps_exact else None,
        },
        "completions_extension_expected_equals_evaluate_record": same_record,
        "cases": len(ours),
    }


def _markdown(r: dict) -> str:
    m, lp = r["machine"], r["logprobs"]
    lines = [
        "# `localjudge serve` beside llama.cpp's server",
        "",
        f"Judge {r['judge']} (GGUF `{r['gguf']}`), G-Eval {r['metric']}, the first {r['cases']} cases of "
        f"`localjudge/examples/summeval_demo.jsonl`, one case per request. Machine: {m['cpu']}, {m['cores']} cores, "
        f"torch {m['torch']} ({m['torch_threads']} threads), Python {m['python']}. {r['note']}",
        "",
        f"llama.cpp: {r['llama_cpp']}, {r['threads']} threads, built with `{r['llama_cpp_build']}`.",
        "",
        "Requests per second (p50 / p95 latency in seconds); localjudge in fp32, its defaults:",
        "",
        "| server and endpoint | "
        + " | ".join(f"{run['clients']} clients" for run in next(iter(r["runs"].values())))
        + " |",
        "|---|" + "---|" * len(next(iter(r["runs"].values()))),
    ]
    for name, runs in r["runs"].items():
        cells = [f"{x['requests_per_s']:.2f} ({x['p50_s']:.2f} / {x['p95_s']:.2f})" for x in runs]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    base = {x["clients"]: x["requests_per_s"] for x in r["runs"]["llama.cpp /v1/completions"]}
    ours = {x["clients"]: x["requests_per_s"] for x in r["runs"]["localjudge /v1/completions"]}
    lines += [
        "",
        "localjudge's `/v1/completions` over llama.cpp's, same requests: "
        + ", ".join(f"{c} clients {ours[c] / base[c]:.2f}×" for c in base)
        + ".",
        "",
        "## Log-probabilities",
        "",
        "llama.cpp computes on the GGUF's own quantised blocks; localjudge dequantises them to fp32 at load, so "
        "small differences are expected. *first*: the top-20 list of the first generated token, what a client "
        "reading a score from top log-probabilities gets; *next*: the position after it (the prompt plus the "
        f"first token, which was the same on both servers in {lp['same_first_token']} of {r['cases']} cases).",
        "",
        "| position | top-20 tokens in common (mean) | their log-prob, abs. diff: max / mean (nat) | cases with a "
        "score token in both lists | score tokens' log-prob, abs. diff: max / mean | expected score from the "
        "lists, abs. diff: max / mean | localjudge's exact expected score against llama.cpp's list: max / mean |",
        "|---|---|---|---|---|---|---|",
    ]
    for where in ("first", "next"):
        x = lp[where]
        lines.append(
            f"| {where} | {x['top_list_tokens_in_common_mean']:.1f} | {_f(x['top_list_logprob_abs_diff']['max'])} / "
            f"{_f(x['top_list_logprob_abs_diff']['mean'])} | {x['cases_with_a_score_token_in_both_top_lists']} of "
            f"{x['cases']} | {_f(x['score_token_logprob_abs_diff']['max'])} / "
            f"{_f(x['score_token_logprob_abs_diff']['mean'])} | "
            f"{_f(x['expected_score_from_top_lists_abs_diff']['max'])} / "
            f"{_f(x['expected_score_from_top_lists_abs_diff']['mean'])} | "
            f"{_f(x['localjudge_exact_vs_llamacpp_top_list_expected_abs_diff']['max'])} / "
            f"{_f(x['localjudge_exact_vs_llamacpp_top_list_expected_abs_diff']['mean'])} |"
        )
    lines += [
        "",
        f"The `localjudge` extension's expected score equals the `/v1/evaluate` record's raw score in "
        f"{lp['first']['completions_extension_expected_equals_evaluate_record']} of {r['cases']} cases.",
        "",
        "Command: `python -m benchmarks.serve.serve_llamacpp` (see its docstring); raw figures in "
        "serve_llamacpp_results.json.",
        "",
    ]
    return "\n".join(lines)


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"


if __name__ == "__main__":
    main()
