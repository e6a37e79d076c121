"""Tuned judges on SummEval dev, every figure on articles the adapter never saw.

The dev articles split in two halves (alternate articles in file order). A judge is tuned on one
half (its own grouped validation split inside it for early stopping) and read on the other, then
the halves swap; every article is thus read by an adapter that never saw it, and the per-article
Spearman ρ is averaged over all of them, as G-Eval's Table 1 does. The untuned judge is read on
the same articles through the same reading. Readings here use the trainer's packed reading
(`localjudge.tune.trainer.read_packs`, fp32); `--engine-check N` reads N held-out articles
through `evaluate` with the tuned judge loaded by folder and states the largest difference.

    python -m benchmarks.quality.tune.summeval_halves --judge qwen2.5-coder-0.5b --dims consistency

`--joint` tunes one adapter per half on every dimension named (as the shipped `...-summeval` judge
is tuned: `localjudge tune` with several `--metric`), then reads each dimension with it. Features
(the hidden states entering the tuned layers) are cached under `--work` by content, so every run
of one judge and layer count shares them.
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


def halves(cases):
    return alternate_groups(cases, lambda c: c.extra["doc_id"])


def read(judge, split, metric, cases, dim, features: Path, settings, folder: Path | None):
    """Expected scores and valid masses of `cases`, by the base judge or with the adapter in `folder` merged."""
    data, dists, mass = tuning.read(
        judge, split, metric, cases, (f"human_{dim}", (1, 5), "doc_id"), features, settings, folder
    )
    return data.case_scores(dists), mass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judge", default="qwen2.5-coder-0.5b")
    ap.add_argument("--dims", nargs="+", default=["coherence", "consistency", "fluency", "relevance"])
    ap.add_argument("--loss", default="ce+rank")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--learning-rate", type=float, default=2e-4)
    ap.add_argument("--patience", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/localjudge-tune-bench"))
    ap.add_argument("--tag", default="")
    ap.add_argument("--joint", action="store_true", help="One adapter per half over every dimension named.")
    ap.add_argument("--engine-check", type=int, default=1, help="Held-out articles read again through `evaluate`.")
    args = ap.parse_args()
    import torch

    from localjudge.metrics import builtin_metric
    from localjudge.tune import TuneOptions

    torch.set_num_threads(2)
    load = os.getloadavg()
    cases = load_summeval(DATA)
    parts = halves(cases)
    settings = TuneOptions(
        loss=args.loss, layers=args.layers, epochs=args.epochs, learning_rate=args.learning_rate, patience=args.patience
    )
    judge, split = reader(args.judge, args.layers)
    results = {
        "machine": machine("torch_threads", "torch"),
        "judge": args.judge,
        "settings": settings.model_dump(),
        "dims": {},
    }
    metrics = {dim: builtin_metric(dim) for dim in args.dims}
    if args.joint:
        features = args.work / f"{args.judge}-L{args.layers}-features"
        scores = {dim: {"untuned": {}, "tuned": {}} for dim in args.dims}
        masses = {dim: {"untuned": {}, "tuned": {}} for dim in args.dims}
        runs = []
        for h, (train, held) in enumerate([(parts[0], parts[1]), (parts[1], parts[0])]):
            out = args.work / f"{args.judge}-summeval{args.tag}-half{h}"
            run, ok = tune_half(args, list(metrics.values()), "human_{metric}", train, held, h, out, features, settings)
            runs.append(run)
            folder = out if ok else None
            for dim, metric in metrics.items():
                read_half(judge, split, metric, held, dim, features, settings, folder, scores[dim], masses[dim])
        for dim in args.dims:
            row = rows(cases, dim, scores[dim], masses[dim], runs)
            if args.engine_check and runs[0].get("failed") is None:
                row["engine_check"] = engine_check(
                    args.work / f"{args.judge}-summeval{args.tag}-half0", metrics[dim], parts[1], scores[dim]["tuned"],
                    args.engine_check,
                )  # fmt: skip
            results["dims"][dim] = row
            print(dim, json.dumps({k: row[k] for k in ("untuned", "tuned")}), flush=True)
    for dim in [] if args.joint else args.dims:
        metric = metrics[dim]
        features = args.work / f"{args.judge}-{dim}-L{args.layers}-features"
        scores = {"untuned": {}, "tuned": {}}
        masses = {"untuned": {}, "tuned": {}}
        runs = []
        for h, (train, held) in enumerate([(parts[0], parts[1]), (parts[1], parts[0])]):
            out = args.work / f"{args.judge}-{dim}{args.tag}-half{h}"
            run, ok = tune_half(args, [metric], f"human_{dim}", train, held, h, out, features, settings)
            runs.append(run)
            read_half(judge, split, metric, held, dim, features, settings, out if ok else None, scores, masses)
        row = rows(cases, dim, scores, masses, runs)
        if args.engine_check and runs[0].get("failed") is None:
            row["engine_check"] = engine_check(
                args.work / f"{args.judge}-{dim}{args.tag}-half0", metric, parts[1], scores["tuned"], args.engine_check
            )
        results["dims"][dim] = row
        print(dim, json.dumps({k: row[k] for k in ("untuned", "tuned")}), flush=True)
    results["host"] = host_load(load)
    name = f"summeval_halves_{args.judge}{'-joint' if args.joint else ''}{args.tag}"
    (HERE / f"{name}.json").write_text(json.dumps(results, indent=1) + "\n")
    (HERE / f"{name}.md").write_text(report(results, args))


def tune_half(args, metrics, human, train, held, h, out: Path, features: Path, settings) -> tuple[dict, bool]:
    """Tunes on `train` (resuming what is in `out`); the run's figures, and whether it kept an adapter."""
    job = {
        "judge": args.judge,
        "human": human,
        "out": out,
        "group": "doc_id",
        "human_scale": (1, 5),
        "features": features,
    }
    return tuning.tune_half(
        job, metrics, train, settings, h, f"SummEval dev half {h}", f"SummEval dev half {1 - h} ({len(held)} cases)"
    )


def read_half(judge, split, metric, held, dim, features, settings, folder, scores: dict, masses: dict) -> None:
    """Fills `scores`/`masses` ({"untuned": {...}, "tuned": {...}}) for `held`; tuned ones None without `folder`."""
    for which, f in (("untuned", None), ("tuned", folder)):
        if which == "tuned" and folder is None:
            for c in held:
                scores[which][c.id], masses[which][c.id] = None, float("nan")
            continue
        s, m = read(judge, split, metric, held, dim, features, settings, f)
        for c, v, w in zip(held, s, m):
            scores[which][c.id], masses[which][c.id] = float(v), float(w)


def rows(cases, dim: str, scores: dict, masses: dict, runs: list[dict]) -> dict:
    """One dimension's agreement, untuned and tuned, over every article, and untuned on the articles read tuned."""
    human = [c.extra[f"human_{dim}"] for c in cases]
    docs = [c.extra["doc_id"] for c in cases]
    row: dict = {"runs": runs}
    for which in ("untuned", "tuned"):
        row[which] = agreement([scores[which][c.id] for c in cases], human, docs)
        row[which]["valid_mass"] = float(np.nanmean([masses[which][c.id] for c in cases]))
    was_read = [scores["tuned"][c.id] is not None for c in cases]
    row["untuned_same_articles"] = agreement(
        [scores["untuned"][c.id] if r else None for c, r in zip(cases, was_read)], human, docs
    )
    return row


def engine_check(folder: Path, metric, held, trainer_scores: dict, articles: int) -> dict:
    """The tuned judge loaded by folder and read by `evaluate` (the batch-invariant engine) on held-out articles."""
    from localjudge.judges.loading import load_judge
    from localjudge.runs.evaluate import evaluate

    docs = list(dict.fromkeys(c.extra["doc_id"] for c in held))[:articles]
    cases = [c for c in held if c.extra["doc_id"] in docs]
    judge = load_judge(str(folder), progress=False)
    records = evaluate(cases, [metric], judge, progress=False).records
    diffs = [abs(r.raw_score - trainer_scores[r.case_id]) for r in records if r.raw_score is not None]
    return {"cases": len(cases), "bitwise_engine": judge.info.bitwise, "max_abs_diff_expected_score": max(diffs)}


def per_metric(h: dict) -> str:
    """A joint tune's validation agreement per dimension, in brackets after the mean."""
    each = h.get("per_metric") or {}
    return " [" + ", ".join(f"{k[:4]} {cell(v)}" for k, v in each.items()) + "]" if len(each) > 1 else ""


def report(results: dict, args) -> str:
    m = results["machine"]
    lines = [
        f"# Tuned {results['judge']} on SummEval dev, held-out halves",
        "",
        f"Made by `python -m benchmarks.quality.tune.summeval_halves --judge {args.judge} --dims {' '.join(args.dims)} "
        f"--loss {args.loss} --epochs {args.epochs} --layers {args.layers}{' --joint' if args.joint else ''}` "
        f"on {m['cpu']} ({m['cores']} cores, "
        f"torch {m['torch']}, {m['torch_threads']} threads); {results.get('host', 'host load not recorded')}.",
        "",
        "Each half of the 50 dev articles (alternate articles) is tuned on, with 20% of its articles held out for "
        "early stopping, and read on the other half; ρ is Spearman per article against the expert mean, averaged "
        "over every article, each read by the adapter that never saw it (G-Eval expected score, fp32). "
        + (
            "One adapter per half is tuned on every dimension at once (validation agreement: their mean), "
            "as the shipped `...-summeval` judge is; the rows share its runs."
            if args.joint
            else "Each dimension is tuned alone."
        ),
        "",
        "| dimension | untuned ρ, all articles | untuned ρ, articles read tuned | tuned ρ | untuned valid mass | "
        "tuned valid mass | best epochs | tune time (s) | tokens/s | peak GiB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for dim, row in results["dims"].items():
        runs = row["runs"]
        fails = [r for r in runs if r.get("failed")]
        ok = [r for r in runs if not r.get("failed")]
        lines.append(
            f"| {dim} | {cell(row['untuned']['spearman'])} ({row['untuned']['articles_used']}) | "
            f"{cell(row['untuned_same_articles']['spearman'])} ({row['untuned_same_articles']['articles_used']}) | "
            f"{cell(row['tuned']['spearman'])} ({row['tuned']['articles_used']})"
            f"{' (' + str(len(fails)) + ' half failed)' if fails else ''} | {row['untuned']['valid_mass']:.3f} | "
            f"{row['tuned']['valid_mass']:.3f} | {', '.join(str(r['best_epoch']) for r in ok)} | "
            f"{', '.join(str(r['seconds']) for r in runs)} | {', '.join(str(r['tokens_per_second']) for r in ok)} | "
            f"{', '.join(str(r['peak_memory_gib']) for r in ok)} |"
        )
    lines += ["", "Validation history per half (epoch: agreement, valid mass, training loss):", ""]
    for dim, row in results["dims"].items():
        for r in row["runs"] if not args.joint or dim == next(iter(results["dims"])) else []:
            hist = "; ".join(
                f"{h['epoch']}: {cell(h['agreement'])}{per_metric(h)}, {h['valid_mass']:.3f}, {cell(h['train_loss'])}"
                for h in r.get("history", [])
            )
            lines.append(f"- {'all dimensions' if args.joint else dim}, half {r['half']}: {r.get('failed') or hist}")
        if "engine_check" in row:
            e = row["engine_check"]
            lines.append(
                f"- {dim}: the tuned judge loaded by folder and read by `evaluate` on {e['cases']} held-out cases "
                f"(bitwise engine: {e['bitwise_engine']}) differs from the trainer's reading by at most "
                f"{e['max_abs_diff_expected_score']:.2e} in expected score."
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
