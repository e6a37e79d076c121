"""Position bias of the embedded judges on human-labelled pairs (MT-Bench human pairs, LLMBar natural).

Each judge compares output_1 and output_2 of every pair with the built-in pairwise metric through
`evaluate`, which asks both presentation orders. Reported per judge and data set, with 95%
bootstrap intervals over pairs: accuracy against the human label with output_1 shown first, with
it shown second, and from both orders combined; the flip rate (the judgment changes with the
order); the mean probability given to whichever answer is shown first (0.5 = no position bias,
sign-flip test); and how often the longer answer wins.

Full run (both sets, all 300 pairs, both judges), from the repository root:

    .venv/bin/python -m benchmarks.bias.pairwise_position --limit 0

The committed results use a seeded subset of each set (see pairwise_position.md for N and the
measured throughput). Data: `../shared/data` beside the repository, or `--data-dir`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import time
from pathlib import Path

from benchmarks.lib.common import EMBEDDED_JUDGES, SHARED_DATA, machine

ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = SHARED_DATA
SETS = ("mtbench_human_pairs", "llmbar_natural")


def load_pairs(data_dir: Path, name: str, limit: int | None, seed: int) -> list[dict]:
    """The pairs of one set, or a seeded random subset of `limit` pairs in file order."""
    path = data_dir / f"{name}.json"
    if not path.is_file():
        sys.exit(f"error: {path} not found; pass --data-dir with the folder holding {name}.json")
    rows = json.loads(path.read_text(encoding="utf-8"))
    keep = range(len(rows))
    if limit and limit < len(rows):
        keep = sorted(random.Random(f"{seed}:{name}").sample(range(len(rows)), limit))
    return [dict(rows[i], index=i) for i in keep]


def run_set(judge, name: str, pairs: list[dict], metric, raw_dir: Path | None):
    """Judges one set in both orders; returns pairwise records, raw results and throughput."""
    from localjudge.bias import PairwiseRecord
    from localjudge.io.cases import TestCase
    from localjudge.runs.evaluate import evaluate

    cases = [
        TestCase(
            id=f"{name}-{p['index']:03d}",
            input=p["input"],
            extra={"output_1": p["output_1"], "output_2": p["output_2"], "label": p["label"]},
        )
        for p in pairs
    ]
    start = time.perf_counter()
    out = raw_dir / f"{judge.info.name}.{name}.jsonl" if raw_dir else None
    results = evaluate(cases, [metric], judge, truncate=True, out=out, overwrite=True).records
    seconds = time.perf_counter() - start
    records = []
    for p, r in zip(pairs, results):
        d = r.detail if r.score is not None else None  # an unscored pair keeps its readings, not a judgment
        records.append(
            PairwiseRecord(
                item_id=r.case_id,
                judge=judge.info.name,
                judge_family=judge.info.family,
                generator_a="output_1",
                family_a="human-data",
                generator_b="output_2",
                family_b="human-data",
                p_a_first=None if d is None else d.p_first_better_shown_first,
                p_a_second=None if d is None else d.p_first_better_shown_second,
                human_preferred="a" if p["label"] == 1 else "b",
                length_a=len(p["output_1"]),
                length_b=len(p["output_2"]),
            )
        )
    from localjudge.kinds import pairwise as P

    def n_tokens(case, first: str, second: str) -> int:  # the prompt `evaluate` builds, one order
        user = P.pairwise_message(metric, case, case.get(first), case.get(second))
        return judge.count_tokens(judge.render(P.SYSTEM, user, P.PAIRWISE_PREFILL))

    tokens = sum(n_tokens(c, "output_1", "output_2") + n_tokens(c, "output_2", "output_1") for c in cases)
    return records, results, {"seconds": seconds, "prompts": 2 * len(pairs), "prompt_tokens": tokens}


def summarize_set(records, results, speed, settings) -> dict:
    from localjudge.bias import pairwise_length_bias, position_bias

    pos = position_bias(records, settings)[0]
    length = pairwise_length_bias(records, settings)
    return {
        "n_pairs": len(records),
        "unscored": sum(r.score is None for r in results),
        "truncated": sum(r.truncated is not None for r in results),
        "position": pos.model_dump(mode="json"),
        "prefers_longer": length[0].prefers_longer.model_dump(mode="json") if length else None,
        "speed": speed
        | {
            "pairs_per_s": len(records) / speed["seconds"],
            "prompt_tokens_per_s": speed["prompt_tokens"] / speed["seconds"],
        },
        "pairs": [
            {
                "id": r.item_id,
                "p_a_first": r.p_a_first,
                "p_a_second": r.p_a_second,
                "human": r.human_preferred,
                "valid_mass": res.valid_mass,
                "unscored": res.unscored_reason,
            }
            for r, res in zip(records, results)
        ],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR)
    ap.add_argument("--limit", type=int, default=60, help="pairs per set, seeded subset; 0 = all")
    ap.add_argument("--judge", dest="judges", action="append", help="judge (repeatable); default both embedded")
    ap.add_argument(
        "--dtype",
        default="float32",
        choices=["float32", "bfloat16"],
        help="float32: judgments do not depend on the padded batch (bf16 on CPU: they do)",
    )
    ap.add_argument("--threads", type=int, default=1, help="torch threads (pinned for reproducibility)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the subset and of the bootstrap")
    ap.add_argument(
        "--out",
        type=Path,
        default=ROOT / "benchmarks/bias/pairwise_position",
        help="output stem: writes STEM.md and STEM.json",
    )
    ap.add_argument(
        "--records-dir",
        type=Path,
        default=None,
        help="also keep evaluate's full result records (distributions, prompts' texts) here",
    )
    args = ap.parse_args(argv)

    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import torch

    from localjudge import load_judge
    from localjudge.bias import BiasOptions
    from localjudge.metrics import builtin_metric

    torch.set_num_threads(args.threads)
    settings = BiasOptions(seed=args.seed)
    metric = builtin_metric("pairwise")
    data = {name: load_pairs(args.data_dir, name, args.limit or None, args.seed) for name in SETS}
    raw_dir = args.records_dir
    if raw_dir:
        raw_dir.mkdir(parents=True, exist_ok=True)
    load_avg = [os.getloadavg()[0]]
    start = time.perf_counter()
    out: dict = {
        "command": " ".join(["benchmarks/bias/pairwise_position.py", *(argv or sys.argv[1:])]),
        "limit_per_set": args.limit or None,
        "seed": args.seed,
        "dtype": args.dtype,
        "threads": args.threads,
        "set_sizes": {},
        "judges": {},
        "results": {},
    }
    for name in SETS:
        out["set_sizes"][name] = len(json.loads((args.data_dir / f"{name}.json").read_text(encoding="utf-8")))
    for judge_name in args.judges or EMBEDDED_JUDGES:
        t = time.perf_counter()
        judge = load_judge(judge_name, device="cpu", dtype=args.dtype)
        out["judges"][judge_name] = judge.info.model_dump() | {"load_s": time.perf_counter() - t}
        for name in SETS:
            records, results, speed = run_set(judge, name, data[name], metric, raw_dir)
            out["results"].setdefault(name, {})[judge_name] = summarize_set(records, results, speed, settings)
            s = out["results"][name][judge_name]
            print(
                f"{judge_name} {name}: {s['n_pairs']} pairs in {speed['seconds']:.0f}s, flip rate "
                f"{s['position']['flip_rate']['value']:.2f}",
                file=sys.stderr,
            )
        del judge
        gc.collect()
        load_avg.append(os.getloadavg()[0])
    out["wall_s"] = time.perf_counter() - start
    out["load_average"] = load_avg
    args.out.with_suffix(".json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(markdown(out), encoding="utf-8")
    print(args.out.with_suffix(".md").read_text(encoding="utf-8"))
    return 0


def _e(e: dict | None, pct: bool = False) -> str:
    if e is None or e.get("value") is None:
        return "–"
    k = 100 if pct else 1
    f = "{:.0f}%" if pct else "{:.2f}"
    ci = f" [{f.format(k * e['ci_low'])}, {f.format(k * e['ci_high'])}]" if e.get("ci_low") is not None else ""
    return f.format(k * e["value"]) + ci


def markdown(out: dict) -> str:
    """pairwise_position.md: command, set-up, one table per data set, throughput, caveats."""
    m = machine("python")
    limit = out["limit_per_set"]
    lines = [
        "# Pairwise position bias of the embedded judges",
        "",
        "Command (repository root):",
        "",
        "```",
        f".venv/bin/python {out['command']}".rstrip(),
        "```",
        "",
        f"- Machine: {m['cpu']}, {m['cores']} cores, torch threads {out['threads']}, dtype {out['dtype']}, "
        f"Python {m['python']}. Load average during the run: "
        + ", ".join(f"{x:.1f}" for x in out["load_average"])
        + " (shared machine).",
        f"- Wall time: {out['wall_s'] / 60:.1f} min for everything below (model loads included).",
        "- Pairs: "
        + ", ".join(f"{name} {limit or size} of {size}" for name, size in out["set_sizes"].items())
        + (f" (seeded random subset, seed {out['seed']}; `--limit 0` runs all)" if limit else "")
        + ".",
        "- Metric: built-in `pairwise` (A/B, no tie) through `evaluate`, both presentation orders. "
        'Accuracy is agreement with the human label; chance is 50%. "output_1 first" uses only the '
        "order in which the data set's output_1 is shown as A; \"combined\" averages both orders' "
        "probabilities. Flip rate: share of pairs whose judgment changes when the order is swapped. "
        "P(first wins): mean probability given to the answer shown first (0.5 = no position bias; "
        "p from a sign-flip test over pairs). Accuracies, flip rate and P(first wins) are over the scored "
        "pairs; a pair is unscored when the judge puts less than 0.1 of its probability on 'A'/'B' in "
        "either order. Intervals: 95% bootstrap over pairs.",
        "",
    ]
    for name, by_judge in out["results"].items():
        lines += [
            f"## {name}",
            "",
            "| judge | pairs | unscored | accuracy, output_1 first | accuracy, output_1 second | "
            "accuracy, combined | flip rate | P(first wins) | p | P(longer wins) |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for judge, s in by_judge.items():
            pos = s["position"]
            p = pos["first_position"].get("p_value")
            lines.append(
                f"| {judge} | {s['n_pairs']} | {s['unscored']} | {_e(pos['accuracy_a_first'], True)} | "
                f"{_e(pos['accuracy_a_second'], True)} | {_e(pos['accuracy_combined'], True)} | "
                f"{_e(pos['flip_rate'], True)} | {_e(pos['first_position'])} | "
                f"{'–' if p is None else f'{p:.3g}'} | {_e(s['prefers_longer'])} |"
            )
        lines.append("")
    lines += [
        "## Throughput",
        "",
        "| judge | set | prompts (both orders) | prompt tokens | seconds | pairs/s | prompt tokens/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, by_judge in out["results"].items():
        for judge, s in by_judge.items():
            sp = s["speed"]
            lines.append(
                f"| {judge} | {name} | {sp['prompts']} | {sp['prompt_tokens']} | {sp['seconds']:.0f} | "
                f"{sp['pairs_per_s']:.3f} | {sp['prompt_tokens_per_s']:.0f} |"
            )
    full_tokens = sum(
        s["speed"]["prompt_tokens"] / s["n_pairs"] * out["set_sizes"][name]
        for name, by_judge in out["results"].items()
        for s in by_judge.values()
    )
    rate = sum(s["speed"]["prompt_tokens"] for b in out["results"].values() for s in b.values()) / sum(
        s["speed"]["seconds"] for b in out["results"].values() for s in b.values()
    )
    truncated = sum(s["truncated"] for b in out["results"].values() for s in b.values())
    lines += [
        "",
        f"At the measured {rate:.0f} prompt tokens/s, the full {sum(out['set_sizes'].values())} pairs "
        f"with both judges (~{full_tokens / 1000:.0f}k prompt tokens) would take about "
        f"{full_tokens / rate / 60:.0f} min plus model loads on this machine"
        + (
            ", beyond the ~25 min budget: hence the subset. Full run: "
            "`.venv/bin/python -m benchmarks.bias.pairwise_position --limit 0`."
            if limit
            else "."
        ),
        f"- Truncated pairs: {truncated} (every pair fit the judges' contexts: 8k tokens SmolLM2, 32k Gemma 3).",
        "",
        "## Reading the numbers",
        "",
    ]
    for judge in out["judges"]:
        per_set = [(name, b[judge]) for name, b in out["results"].items() if judge in b]
        unscored = sum(s["unscored"] for _, s in per_set)
        total = sum(s["n_pairs"] for _, s in per_set)
        line = f"- {judge}: {unscored} of {total} pairs unscored"
        if unscored:
            line += " (less than 0.1 of its probability on 'A'/'B' in at least one order; skipped, never guessed)"
        for name, s in per_set:
            pos = s["position"]
            if pos["flip_rate"]["value"] is None:
                continue
            acc = pos["accuracy_combined"]["value"]
            line += (
                f"; {name}: judgment flips with the order in {100 * pos['flip_rate']['value']:.0f}% of "
                f"scored pairs, first position gets {pos['first_position']['value']:.2f}, combined accuracy "
                f"{100 * acc:.0f}%"
            )
        lines.append(line + ".")
    lines += [
        *(
            [
                "- bf16 on CPU: a prompt's judgment depends slightly on which other prompts share its padded batch "
                "(in the bias study, correctness scores of the same prompt moved by up to 0.08 points on 1–5 between "
                "batchings; fp32: ~1e-5). Pairs near 0.5 can change sides; flip rates and P(first wins) far from 0.5 "
                "do not. `--dtype float32` gives batch-invariant judgments at about half the speed."
            ]
            if out["dtype"] == "bfloat16"
            else []
        ),
        "- These are tiny judges (SmolLM2-135M instruct, Gemma 3 270M base), far from usable pairwise judges; "
        "the benchmark's point is the measurement (both orders, per-order accuracy, flip rate), which "
        "applies unchanged to registry judges on a GPU (`--judge NAME`).",
        "- Judgments per pair and order: the `pairs` lists in the JSON (probabilities of output_1 in each "
        "order, valid mass, why a pair is unscored); `--records-dir DIR` keeps evaluate's full records.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
