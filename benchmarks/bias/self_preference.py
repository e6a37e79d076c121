"""Self-preference study: the four embedded judges (three families, two Qwen sizes) on their own outputs, CPU.

Generators: smollm2-135m (smollm), gemma3-270m (gemma, a base model: no chat template, it answers a
plain "Question: ...\\nAnswer:" prompt), qwen2.5-coder-0.5b and -1.5b (qwen, one tokenizer), and
the references; on summaries also two SummEval systems with expert scores (the human anchor,
`_study_items.SYSTEMS`). Two tasks (`_study_items`):

- summaries: the first --articles SummEval dev articles; every model summarises each, greedy,
  with one instruction ("Summarize the following news article in two or three sentences.");
- answers: --prompts prompts of prompts.jsonl round-robin over its categories; greedy answers.

Every model then judges every response (`_study_judging`, the bias lab's judging pipeline): pointwise (`consistency` for
summaries, `correctness` against the reference for answers; probability-weighted scores) with its
own log-perplexity of each response; pairwise on every pair of generators of an item in both
orders (`pairwise_summary.yaml` for summaries, the builtin `pairwise` for answers); and "which one
did you write?" on the pairs holding its own response. The bias lab analyses the judgments: per
task a study folder (report.md/json, heatmap.png, win_rates.png, position.png, the lab's judgment
files), a recognition/ study, and results.md with the key numbers and the time of every phase.

Budget (2 CPU cores, fp32). The 1.5B judge reads ~45 prompt tokens/s, the 0.5B ~3x and the small
two ~10x faster, and the engine computes a prefix that a batch of prompts shares once. Tokens
computed, counted with the engine's planner on the smoke run's prompts (SmolLM2's tokenizer; an
article is ~550 tokens, a summary ~70): per article and judge, with G = 7 generators, pairwise
2·C(7,2) = 42 prompts ≈ 42 × 270 suffix tokens + the article once ≈ 12k; recognition 12 prompts ≈
3.7k; pointwise 7 ≈ 2.2k; log-perplexity 7 ≈ 1.4k: ~19k tokens, ~7 min for the 1.5B, ~2.3 for the
0.5B, ~0.7 for each small judge: ~11 min per article. Per prompt (G = 5, ~170-token suffixes after
shared instructions): pairwise 20 prompts ≈ 3.6k, recognition 8 ≈ 1.4k, pointwise 5 ≈ 1.3k,
log-perplexity ≈ 0.4k: ~6.6k tokens, ~2.5 min for the 1.5B, ~3.8 min for all four. Generation
(batches of 8, ~1 s per decoding step of the 1.5B) ~13 min for all models, loads ~2 min. Defaults,
10 articles and 10 prompts: 10 × 11 + 10 × 3.8 + 15 ≈ 165 min ≈ 2.7 h on otherwise idle cores; on a
loaded machine much longer (results.md records wall and CPU time of every unit, and the load
average). Ten items is about the fewest at which an item-level sign-flip test can survive Holm's
correction across the ~18 tests of a report (2 / 2^10 < 0.05 / 18); `--dtype bfloat16` (~70 tokens/s
for the 1.5B) saves about a quarter.

Run from the repository root (resumable: a rerun continues where a killed one stopped):

    LOCALJUDGE_CACHE=/tmp/ljcache nice -n 19 .venv/bin/python -m benchmarks.bias.self_preference
    .venv/bin/python -m benchmarks.bias.self_preference --analyse-only   # seconds, no model

Sizes and judges may only grow between runs into one --out-dir (the study judges the union);
everything else (dtype, token limits, the prompts) must stay as config.json records it.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path

from benchmarks.bias import _study_items as items
from benchmarks.bias._study_judging import Task, judge_task, pending
from benchmarks.lib.common import SUMMEVAL_DATA

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

JUDGES = ("smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
OUT = HERE / "self_preference"


def tasks() -> list[Task]:
    from localjudge.metrics import builtin_metric
    from localjudge.metrics.spec import load_metric_file

    return [
        Task(
            "summaries",
            builtin_metric("consistency"),
            load_metric_file(HERE / "pairwise_summary.yaml"),
            "summaries of news articles",
            "Article",
        ),
        Task("answers", builtin_metric("correctness"), builtin_metric("pairwise"), "answers to questions", "Question"),
    ]


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", type=Path, default=OUT, help="where the study's files go")
    ap.add_argument("--articles", type=int, default=10, help="SummEval dev articles, the first N in file order")
    ap.add_argument("--prompts", type=int, default=10, help="prompts of prompts.jsonl, round-robin over categories")
    ap.add_argument("--judges", nargs="+", default=list(JUDGES), help="models that generate and judge")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"], help="of every model")
    ap.add_argument("--device", default="cpu", help="where the models run: cpu, cuda, cuda:N (hub judges on a GPU)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (recorded with each judge)")
    ap.add_argument("--summary-tokens", type=int, default=96, help="generation limit of a summary")
    ap.add_argument("--answer-tokens", type=int, default=64, help="generation limit of an answer")
    ap.add_argument("--batch-size", type=int, default=8, help="prompts per generation chunk")
    ap.add_argument("--summeval", type=Path, default=SUMMEVAL_DATA)
    ap.add_argument("--prompts-file", type=Path, default=HERE / "prompts.jsonl")
    ap.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples of the analysis")
    ap.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and tests")
    ap.add_argument("--analyse-only", action="store_true", help="analyse the records on disk; loads no model")
    ap.add_argument("--no-figures", action="store_true", help="write the reports without their figures (PNG)")
    return ap.parse_args(argv)


def check_config(args: argparse.Namespace, out: Path) -> dict:
    """The run's settings, refused if they contradict those of the records already in `out`."""
    fixed = {
        "summary_instruction": items.SUMMARY_INSTRUCTION,
        "systems": sorted(items.SYSTEMS),
        "dtype": args.dtype,
        "device": args.device,
        "summary_tokens": args.summary_tokens,
        "answer_tokens": args.answer_tokens,
        "batch_size": args.batch_size,
    }
    grow = {"articles": args.articles, "prompts": args.prompts, "judges": list(args.judges)}
    path = out / "config.json"
    if path.exists():
        old = json.loads(path.read_text())
        if args.analyse_only:  # the records' own settings; the analysis loads no model
            return old
        for key, value in fixed.items():
            was = old.get(key, "cpu" if key == "device" else None)  # studies before --device ran on the CPU
            if was != value:
                sys.exit(f"error: {out} was run with {key}={was!r}, not {value!r}; pass that or use another --out-dir")
        if (
            args.articles < old["articles"]
            or args.prompts < old["prompts"]
            or not set(old["judges"]) <= set(args.judges)
        ):
            sys.exit(
                f"error: {out} holds {old['articles']} articles, {old['prompts']} prompts and judges "
                f"{', '.join(old['judges'])}; a rerun may only add to them (or use another --out-dir)"
            )
    elif args.analyse_only:
        sys.exit(f"error: {out} holds no study (no config.json); run it first")
    config = fixed | grow
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=1) + "\n")
    return config


class Clock:
    """Appends the wall and CPU time of every unit of work to timings.jsonl, and prints them.

    Units run one after another, so a unit's CPU time is the process's CPU time (all threads)
    since the previous unit ended: on a machine shared with other jobs, CPU seconds divided by
    the threads give the wall time the unit would take on idle cores.
    """

    def __init__(self, out: Path):
        self.path = out / "timings.jsonl"
        self.start = time.perf_counter()
        self.cpu = time.process_time()
        self.run = time.strftime("%Y-%m-%dT%H:%M:%S")

    def __call__(self, phase: str, task: str, model: str, item: str, seconds: float, prompts: int) -> None:
        cpu, self.cpu = time.process_time() - self.cpu, time.process_time()
        row = {"run": self.run, "phase": phase, "task": task, "model": model, "item": item}
        row |= {"seconds": round(seconds, 2), "cpu_s": round(cpu, 2), "prompts": prompts}
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        elapsed = time.perf_counter() - self.start
        print(
            f"[{elapsed:7.1f}s] {model} {phase} {task} {item}: {seconds:.1f}s ({cpu:.1f}s CPU)",
            file=sys.stderr,
            flush=True,
        )


def write_others(path: Path, others: list) -> None:
    """Appends the responses no model writes that `path` lacks (before any model appends its own)."""
    from localjudge.runs.generation import RESPONSES, read_responses

    have = {(r.id, r.generator) for r in read_responses(path)} if path.exists() else set()
    missing = [r for r in others if (r.id, r.generator) not in have]
    if missing:
        with RESPONSES.open(path, "resume") as f:
            for r in missing:
                f.write(r)


def canonical_order(path: Path, cases: list, generators: list[str]) -> None:
    """Rewrites the responses file item by item, generators by name, unless it is in that order already."""
    from localjudge.runs.generation import RESPONSES, read_responses

    rows = read_responses(path)
    rank = {c.id: k for k, c in enumerate(cases)}
    ordered = sorted(rows, key=lambda r: (rank[r.id], r.generator))
    assert {r.generator for r in rows} <= set(generators), "the responses file holds a generator not asked for"
    if ordered != rows:
        RESPONSES.replace(path, ordered)


def load(name: str, args: argparse.Namespace, clock: Clock):
    from localjudge.judges import loading

    start = time.perf_counter()
    model = loading.load_judge(name, device=args.device, dtype=args.dtype, progress=False)
    clock("load", "-", name, "-", time.perf_counter() - start, 0)
    return model


def run_models(args: argparse.Namespace, out: Path, clock: Clock, study_tasks: list[Task]) -> None:
    """Generation by every model, then judging by every judge; each model loaded only when it has work."""
    import torch

    from localjudge.runs.generation import generate_responses, read_responses
    from localjudge.runs.options import RunOptions

    torch.set_num_threads(args.threads)
    cases = {
        "summaries": items.summary_items(args.summeval, args.articles),
        "answers": items.answer_items(args.prompts_file, args.prompts),
    }
    others = {
        "summaries": items.other_summaries(args.summeval, cases["summaries"]),
        "answers": items.reference_answers(cases["answers"]),
    }
    limits = {"summaries": args.summary_tokens, "answers": args.answer_tokens}
    files = {t: out / t / "responses.jsonl" for t in cases}
    for t, path in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_others(path, others[t])
    for name in args.judges:
        have = {t: {(r.id, r.generator) for r in read_responses(files[t])} for t in cases}
        todo = {t: [c for c in cases[t] if (c.id, name) not in have[t]] for t in cases}
        if not any(todo.values()):
            continue
        model = load(name, args, clock)
        for t in cases:
            if todo[t]:
                start = time.perf_counter()
                generate_responses(
                    cases[t],
                    model,
                    RunOptions(out=files[t], resume=True, progress=False),
                    max_new_tokens=limits[t],
                    batch_size=args.batch_size,
                )
                clock("generate", t, name, f"{len(todo[t])} items", time.perf_counter() - start, len(todo[t]))
        del model
        gc.collect()
    generators = {t: sorted([*args.judges, *{r.generator for r in others[t]}]) for t in cases}
    for t in cases:
        canonical_order(files[t], cases[t], generators[t])
    responses = {t: read_responses(files[t]) for t in cases}
    for name in args.judges:
        if not any(
            any(pending(task, name, responses[task.name], out / task.name / "records").values()) for task in study_tasks
        ):
            continue
        judge = load(name, args, clock)
        for task in study_tasks:
            judge_task(judge, task, responses[task.name], out / task.name / "records", clock)
        del judge
        gc.collect()


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    out = args.out_dir.resolve()
    config = check_config(args, out)
    clock = Clock(out)
    load_start = os.getloadavg()
    study_tasks = tasks()
    if not args.analyse_only:
        run_models(args, out, clock, study_tasks)
    from benchmarks.bias._study_results import analyse, write_results

    start = time.perf_counter()
    studies = analyse(
        out,
        study_tasks,
        config["judges"],
        ROOT,
        seed=args.seed,
        n_bootstrap=args.bootstrap,
        figures=not args.no_figures,
    )
    seconds = time.perf_counter() - start
    if not args.analyse_only:
        clock("analysis", "-", "-", "-", seconds, 0)
        from benchmarks.lib.common import machine

        run = {"run": clock.run, "wall_s": round(time.perf_counter() - clock.start, 1), "threads": args.threads}
        run |= {
            "load_start": load_start[0],
            "load_end": os.getloadavg()[0],
            "argv": argv if argv is not None else sys.argv[1:],
        }
        run |= {"machine": machine("python", "torch", "simd")}
        with (out / "runs.jsonl").open("a", encoding="utf-8") as f:
            f.write(json.dumps(run) + "\n")
    write_results(out, studies, config, ROOT)
    print(f"analysis {seconds:.1f}s; results in {out / 'results.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
