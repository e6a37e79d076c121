"""How many labels a tune needs: SummEval agreement on held-out articles against training cases.

The dev articles split in two halves as in `summeval_halves.py` (alternate articles). The judge is
tuned on the first k articles of the second half (k: about 50, 100, 200 and 400 cases, whole
articles of 16 summaries; 20% of them held out for early stopping, as in every tune) and every
adapter is read on the same held-out first half, beside the untuned judge there. Per-article
Spearman ρ of the G-Eval expected score against the expert mean, averaged over the articles.

    python -m benchmarks.quality.tune.learning_curve --judge qwen2.5-coder-0.5b --dim consistency
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np

from benchmarks.lib import tuning
from benchmarks.lib.common import host_load, load_summeval, machine
from benchmarks.lib.summeval import agreement
from benchmarks.lib.tuning import alternate_groups, cell, reader

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[2].parent / "shared" / "data" / "summeval_dev.json"
SIZES = (50, 100, 200, 400)


def first_articles(cases, n_cases: int) -> list:
    """The cases of the fewest leading articles that hold at least `n_cases` cases (all, if fewer)."""
    docs = list(dict.fromkeys(c.extra["doc_id"] for c in cases))
    kept: set[str] = set()
    for doc in docs:
        if sum(c.extra["doc_id"] in kept for c in cases) >= n_cases:
            break
        kept.add(doc)
    return [c for c in cases if c.extra["doc_id"] in kept]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judge", default="qwen2.5-coder-0.5b")
    ap.add_argument("--dim", default="consistency")
    ap.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    ap.add_argument("--loss", default="ce+rank")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--patience", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/localjudge-tune-bench"))
    args = ap.parse_args()
    import torch

    from localjudge.metrics import builtin_metric
    from localjudge.tune import TuneOptions

    torch.set_num_threads(2)
    load = os.getloadavg()
    held, pool = alternate_groups(load_summeval(DATA), lambda c: c.extra["doc_id"])
    settings = TuneOptions(loss=args.loss, layers=args.layers, epochs=args.epochs, patience=args.patience)
    judge, split = reader(args.judge, args.layers)
    metric = builtin_metric(args.dim)
    features = args.work / f"{args.judge}-{args.dim}-L{args.layers}-features"
    label = (f"human_{args.dim}", (1, 5), "doc_id")
    human = [c.extra[f"human_{args.dim}"] for c in held]
    docs = [c.extra["doc_id"] for c in held]

    def figures(folder: Path | None) -> dict:
        data, dists, mass = tuning.read(judge, split, metric, held, label, features, settings, folder)
        row = agreement(list(data.case_scores(dists)), human, docs)
        return {**row, "valid_mass": float(np.mean(mass))}

    results = {
        "machine": machine("torch_threads", "torch"),
        "judge": args.judge,
        "dim": args.dim,
        "settings": settings.model_dump(),
        "held_out": {"articles": len(set(docs)), "cases": len(held)},
        "untuned": figures(None),
        "sizes": [],
    }
    for size in args.sizes:
        train = first_articles(pool, size)
        out = args.work / f"{args.judge}-{args.dim}-curve{size}"
        job = {
            "judge": args.judge, "human": f"human_{args.dim}", "out": out, "group": "doc_id", "human_scale": (1, 5),
            "features": features,
        }  # fmt: skip
        n_docs = len({c.extra["doc_id"] for c in train})
        run, ok = tuning.tune_half(
            job, [metric], train, settings, 1, f"SummEval dev, {n_docs} articles of half 1",
            f"SummEval dev half 0 ({len(held)} cases)",
        )  # fmt: skip
        row = {"size": size, "cases": len(train), "articles": n_docs, "run": run}
        row["tuned"] = figures(out) if ok else None
        results["sizes"].append(row)
        print(size, json.dumps({k: v for k, v in row.items() if k != "run"}), flush=True)
        results["host"] = host_load(load)  # written after every size: a stopped run keeps what it measured
        stem = f"learning_curve_{args.judge}-{args.dim}"
        (HERE / f"{stem}.json").write_text(json.dumps(results, indent=1) + "\n")
        (HERE / f"{stem}.md").write_text(report(results, args))


def report(results: dict, args) -> str:
    m = results["machine"]
    u, h = results["untuned"], results["held_out"]
    lines = [
        f"# Learning curve: {results['judge']} tuned on {results['dim']}, SummEval dev",
        "",
        f"Made by `python -m benchmarks.quality.tune.learning_curve --judge {args.judge} --dim {args.dim} "
        f"--sizes {' '.join(map(str, args.sizes))} --loss {args.loss} --epochs {args.epochs}` on {m['cpu']} "
        f"({m['cores']} cores, torch {m['torch']}, {m['torch_threads']} threads); {results.get('host', '')}.",
        "",
        f"Every adapter is read on the same {h['articles']} held-out articles ({h['cases']} summaries, the first "
        "half: alternate articles), none of which any adapter saw; training cases are whole articles of the second "
        "half, 20% of them held out for early stopping. ρ: Spearman per article against the expert mean, averaged "
        f"(G-Eval expected score, fp32). Untuned: **{cell(u['spearman'])}** ({u['articles_used']} articles), valid "
        f"mass {u['valid_mass']:.3f}.",
        "",
        "| training cases (articles) | tuned ρ | Δ vs untuned | valid mass | best epoch | tune time (s) | tokens/s | "
        "peak GiB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in results["sizes"]:
        run, t = row["run"], row["tuned"]
        if t is None:
            lines.append(
                f"| {row['cases']} ({row['articles']}) | kept no adapter | – | – | – | {run['seconds']} | – | – |"
            )
            continue
        lines.append(
            f"| {row['cases']} ({row['articles']}) | {cell(t['spearman'])} | {t['spearman'] - u['spearman']:+.3f} | "
            f"{t['valid_mass']:.3f} | {run['best_epoch']} | {run['seconds']} | {run['tokens_per_second']} | "
            f"{run['peak_memory_gib']} |"
        )
    lines += ["", "Validation history (epoch: agreement, valid mass, training loss):", ""]
    for row in results["sizes"]:
        run = row["run"]
        hist = "; ".join(
            f"{x['epoch']}: {cell(x['agreement'])}, {x['valid_mass']:.3f}, {cell(x['train_loss'])}"
            for x in run.get("history", [])
        )
        lines.append(f"- {row['cases']} cases: {run.get('failed') or hist}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
