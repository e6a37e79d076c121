"""Tuned judges on human-labelled pairs, every figure on pairs the adapter never saw.

Each set (`shared/data/mtbench_human_pairs.json`, `llmbar_natural.json`) splits in two halves by
prompt (alternate prompts in file order: an MT-Bench question's pairs stay in one half). A judge
is tuned with the builtin `pairwise` metric on one half (both orders of every pair, targets
swapped with the order; 20% of the half's prompts held out for early stopping) and read on the
other, then the halves swap, so every pair is read by an adapter that never saw it. Accuracy:
the share of pairs where P(output 1 better), both orders averaged, is on the human's side of 0.5.
Beside it, the untuned judge through the same reading, the longer output, and how often the
preferred output changes with the order shown (`flips`: a judge that follows position).

    python -m benchmarks.quality.tune.pairwise_halves --judge qwen2.5-coder-0.5b --sets llmbar_natural mtbench
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np

from benchmarks.lib import tuning
from benchmarks.lib.common import host_load, load_pairs, machine
from benchmarks.lib.tuning import alternate_groups, cell, reader

HERE = Path(__file__).resolve().parent
SHARED_DATA = HERE.parents[2].parent / "shared" / "data"
SETS = {"mtbench": "mtbench_human_pairs.json", "llmbar_natural": "llmbar_natural.json"}
LABEL = ("label", None, None)  # human field, its scale, group field (None: the prompt)


def pair_cases(name: str):
    return load_pairs(SHARED_DATA / SETS[name], name, None)


def readings(data, dists: np.ndarray, mass: np.ndarray) -> dict[str, dict]:
    """Per case id: P(output 1 better) both orders averaged, whether the order flips the choice, mean valid mass.

    `dists` (E, V) are the examples' distributions over (A, B); a case's first example shows output 1
    first, its second shows it second.
    """
    by_case: dict[int, list[int]] = {}
    for e, ex in enumerate(data.examples):
        by_case.setdefault(ex.case, []).append(e)
    scores = data.case_scores(dists)
    out = {}
    for case, (first, second) in by_case.items():
        p1_first, p1_second = dists[first][0], dists[second][1]  # P(output 1 better) in each order
        out[data.case_ids[case]] = {
            "p": float(scores[case]),
            "flip": bool((p1_first > 0.5) != (p1_second > 0.5)),
            "mass": float((mass[first] + mass[second]) / 2),
        }
    return out


def longer(case) -> float:
    """The length baseline's P(output 1 better): 1 when output 1 is longer, 0.5 on a tie."""
    a, b = len(case.extra["output_1"]), len(case.extra["output_2"])
    return 0.5 if a == b else float(a > b)


def accuracy(prefs: list[float], labels: list[int]) -> float | None:
    """Share of pairs whose preference (vs 0.5) is the human's; an exact 0.5 counts half."""
    hits = [0.5 if p == 0.5 else float((p > 0.5) == (y == 1)) for p, y in zip(prefs, labels)]
    return float(np.mean(hits)) if hits else None


def rows(cases, read: dict[str, dict], runs: list[dict]) -> dict:
    """One set's figures: untuned on every pair and on the pairs read tuned, tuned, longer on those pairs."""
    tuned = [c for c in cases if read["tuned"].get(c.id) is not None]

    def figures(which: str, chosen) -> dict:
        r = [read[which][c.id] for c in chosen]
        return {
            "accuracy": accuracy([x["p"] for x in r], [c.extra["label"] for c in chosen]),
            "pairs": len(r),
            "flips": float(np.mean([x["flip"] for x in r])) if r else None,
            "valid_mass": float(np.mean([x["mass"] for x in r])) if r else None,
        }

    return {
        "runs": runs,
        "untuned": figures("untuned", cases),
        "untuned_same_pairs": figures("untuned", tuned),
        "tuned": figures("tuned", tuned),
        "longer_same_pairs": {
            "accuracy": accuracy([longer(c) for c in tuned], [c.extra["label"] for c in tuned]),
            "pairs": len(tuned),
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judge", default="qwen2.5-coder-0.5b")
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    ap.add_argument("--loss", default="ce")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--learning-rate", type=float, default=2e-4)
    ap.add_argument("--patience", type=int, default=2)
    ap.add_argument("--work", type=Path, default=Path("/tmp/localjudge-tune-bench"))
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    import torch

    from localjudge.metrics import builtin_metric
    from localjudge.tune import TuneOptions

    torch.set_num_threads(2)
    load = os.getloadavg()
    settings = TuneOptions(
        loss=args.loss, layers=args.layers, epochs=args.epochs, learning_rate=args.learning_rate, patience=args.patience
    )
    judge, split = reader(args.judge, args.layers)
    metric = builtin_metric("pairwise")
    results = {"machine": machine("torch_threads", "torch"), "judge": args.judge, "settings": settings.model_dump()}
    results["sets"] = {}
    for name in args.sets:
        cases = pair_cases(name)
        features = args.work / f"{args.judge}-{name}-L{args.layers}-features"
        read: dict[str, dict] = {"untuned": {}, "tuned": {}}
        runs = []
        parts = alternate_groups(cases, lambda c: c.input)
        for h, (train, held) in enumerate([(parts[0], parts[1]), (parts[1], parts[0])]):
            out = args.work / f"{args.judge}-{name}{args.tag}-half{h}"
            job = {"judge": args.judge, "human": "label", "out": out, "features": features}
            run, ok = tuning.tune_half(
                job, [metric], train, settings, h, f"{name} half {h}", f"{name} half {1 - h} ({len(held)} pairs)"
            )
            runs.append(run)
            read["untuned"].update(readings(*tuning.read(judge, split, metric, held, LABEL, features, settings, None)))
            if ok:
                read["tuned"].update(readings(*tuning.read(judge, split, metric, held, LABEL, features, settings, out)))
        results["sets"][name] = rows(cases, read, runs)
        print(name, json.dumps({k: v for k, v in results["sets"][name].items() if k != "runs"}), flush=True)
    results["host"] = host_load(load)
    stem = f"pairwise_halves_{args.judge}{args.tag}"
    (HERE / f"{stem}.json").write_text(json.dumps(results, indent=1) + "\n")
    (HERE / f"{stem}.md").write_text(report(results, args))


def report(results: dict, args) -> str:
    m = results["machine"]
    lines = [
        f"# Tuned {results['judge']} on human-labelled pairs, held-out halves",
        "",
        f"Made by `python -m benchmarks.quality.tune.pairwise_halves --judge {args.judge} --sets {' '.join(args.sets)} "
        f"--loss {args.loss} --epochs {args.epochs} --layers {args.layers}` on {m['cpu']} ({m['cores']} cores, "
        f"torch {m['torch']}, {m['torch_threads']} threads); {results.get('host', 'host load not recorded')}.",
        "",
        "Each set splits in two halves by prompt (alternate prompts); the judge is tuned with the builtin `pairwise` "
        "metric on one half (both orders of each pair, 20% of its prompts held out for early stopping) and read on "
        "the other, then the halves swap. Accuracy: P(output 1 better), both orders averaged, on the human's side "
        "of 0.5 (fp32, the trainer's reading). Flips: share of pairs whose preferred output changes with the order "
        "shown.",
        "",
        "| set | untuned, all pairs | untuned, pairs read tuned | tuned | longer output, same pairs | flips untuned → "
        "tuned | valid mass untuned → tuned | best epochs | tune time (s) | tokens/s | peak GiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, row in results["sets"].items():
        runs = row["runs"]
        ok = [r for r in runs if not r.get("failed")]
        u, s, t = row["untuned"], row["untuned_same_pairs"], row["tuned"]
        fails = len(runs) - len(ok)
        lines.append(
            f"| {name} | {cell(u['accuracy'])} ({u['pairs']}) | {cell(s['accuracy'])} ({s['pairs']}) | "
            f"{cell(t['accuracy'])} ({t['pairs']}){f' ({fails} half failed)' if fails else ''} | "
            f"{cell(row['longer_same_pairs']['accuracy'])} | {cell(s['flips'])} → {cell(t['flips'])} | "
            f"{cell(s['valid_mass'])} → {cell(t['valid_mass'])} | {', '.join(str(r['best_epoch']) for r in ok)} | "
            f"{', '.join(str(r['seconds']) for r in runs)} | {', '.join(str(r['tokens_per_second']) for r in ok)} | "
            f"{', '.join(str(r['peak_memory_gib']) for r in ok)} |"
        )
    lines += ["", "Validation history per half (epoch: accuracy, valid mass, training loss):", ""]
    for name, row in results["sets"].items():
        for r in row["runs"]:
            hist = "; ".join(
                f"{h['epoch']}: {cell(h['agreement'])}, {h['valid_mass']:.3f}, {cell(h['train_loss'])}"
                for h in r.get("history", [])
            )
            lines.append(f"- {name}, half {r['half']}: {r.get('failed') or hist}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
