"""What the batch-invariant engine costs, and how far bf16 sits from fp32, measured side by side.

One judge, SummEval dev summaries (`consistency_likelihood` prompts: article, instruction, summary;
for scoring the same text followed by a 1-10 question). In one run, repetitions interleaved:

  floor        a bare batched forward of the stock model over the likelihood rows (no prefix
               reuse, last-position logits only), as in `throughput_likelihood.py`
  stock        `batch_invariant=False`: rows right-padded, transformers' SDPA and `nn.Linear`, grid 1,
               fp32 output layer (the engine before batch invariance)
  invariant    the default: packed rows, block attention, fixed-shape GEMMs, grid 32, fp32 output layer

for likelihood (prefix reuse on) and for score reading (1-10). Ratios are floor seconds / method
seconds. Then bf16 against fp32 throughput on the SummEval dev summaries (article by article, with and
without prefix reuse); per dtype, whether items alone and batched agree to the bit; bf16 against
fp32: the largest change of a normalised expected score and of a per-token log-probability, with the
output layer in fp32 (the default) and in bf16, and with one rounding to bf16 at a time (precision).

    .venv/bin/python -m benchmarks.invariance.invariance --judge smollm2-135m --docs 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks.lib.common import machine
from benchmarks.lib.likelihood_rows import floor_pass, likelihood_articles
from localjudge import load_judge
from localjudge.engine.options import EngineOptions
from localjudge.scoring.likelihood import split_boundary

HERE = Path(__file__).parent
RESULTS_JSON, RESULTS_MD = HERE / "invariance_results.json", HERE / "invariance_results.md"


def _items(judge, docs: int):
    groups = likelihood_articles(judge, docs)
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
    for judge in (stock, inv):  # first calls build kernels and caches: not what a long run pays
        judge.backend.token_logprobs(prompts[:2], conts[:2])
        judge.score_texts(questions[:2], 1, 10)
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
    for key, mixed, head in (("mixed", True, True), ("fp32_head", False, True), ("bf16_head", False, False)):
        low = _bf16(name, mixed, fp32_head=head)
        got = low.score_texts(questions, 1, 10)
        got_ll = low.backend.token_logprobs(prompts, conts)
        out[key] = {
            "max_normalized_delta": float(max(abs(a.normalized - b.normalized) for a, b in zip(want, got))),
            "max_token_logprob_delta": float(max(np.abs(a - b).max() for a, b in zip(want_ll, got_ll))),
            "max_mean_logprob_delta": float(max(abs(a.mean() - b.mean()) for a, b in zip(want_ll, got_ll))),
        }
    return out


def _bf16_throughput(name: str, docs: int | None, plain_docs: int) -> dict:
    """bf16 against fp32 likelihood throughput on SummEval dev articles, interleaved article by article.

    With prefix reuse (the default: an article once for its 16 summaries) on `docs` articles (None:
    all 50, 800 summaries), and without it on the first `plain_docs`, where every row is a full
    forward as in a plain prefill.
    """
    judges = {
        "float32": load_judge(name, options=EngineOptions(dtype="float32", device="cpu")),
        "bfloat16": _bf16(name, True),  # mixed precision, the CPU default
        "bfloat16-full": _bf16(name, False),
    }
    groups = likelihood_articles(judges["float32"], docs)
    out: dict = {"articles": len(groups), "summaries": sum(len(p) for p, _ in groups), "plain_articles": plain_docs}
    for mode, reuse, n in (("prefix_reuse", True, len(groups)), ("no_prefix_reuse", False, plain_docs)):
        seconds = dict.fromkeys(judges, 0.0)
        for k, (ps, cs) in enumerate(groups[:n]):
            pairs = [split_boundary(p, c) for p, c in zip(ps, cs)]
            names = list(judges)
            order = names[k % len(names) :] + names[: k % len(names)]  # rotated article by article
            for d in order:
                b = judges[d].backend
                if b.options.reuse_prefix != reuse:
                    judges[d] = judges[d].with_options(reuse_prefix=reuse)  # the same weights
                    b = judges[d].backend
                prompts = [b.encode(p) for p, _ in pairs]
                conts = [b.encode_continuation(c) for _, c in pairs]
                seconds[d] += _timed(lambda b=b, prompts=prompts, conts=conts: b.token_logprobs(prompts, conts))
        out[mode] = {
            "seconds": seconds,
            "bf16_speedup": seconds["float32"] / seconds["bfloat16"],
            "bf16_full_speedup": seconds["float32"] / seconds["bfloat16-full"],
        }
    return out


def _precision(name: str, docs: int) -> dict:
    """One rounding to bf16 at a time in the fp32 judge's linear layers (`_bf16_sources`)."""
    from benchmarks.invariance._bf16_sources import deviations

    ref = load_judge(name, options=EngineOptions(dtype="float32", device="cpu"))
    judges = {
        "bf16 mixed judge": (
            _bf16(name, True),
            "the engine's bf16 default on the CPU: linear layers bf16, the rest fp32",
        ),
        "bf16 judge": (_bf16(name, False), "every op in bf16, output layer fp32 (mixed_precision=False)"),
    }
    return deviations(ref, judges, *_items(ref, docs))


def _bf16(name: str, mixed: bool, **options):
    """The judge in bf16: mixed precision (the CPU default) or every op in bf16."""
    return load_judge(name, options=EngineOptions(dtype="bfloat16", device="cpu", mixed_precision=mixed, **options))


def _bitwise(name: str, dtype: str, docs: int, items: int) -> dict:
    """Items alone against the same items batched (two budgets, prefix reuse on and off), reversed order.

    `dtype` "bfloat16" is the CPU default (mixed precision), "bfloat16-full" every op in bf16.
    """
    full = dtype == "bfloat16-full"
    judge = _bf16(name, False) if full else load_judge(name, options=EngineOptions(dtype=dtype, device="cpu"))
    prompts, conts, questions = _items(judge, docs)
    prompts, conts, questions = prompts[:items], conts[:items], questions[:items]
    alone = [judge.score_texts([q], 1, 10)[0].probs for q in questions]
    ll_alone = [judge.backend.token_logprobs([p], [c])[0] for p, c in zip(prompts, conts)]
    same, total = 0, 0
    for budget in (1024, 8192):
        for reuse in (True, False):
            other = judge.with_options(token_budget=budget, reuse_prefix=reuse)  # the same weights
            got = other.score_texts(questions[::-1], 1, 10)[::-1]
            lls = other.backend.token_logprobs(prompts[::-1], conts[::-1])[::-1]
            same += sum(g.probs == a for g, a in zip(got, alone)) + sum(
                np.array_equal(a, b) for a, b in zip(ll_alone, lls)
            )
            total += 2 * len(questions)
    return {"judge": name, "dtype": dtype, "items": len(questions), "equal": int(same), "compared": total}


def _summeval(name: str, docs: int) -> dict:
    """Avg ρ (4 dimensions) of ll-mean and ll-sum on the first SummEval dev articles, fp32 and bf16."""
    from benchmarks.lib.common import DIMENSIONS, SUMMEVAL_DATA, load_summeval
    from benchmarks.lib.summeval import agreement, likelihood_metric
    from localjudge.kinds.likelihood import prompts as L

    cases = load_summeval(SUMMEVAL_DATA, docs)
    docs_of = [c.extra["doc_id"] for c in cases]
    out: dict = {"articles": docs, "summaries": len(cases)}
    for label, opts in (
        ("float32", EngineOptions(dtype="float32", device="cpu")),
        ("bfloat16", EngineOptions(dtype="bfloat16", device="cpu")),  # mixed precision, the CPU default
    ):
        judge = load_judge(name, options=opts)
        prompts, conts = [], []
        for dim in DIMENSIONS:
            m = likelihood_metric(dim)
            for c in cases:
                p = L.condition_prompt(judge, m, c)
                prompts.append(p)
                conts.append(L.continuation(p, c.actual_output))
        t0 = time.perf_counter()
        lls = judge.loglikelihood(prompts, conts)
        seconds = time.perf_counter() - t0
        n = len(cases)
        rho: dict = {"ll-mean": {}, "ll-sum": {}}
        for k, dim in enumerate(DIMENSIONS):
            part = lls[k * n : (k + 1) * n]
            human = [c.extra[f"human_{dim}"] for c in cases]
            rho["ll-mean"][dim] = agreement([r.mean for r in part], human, docs_of)["spearman"]
            rho["ll-sum"][dim] = agreement([r.sum for r in part], human, docs_of)["spearman"]
        out[label] = {
            "seconds": seconds,
            "rho": rho,
            "avg_rho": {s: float(np.mean(list(v.values()))) for s, v in rho.items()},
        }
    lo, hi = out["bfloat16"]["avg_rho"], out["float32"]["avg_rho"]
    out["avg_rho_delta"] = {s: lo[s] - hi[s] for s in ("ll-mean", "ll-sum")}
    return out


SECTIONS = ("speed", "bf16_throughput", "deviation", "precision", "bitwise", "summeval")


def render(results: dict) -> str:
    """The measured part of invariance_results.md (the notes below it are kept by hand)."""
    from benchmarks.lib.common import cell

    lines = ["# Batch-invariant engine: price and bf16 deviation (`benchmarks/invariance/invariance.py`)", ""]
    for judge, r in results.items():
        m = r.get("machine", {})
        runs: dict[str, list[str]] = {}  # command -> the sections it measured here
        for key, v in r.items():
            if isinstance(v, dict) and "command" in v:
                runs.setdefault(v["command"], []).append(f"{key} ({v['when']})")
        lines += [f"## {judge}", ""]
        lines += [f"- `{cmd}`: {', '.join(keys)}" for cmd, keys in runs.items()]
        lines += [f"- Machine: {m}", ""]
        speeds = [r[k] for k in ("speed_float32", "speed_bfloat16") if k in r]
        if speeds:
            lines += [
                "Seconds (best of the repetitions) and ratios to the floor (floor seconds / method seconds; "
                "> 1 is faster than the bare forward), in one run:",
                "",
                "| dtype | items | tokens | floor s | likelihood stock / invariant s | ×floor stock / invariant "
                "| invariant ÷ stock | scoring stock / invariant s | ×floor stock / invariant | invariant ÷ stock "
                "| GEMM plan | bitwise |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|",
            ]
            for sp in speeds:
                t, ll, sc, iv = (
                    sp["seconds"],
                    sp["likelihood_vs_floor"],
                    sp["scoring_vs_floor"],
                    sp["invariant_vs_stock"],
                )
                lines.append(
                    f"| {sp['dtype']} | {sp['items']} | {sp['tokens']} | {t['floor']:.1f} "
                    f"| {t['stock_ll']:.1f} / {t['inv_ll']:.1f} | {ll['stock']:.2f} / {ll['invariant']:.2f} "
                    f"| **{iv['likelihood']:.2f}** | {t['stock_score']:.1f} / {t['inv_score']:.1f} "
                    f"| {sc['stock']:.2f} / {sc['invariant']:.2f} | **{iv['scoring']:.2f}** | {sp['gemm']} "
                    f"| {sp['bitwise']} |"
                )
            lines.append("")
        if "bf16_vs_fp32" in r:
            d = r["bf16_vs_fp32"]
            lines += [
                f"bf16 against fp32 on the same {d['items']} items (max over items):",
                "",
                "| output layer | normalised expected score (1-10) | per-token log-prob (nat) | item mean log-prob |",
                "|---|---|---|---|",
            ]
            rows = (
                ("mixed", "bf16 mixed precision (default): fp32 output layer"),
                ("fp32_head", "every op bf16: fp32 output layer"),
                ("bf16_head", "every op bf16: bf16 output layer"),
            )
            for key, label in rows:
                if key not in d:
                    continue
                x = d[key]
                lines.append(
                    f"| {label} | {x['max_normalized_delta']:.4f} | {x['max_token_logprob_delta']:.3f} "
                    f"| {x['max_mean_logprob_delta']:.4f} |"
                )
            lines.append("")
        if "bf16_throughput" in r:
            bt = r["bf16_throughput"]
            lines += [
                "bf16 against fp32 likelihood throughput, SummEval dev (`consistency_likelihood`), interleaved "
                "article by article in one run:",
                "",
                "| pass | articles | fp32 s | bf16 s (mixed, the default) | bf16 s (every op) | mixed ÷ fp32 "
                "throughput | every op ÷ fp32 |",
                "|---|---|---|---|---|---|---|",
            ]
            for mode, n in (("prefix_reuse", bt["articles"]), ("no_prefix_reuse", bt["plain_articles"])):
                x = bt[mode]
                full_s = x["seconds"].get("bfloat16-full")
                full = "–" if full_s is None else f"{full_s:.1f}"
                full_x = "–" if full_s is None else f"{x['bf16_full_speedup']:.2f}"
                label = "bf16 s" if full_s is None else "mixed"  # runs before mixed precision timed one bf16
                lines.append(
                    f"| {mode.replace('_', ' ')} | {n} | {x['seconds']['float32']:.1f} "
                    f"| {x['seconds']['bfloat16']:.1f}{'' if full_s else ' (every op)'} | {full} "
                    f"| **{x['bf16_speedup']:.2f}**{'' if full_s else f' ({label})'} | {full_x} |"
                )
            lines.append("")
        if "precision" in r:
            from benchmarks.invariance._bf16_sources import render as render_precision

            lines += render_precision(r["precision"])
        bits = [r[k] for k in ("bitwise_float32", "bitwise_bfloat16", "bitwise_bfloat16-full") if k in r]
        if bits:
            lines += [
                "Bit checks: each item alone against the same items in reverse order, token budgets 1024 and 8192, "
                "prefix reuse on and off; score distributions (`==`) and per-token log-probabilities "
                "(`np.array_equal`):",
                "",
            ]
            lines += [f"- {b['dtype']}: {b['equal']}/{b['compared']} identical ({b['items']} items)" for b in bits]
            lines.append("")
        if "summeval" in r:
            se = r["summeval"]
            lines += [
                f"SummEval dev, first {se['articles']} articles ({se['summaries']} summaries), avg ρ over the 4 "
                "dimensions (per-article Spearman, averaged):",
                "",
                "| scorer | fp32 | bf16 (fp32 output layer) | bf16 − fp32 |",
                "|---|---|---|---|",
            ]
            for s in ("ll-mean", "ll-sum"):
                lines.append(
                    f"| {s} | {cell(se['float32']['avg_rho'][s])} | {cell(se['bfloat16']['avg_rho'][s])} "
                    f"| {se['avg_rho_delta'][s]:+.4f} |"
                )
            lines += [
                "",
                f"Likelihood pass: fp32 {se['float32']['seconds']:.1f} s, bf16 {se['bfloat16']['seconds']:.1f} s "
                f"(bf16 ÷ fp32 throughput {se['float32']['seconds'] / se['bfloat16']['seconds']:.2f}).",
                "",
            ]
    return "\n".join(lines) + "\n"


def write_md(results: dict) -> None:
    """invariance_results.md: the tables from the JSON, then the hand-written notes kept."""
    from benchmarks.lib.common import kept_section

    kept = kept_section(RESULTS_MD) if RESULTS_MD.exists() else ""
    RESULTS_MD.write_text(render(results) + kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judge", default="smollm2-135m")
    parser.add_argument("--docs", type=int, default=2, help="SummEval articles (16 summaries each) for fp32 speed")
    parser.add_argument("--bf16-docs", type=int, default=1, help="articles for bf16 speed, deviation and bit checks")
    parser.add_argument("--bit-items", type=int, default=16, help="items of the bit checks (first of --bf16-docs)")
    parser.add_argument("--summeval-docs", type=int, default=4, help="SummEval dev articles for the ρ comparison")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--throughput-docs", type=int, default=None, help="bf16_throughput: articles (default all 50)")
    parser.add_argument("--plain-docs", type=int, default=5, help="bf16_throughput: articles without prefix reuse")
    parser.add_argument("--sections", nargs="+", default=list(SECTIONS), choices=SECTIONS)
    parser.add_argument(
        "--dtypes",
        nargs="+",
        default=["float32", "bfloat16", "bfloat16-full"],
        help="dtypes of the bit checks (bfloat16: mixed precision, the CPU default; bfloat16-full: every op)",
    )
    parser.add_argument("--report", action="store_true", help="only rebuild the markdown from the JSON")
    args = parser.parse_args()
    torch.manual_seed(0)
    results = json.loads(RESULTS_JSON.read_text()) if RESULTS_JSON.exists() else {}
    if args.report:
        write_md(results)
        return
    result = results.setdefault(args.judge, {})
    result["machine"] = machine("simd", "torch_threads", "torch", "transformers")
    command = " ".join(["python -m benchmarks.invariance.invariance", *sys.argv[1:]])

    def save(key: str, value) -> None:  # after every section: a run cut short keeps what it measured
        result[key] = value | {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "command": command}
        RESULTS_JSON.write_text(json.dumps(results, indent=2) + "\n")
        write_md(results)
        print(json.dumps({key: result[key]}, indent=2), flush=True)

    if "speed" in args.sections:
        save("speed_float32", _speed(args.judge, "float32", args.docs, args.reps))
        save("speed_bfloat16", _speed(args.judge, "bfloat16", args.bf16_docs, args.reps))
    if "bf16_throughput" in args.sections:
        save("bf16_throughput", _bf16_throughput(args.judge, args.throughput_docs, args.plain_docs))
    if "deviation" in args.sections:
        save("bf16_vs_fp32", _deviation(args.judge, args.bf16_docs))
    if "precision" in args.sections:
        save("precision", _precision(args.judge, args.bf16_docs))
    if "bitwise" in args.sections:
        for d in args.dtypes:
            save(f"bitwise_{d}", _bitwise(args.judge, d, args.bf16_docs, args.bit_items))
    if "summeval" in args.sections:
        save("summeval", _summeval(args.judge, args.summeval_docs))


if __name__ == "__main__":
    main()
