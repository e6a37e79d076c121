"""Tuned entailment judges on SummEdits, every figure on a domain the adapter never saw.

SummEdits' five dev domains (`shared/data/summedits/`), the first `--docs` documents of each in
file order (a stated subset: a full fold is hours on 2 cores). For each domain in turn, a judge
is tuned with the builtin `consistency_entailment` metric (P(yes) that every claim of the summary
is supported) on the other four domains (grouped by document; 20% of their documents held out for
early stopping), then read on the fifth. Balanced accuracy on the held-out domain:

- untuned, fitted: P(yes) against a threshold fitted on the other four domains' untuned readings
  (as `benchmarks/quality/faithfulness/summedits.py` fits its scorers);
- untuned and tuned at 0.5: the judge's own verdict, P(yes) ≥ 0.5, nothing fitted (the tuned
  judge was taught the four domains' labels, so its 0.5 is where they put it).

Beside them, ROC AUC on the held-out domain and the mean valid mass (P(yes) + P(no) before
normalising). Readings are the trainer's packed reading (fp32) over features cached under `--work`.

    python -m benchmarks.quality.tune.summedits_lodo --judge qwen2.5-coder-0.5b --docs 3
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from benchmarks.lib import tuning
from benchmarks.lib.common import host_load, kept_section, machine
from benchmarks.lib.tuning import cell, reader

HERE = Path(__file__).resolve().parent
SHARED_DATA = HERE.parents[2].parent / "shared" / "data" / "summedits"
DOMAINS = ("ectsum", "qmsumm", "sales_call", "sales_email", "scitldr")
LABEL = ("label", None, "doc_id")  # human field, its scale, group field


def load_cases(docs: int | None):
    """The summaries of the first `docs` documents of each domain as cases (document as input)."""
    from localjudge.io.cases import TestCase

    out = []
    for domain in DOMAINS:
        rows = json.loads((SHARED_DATA / f"summedits_{domain}.json").read_text(encoding="utf-8"))
        ids: dict[str, str] = {}
        for r in rows:
            doc_id = ids.setdefault(r["doc"], f"{domain}/{len(ids)}")
            if docs is not None and int(doc_id.split("/")[1]) >= docs:
                continue
            extra = {"label": int(r["label"]), "domain": domain, "doc_id": doc_id}
            out.append(TestCase(id=r["id"], input=r["doc"], actual_output=r["summary"], extra=extra))
    return out


def figures(cases, p: dict[str, float], mass: dict[str, float], threshold: float) -> dict:
    """AUC, balanced accuracy at `threshold`, mean valid mass and size of `cases`' readings `p`."""
    from localjudge.stats.classification import balanced_accuracy, roc_auc

    x = np.array([p[c.id] for c in cases])
    y = np.array([c.extra["label"] for c in cases])
    return {
        "auc": roc_auc(x, y),
        "balanced_accuracy": balanced_accuracy(x >= threshold, y),
        "threshold": float(threshold),
        "valid_mass": float(np.mean([mass[c.id] for c in cases])),
        "cases": len(cases),
        "consistent": float(y.mean()),
    }


def fitted(cases, p: dict[str, float]) -> float:
    """The threshold on `p` that maximises balanced accuracy over `cases`."""
    from localjudge.stats.classification import best_threshold

    return best_threshold(np.array([p[c.id] for c in cases]), np.array([c.extra["label"] for c in cases]))


def read(judge, split, metric, cases, features, settings, folder) -> tuple[dict, dict]:
    """P(yes) and valid mass per case id, by the base judge or with the adapter in `folder` merged."""
    data, dists, mass = tuning.read(judge, split, metric, cases, LABEL, features, settings, folder)
    scores = data.case_scores(dists)
    return (
        {c.id: float(s) for c, s in zip(cases, scores)},
        {c.id: float(m) for c, m in zip(cases, mass)},
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judge", default="qwen2.5-coder-0.5b")
    ap.add_argument("--docs", type=int, default=3, help="First documents of each domain (file order).")
    ap.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=DOMAINS, help="Domains held out in turn.")
    ap.add_argument("--loss", default="ce+rank")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--learning-rate", type=float, default=2e-4)
    ap.add_argument("--patience", type=int, default=1)
    ap.add_argument("--work", type=Path, default=Path("/tmp/localjudge-tune-bench"))
    ap.add_argument("--tag", default="", help="Suffix of the results' and adapters' names (give it as --tag=-x).")
    ap.add_argument("--report", action="store_true", help="Rewrite the .md from the results .json; loads nothing.")
    args = ap.parse_args()
    stem = f"summedits_lodo_{args.judge}{args.tag}"
    if args.report:
        md = HERE / f"{stem}.md"
        md.write_text(report(json.loads((HERE / f"{stem}.json").read_text())) + kept_section(md))
        return
    import torch

    from localjudge.metrics import builtin_metric
    from localjudge.tune import TuneOptions

    torch.set_num_threads(2)
    load = os.getloadavg()
    cases = load_cases(args.docs)
    settings = TuneOptions(
        loss=args.loss, layers=args.layers, epochs=args.epochs, learning_rate=args.learning_rate, patience=args.patience
    )
    judge, split = reader(args.judge, args.layers)
    metric = builtin_metric("consistency_entailment")
    features = args.work / f"{args.judge}-summedits-L{args.layers}-features"
    untuned = args.work / f"{args.judge}-summedits-untuned-docs{args.docs}.json"  # a rerun reads it again in seconds
    if untuned.is_file():
        p0, m0 = json.loads(untuned.read_text())
    else:
        p0, m0 = read(judge, split, metric, cases, features, settings, None)
        untuned.write_text(json.dumps([p0, m0]))
    results: dict = {
        "machine": machine("torch_threads", "torch"),
        "judge": args.judge,
        "docs": args.docs,
        "command": "python -m benchmarks.quality.tune.summedits_lodo " + " ".join(sys.argv[1:]),
        "settings": settings.model_dump(),
        "folds": {},
    }
    for domain in args.domains:
        train = [c for c in cases if c.extra["domain"] != domain]
        held = [c for c in cases if c.extra["domain"] == domain]
        out = args.work / f"{args.judge}-summedits{args.tag}-no-{domain}"
        job = {"judge": args.judge, "human": "label", "group": "doc_id", "out": out, "features": features}
        never = f"SummEdits {domain} (all of it) and the other domains' documents after the first {args.docs}"
        run, ok = tuning.tune_half(
            job, [metric], train, settings, 0, f"SummEdits dev, first {args.docs} documents of 4 domains", never
        )
        fold = {
            "run": run,
            "untuned": figures(held, p0, m0, fitted(train, p0)),
            "untuned_half": figures(held, p0, m0, 0.5),
        }
        if ok:
            p1, m1 = read(judge, split, metric, held, features, settings, out)
            fold["tuned_half"] = figures(held, p1, m1, 0.5)
        results["folds"][domain] = fold
        print(domain, json.dumps({k: v for k, v in fold.items() if k != "run"}), flush=True)
        results["host"] = host_load(load)
        (HERE / f"{stem}.json").write_text(json.dumps(results, indent=1) + "\n")
        md = HERE / f"{stem}.md"
        md.write_text(report(results) + kept_section(md))


def mean(folds: dict, which: str, key: str) -> float | None:
    vals = [f[which][key] for f in folds.values() if which in f and f[which][key] is not None]
    return float(np.mean(vals)) if vals else None


def report(results: dict) -> str:
    m, s, docs = results["machine"], results["settings"], results["docs"]
    folds = results["folds"]
    lines = [
        f"# Tuned {results['judge']} on SummEdits, leave one domain out",
        "",
        f"Made by `{results.get('command', 'not recorded')}` (loss {s['loss']}, at most {s['epochs']} epochs, "
        f"patience {s['patience']}, "
        f"{s['layers']} layers, learning rate {s['learning_rate']}) on {m['cpu']} ({m['cores']} cores, "
        f"torch {m['torch']}, {m['torch_threads']} threads); "
        f"{results.get('host', 'host load not recorded')}.",
        "",
        f"The first {docs} documents of each of SummEdits' five dev domains; for each domain, the judge is "
        "tuned with `consistency_entailment` on the other four (20% of their documents held out for early "
        "stopping) and read on it. Balanced accuracy (BA): untuned with the threshold fitted on the other four "
        "domains' untuned readings (fitted), and both at P(yes) ≥ 0.5, the judge's own verdict. AUC: ROC AUC "
        "of P(yes) on the held-out domain. Fp32, the trainer's packed reading.",
        "",
        "| held-out domain | summaries (consistent) | untuned AUC | tuned AUC | untuned BA, fitted | tuned BA at 0.5 | "
        "untuned BA at 0.5 | valid mass untuned → tuned | best epoch | tune time (s) | tokens/s | peak GiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for domain, f in folds.items():
        u, r = f["untuned"], f["run"]
        t, u5 = f.get("tuned_half"), f["untuned_half"]
        lines.append(
            f"| {domain} | {u['cases']} ({u['consistent']:.2f}) | {cell(u['auc'])} | {cell(t and t['auc'])} | "
            f"{cell(u['balanced_accuracy'])} | {cell(t and t['balanced_accuracy'])} | "
            f"{cell(u5['balanced_accuracy'])} | {u['valid_mass']:.3f} → {cell(t and t['valid_mass'])} | "
            f"{r.get('best_epoch', 'none kept')} | {r['seconds']} | {r.get('tokens_per_second', 'n/a')} | "
            f"{r.get('peak_memory_gib', 'n/a')} |"
        )
    lines.append(
        f"| **mean** | | {cell(mean(folds, 'untuned', 'auc'))} | {cell(mean(folds, 'tuned_half', 'auc'))} | "
        f"**{cell(mean(folds, 'untuned', 'balanced_accuracy'))}** | "
        f"**{cell(mean(folds, 'tuned_half', 'balanced_accuracy'))}** | "
        f"{cell(mean(folds, 'untuned_half', 'balanced_accuracy'))} | | | | | |"
    )
    lines += ["", "Validation history per fold (epoch: AUC, valid mass, training loss):", ""]
    for domain, f in folds.items():
        r = f["run"]
        hist = "; ".join(
            f"{h['epoch']}: {cell(h['agreement'])}, {h['valid_mass']:.3f}, {cell(h['train_loss'])}"
            for h in r.get("history", [])
        )
        lines.append(f"- without {domain}: {r.get('failed') or hist}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
