"""Self-preference study with the two embedded families: SmolLM2-135M and Gemma 3 270M, on CPU.

Both models answer the 40 prompts of `benchmarks/bias/prompts.jsonl` (greedy), then both judge
every answer with the correctness metric (pointwise, against the reference) and every
SmolLM-vs-Gemma pair with the pairwise metric in both orders. The bias lab then reports
self-preference (difference in differences), the perplexity covariate, length and position bias.

Run from the repository root (about 20 minutes on 2 CPU cores; see results.md for the measured time):

    .venv/bin/python -m benchmarks.bias.bias_study

It rewrites benchmarks/bias/{responses.jsonl, report.json, report.md, heatmap.png, results.md,
pointwise_records.jsonl, pairwise_records.jsonl, records/}. Generation runs in bf16 (fast; fixed
chunks of prompts keep it reproducible), judging in fp32 (bf16 scores on CPU depend on which
prompts share a padded batch). Everything is greedy and seeded, on one torch thread: on the same
CPU type a rerun reproduces the committed files (results.md differs in its timings).
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import sys
import time
from pathlib import Path

from benchmarks.lib.common import EMBEDDED_JUDGES, machine

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "benchmarks" / "bias"
GENERATORS = EMBEDDED_JUDGES


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", type=Path, default=HERE, help="where the study's files go")
    ap.add_argument("--prompts", type=Path, default=HERE / "prompts.jsonl")
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--batch-size", type=int, default=8, help="prompts per generation chunk")
    ap.add_argument(
        "--gen-dtype",
        default="bfloat16",
        choices=["float32", "bfloat16"],
        help="dtype of generation (fixed chunks keep it reproducible)",
    )
    ap.add_argument(
        "--judge-dtype",
        default="float32",
        choices=["float32", "bfloat16"],
        help="dtype of judging; bf16 scores on CPU shift by up to ~0.08 points with the "
        "batch a prompt lands in, fp32 by ~1e-5",
    )
    ap.add_argument(
        "--threads", type=int, default=1, help="torch threads; pinned so results do not depend on the core count"
    )
    ap.add_argument("--limit", type=int, default=None, help="only the first N prompts (smoke runs)")
    ap.add_argument("--resume", action="store_true", help="continue an interrupted run in --out-dir")
    args = ap.parse_args(argv)

    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import torch

    from localjudge import load_judge
    from localjudge.bias import BiasOptions
    from localjudge.bias.judging import judge_responses
    from localjudge.bias.study import analyze_judgments, summary_lines, write_study
    from localjudge.io.cases import load_cases
    from localjudge.metrics import builtin_metric
    from localjudge.runs.generation import generate_responses, read_responses
    from localjudge.runs.options import RunOptions

    torch.set_num_threads(args.threads)
    out = args.out_dir.resolve()
    out.mkdir(parents=True, exist_ok=True)
    cases = load_cases(args.prompts)[: args.limit]
    responses_file = out / "responses.jsonl"
    metric, pairwise = builtin_metric("correctness"), builtin_metric("pairwise")
    timings: list[tuple[str, float]] = []
    load_start = os.getloadavg()
    start = time.perf_counter()

    def timed(label: str, fn):
        t = time.perf_counter()
        value = fn()
        timings.append((label, time.perf_counter() - t))
        print(f"[{time.perf_counter() - start:7.1f}s] {label}: {timings[-1][1]:.1f}s", file=sys.stderr)
        return value

    def load(name: str, dtype: str):
        return timed(f"load {name} ({dtype})", lambda: load_judge(name, device="cpu", dtype=dtype))

    def generate(model, first: bool) -> None:
        timed(
            f"generate {model.info.name}",
            lambda: generate_responses(
                cases,
                model,
                RunOptions(out=responses_file, resume=args.resume or not first, overwrite=first and not args.resume),
                max_new_tokens=args.max_new_tokens,
                batch_size=args.batch_size,
            ),
        )

    def judge(model):
        responses = read_responses(responses_file)
        return timed(
            f"judge with {model.info.name}",
            lambda: judge_responses(
                model, responses, metric, pairwise, records_dir=out / "records", run=RunOptions(resume=args.resume)
            ),
        )

    # Each model is loaded once per role and freed before the next; with one dtype for both
    # roles, the model loaded last for generation judges first (three loads instead of four).
    judgments = []
    last = None
    for k, name in enumerate(GENERATORS):
        model = load(name, args.gen_dtype)
        generate(model, first=k == 0)
        if k == len(GENERATORS) - 1 and args.gen_dtype == args.judge_dtype:
            judgments.append(judge(model))
            last = name
        del model
        gc.collect()
    for name in reversed(GENERATORS):
        if name != last:
            model = load(name, args.judge_dtype)
            judgments.append(judge(model))
            del model
            gc.collect()
    judgments.sort(key=lambda v: v.judge.name)

    responses = read_responses(responses_file)
    study = timed(
        "analysis",
        lambda: analyze_judgments(judgments, responses, responses_file, metric, pairwise, settings=BiasOptions(seed=0)),
    )
    if responses_file.is_relative_to(ROOT):  # no absolute paths of this clone in committed files
        study = study.model_copy(update={"responses_file": str(responses_file.relative_to(ROOT))})
    write_study(study, judgments, out)
    total = time.perf_counter() - start
    (out / "results.md").write_text(
        results_markdown(study, judgments, out, args, timings, total, load_start, os.getloadavg()), encoding="utf-8"
    )
    print("\n".join(summary_lines(study)))
    print(f"total {total / 60:.1f} min; files in {out}")
    return 0


def _fmt(e, digits: int = 2, signed: bool = True) -> str:
    if e is None or e.value is None:
        return "–"
    ci = f" [{e.ci_low:.{digits}f}, {e.ci_high:.{digits}f}]" if e.ci_low is not None else ""
    p = f", p={e.p_value:.3g}" if e.p_value is not None else ""
    return f"{e.value:{'+' if signed else ''}.{digits}f}{ci}{p}"


def _quality(out: Path, judgments) -> dict[tuple[str, str], dict]:
    """Per (judge, metric): mean valid mass, unscored count, spread and mean of the scores."""
    import numpy as np

    from localjudge.runs.results_file import read_results

    stats = {}
    for v in judgments:
        for path in sorted((out / "records").glob(f"{v.judge.name}.*.jsonl")):
            recs = read_results(path)
            mass = [r.valid_mass for r in recs if r.valid_mass is not None]
            scores = [r.raw_score if r.raw_score is not None else r.score for r in recs if r.score is not None]
            stats[(v.judge.name, recs[0].metric)] = {
                "n": len(recs),
                "unscored": sum(r.score is None for r in recs),
                "mass": float(np.mean(mass)) if mass else None,
                "sd": float(np.std(scores)) if scores else None,
                "mean": float(np.mean(scores)) if scores else None,
            }
    return stats


def template_version() -> str:
    from localjudge.kinds.text import TEMPLATE_VERSION

    return TEMPLATE_VERSION


def metric_name(study, field: str) -> str | None:
    spec = getattr(study, field)
    return None if spec is None else spec["name"]


def results_markdown(study, judgments, out: Path, args, timings, total, load_start, load_end) -> str:
    """results.md: the command, the machine, the time it took and the key numbers with caveats."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime
    m = machine("python")
    p, q = study.pointwise, study.pairwise
    lines = [
        "# Bias study: SmolLM2-135M vs Gemma 3 270M (embedded judges, CPU)",
        "",
        "Command (from the repository root, fresh clone with the venv installed):",
        "",
        "```",
        ".venv/bin/python -m benchmarks.bias.bias_study" + (f" --limit {args.limit}" if args.limit else ""),
        "```",
        "",
        f"- Machine: {m['cpu']}, {m['cores']} cores; torch threads {args.threads}; "
        f"Python {m['python']}. Load average at start/end: {load_start[0]:.1f} / {load_end[0]:.1f} "
        "(a shared machine: other jobs ran concurrently, so wall times are pessimistic).",
        f"- dtype: {args.gen_dtype} for generation, {args.judge_dtype} for judging, device cpu. Greedy decoding, "
        f"max_new_tokens {args.max_new_tokens}, generation chunks of {args.batch_size} prompts.",
        f"- Prompts: {study.n_items} (`benchmarks/bias/prompts.jsonl`); generators: "
        + ", ".join(f"{g.name} ({g.family}, {g.info.get('provenance', '')[:19]}…)" for g in study.generators)
        + ".",
        "- Judges: the same two models; pointwise metric `correctness` (1–5, against the reference), "
        "pairwise metric `pairwise` on every SmolLM-vs-Gemma pair, both orders; prompt template "
        f"`{template_version()}` (another template gives other numbers).",
        f"- Wall time: **{total / 60:.1f} min** in all; CPU time of this process {cpu / 60:.1f} min "
        "(what it would take on otherwise idle cores).",
        "",
        "| phase | seconds |",
        "|---|---|",
        *[f"| {k} | {t:.0f} |" for k, t in timings],
        "",
        "## Key numbers",
        "",
        "Estimate [95% bootstrap CI over prompts], unadjusted p (Holm-adjusted findings are in report.md).",
        "",
        "| judge | self-preference DiD (points, 1–5 scale) | raw own − other gap | pairwise P(own) − reference | "
        "P(first position wins) | flip rate | length slope (points / 100 chars) |",
        "|---|---|---|---|---|---|---|",
    ]
    sp = {x.judge: x for x in (p.self_preference if p else [])}
    psp = {x.judge: x for x in (q.pairwise_self_preference if q else [])}
    pos = {x.judge: x for x in (q.position if q else [])}
    ln = {x.judge: x for x in (p.length if p else [])}
    for j in study.judges:
        n = j["name"]
        lines.append(
            f"| {n} | {_fmt(sp[n].did) if n in sp else '–'} | {_fmt(sp[n].raw_gap) if n in sp else '–'} | "
            f"{_fmt(psp[n].difference) if n in psp else '–'} | "
            f"{_fmt(pos[n].first_position, signed=False) if n in pos else '–'} | "
            f"{_fmt(pos[n].flip_rate, signed=False) if n in pos else '–'} | {_fmt(ln[n].slope) if n in ln else '–'} |"
        )
    lines += ["", "Summary from the analysis:", ""]
    lines += [f"- {s}" for r in (p, q) if r is not None for s in r.summary]
    quality = _quality(out, judgments)
    lines += [
        "",
        "How well each judge discriminates at all (from `records/`):",
        "",
        "| judge | metric | mean valid mass | unscored | score sd | mean score |",
        "|---|---|---|---|---|---|",
    ]
    num = lambda x: "–" if x is None else f"{x:.3f}"  # noqa: E731
    for (judge, met), st in quality.items():
        lines.append(
            f"| {judge} | {met} | {num(st['mass'])} | {st['unscored']}/{st['n']} | {num(st['sd'])} | "
            f"{num(st['mean'])} |"
        )
    lines += [
        "",
        "## Caveats",
        "",
        "- These are tiny models (135M instruct, 270M *base*), so a null result here says little about "
        "larger judges; run the same pipeline (`localjudge generate` + `localjudge bias`) with registry "
        "judges on a GPU for a meaningful study. What this run shows about the judges themselves:",
    ]
    for (judge, met), st in quality.items():
        if met == metric_name(study, "metric") and st["sd"] is not None:
            lines.append(
                f"  - {judge} gives correctness scores with sd {st['sd']:.2f} on the 1–5 scale around "
                f"{st['mean']:.2f} (mean valid mass {st['mass']:.2f}): "
                + ("it barely tells answers apart." if st["sd"] < 0.25 else "some spread.")
            )
        if met == metric_name(study, "pairwise_metric"):
            note = f"  - {judge} pairwise: {st['unscored']} of {st['n']} pairs unscored"
            if st["unscored"]:
                note += " (too little probability on 'A'/'B' after the prompt; skipped, never guessed)"
            if judge in pos and pos[judge].flip_rate.value is not None:
                note += (
                    f"; among scored pairs its judgment flips with the order in "
                    f"{100 * pos[judge].flip_rate.value:.0f}% and the answer shown first gets "
                    f"{pos[judge].first_position.value:.2f} probability on average"
                )
            lines.append(note + ".")
    lines += [
        "- Gemma 3 270M is a base model: it answers the plain `Question: …\\nAnswer:` prompt and its "
        "continuation is cut at the first blank line or next `Question:`; its answers are often "
        "repetitive. SmolLM2 answers through its chat template.",
        "- With two families, self-preference is identified only *relative* to the other family's judge: "
        "the two DiDs mirror each other (one judge's bias also appears in the other's estimate).",
        f"- {study.n_items} prompts: intervals are wide; p-values in the table are unadjusted.",
        "- Reproducibility, checked on this machine: four runs wrote a byte-identical responses.jsonl; two "
        "runs of the fp32 judges wrote byte-identical pairwise records; re-judging every response in a new "
        "process gave identical correctness scores, and judging a third of them (other batches) moved no "
        "score by more than 1e-5. Judging runs in fp32 because bf16 scores on CPU move by up to ~0.08 points "
        "with the prompts that share a padded batch, as large as the effects measured here. bf16 kernels "
        "differ between CPUs (AMX/AVX-512 vs AVX2), so another machine can write slightly different "
        "answers, hence different scores; a change of prompt template also changes every score.",
        "- Effects of a few hundredths of a point are fragile: with the previous template (geval-v1) the "
        "significant pointwise length effect was SmolLM2's (−0.01 points per 100 characters), not Gemma's.",
        "",
        "Files: `responses.jsonl` (answers), `report.md` / `report.json` (full analysis), `heatmap.png` "
        "(judge × generator mean scores), `pointwise_records.jsonl` / `pairwise_records.jsonl` (analysis "
        "inputs), `records/` (every judgment with its distribution, metric spec and judge provenance).",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
