"""Tunes the shipped `<judge>-summeval` judge: one adapter on SummEval's four dimensions, all dev articles.

The recipe is the held-out study's (`summeval_halves.py --joint`, whose figures are the shipped
judge's: every article there is read by an adapter that never saw it); here the adapter trains on
every dev article (20% of them held out for early stopping, as in every tune) and is copied into the
package, `localjudge/tuned/<name>/` (adapter.safetensors, tune.json), which `models.yaml` registers
with the PyPI judge as its base. Resumable: a killed run continues where it stopped (`--work`).

    python -m benchmarks.quality.tune.ship_summeval --judge qwen2.5-coder-0.5b

Then the shipped folder is checked: the engine (`evaluate`, the tuned judge loaded by its folder,
batch-invariant fp32) against the trainer's packed reading of the same cases, `--check N` articles,
each dimension; `ship_summeval_<judge>.{md,json}` record the tune's figures and that difference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
from pathlib import Path

from benchmarks.lib.common import DIMENSIONS, SUMMEVAL_DATA, host_load, load_summeval, machine
from benchmarks.quality.tune.summeval_halves import read, reader

HERE = Path(__file__).resolve().parent

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "localjudge" / "tuned"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judge", default="qwen2.5-coder-0.5b")
    ap.add_argument("--loss", default=None, help="Default: the tune's default loss.")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--work", type=Path, default=Path("/tmp/localjudge-tune-bench"))
    ap.add_argument("--check", type=int, default=1, help="Articles the engine reads again, each dimension.")
    args = ap.parse_args()
    import torch

    from localjudge.judges.adapters import ADAPTER, MANIFEST
    from localjudge.metrics import builtin_metric
    from localjudge.tune import TuneJob, TuneOptions, tune

    torch.set_num_threads(2)
    load = os.getloadavg()
    name = f"{args.judge}-summeval"
    cases = load_summeval(SUMMEVAL_DATA)
    docs = len({c.extra["doc_id"] for c in cases})
    settings = TuneOptions(epochs=args.epochs, **({"loss": args.loss} if args.loss else {}))
    job = TuneJob(
        judge=args.judge,
        human="human_{metric}",
        out=args.work / f"{name}-all",
        group="doc_id",
        human_scale=(1, 5),
        name=name,
        resume=True,
        features=args.work / f"{args.judge}-L{settings.layers}-features",
        data_sha256=hashlib.sha256(SUMMEVAL_DATA.read_bytes()).hexdigest(),
        data_name=f"SummEval dev ({SUMMEVAL_DATA.name}: {docs} articles, {len(cases)} summaries, expert ratings "
        "of coherence, consistency, fluency and relevance)",
        never_shown="any SummEval article outside the dev file; SummEdits, MT-Bench, LLMBar and the RAG cases; "
        "the release check's data",
    )
    manifest = tune(cases, [builtin_metric(d) for d in DIMENSIONS], job, settings)
    target = PACKAGE / name
    target.mkdir(parents=True, exist_ok=True)
    for file in (ADAPTER, MANIFEST):
        shutil.copyfile(job.out / file, target / file)
    print(f"{name}: best epoch {manifest.best_epoch}, adapter {(target / ADAPTER).stat().st_size} bytes in {target}")
    first = list(dict.fromkeys(c.extra["doc_id"] for c in cases))[: args.check]
    checked = [c for c in cases if c.extra["doc_id"] in first]
    results = {
        "machine": machine("torch_threads", "torch"),
        "manifest": json.loads((target / MANIFEST).read_text()),
        "adapter_bytes": (target / ADAPTER).stat().st_size,
        "engine_check": engine_check(args.judge, target, checked, settings, args.work),
        "host": host_load(load),
    }
    (HERE / f"ship_summeval_{args.judge}.json").write_text(json.dumps(results, indent=1) + "\n")
    (HERE / f"ship_summeval_{args.judge}.md").write_text(report(results, args))


def engine_check(judge_name: str, folder: Path, cases, settings, work: Path) -> dict:
    """Largest difference in expected score between the engine and the trainer's reading, per dimension."""
    from localjudge.judges.loading import load_judge
    from localjudge.metrics import builtin_metric
    from localjudge.runs.evaluate import evaluate

    base, split = reader(judge_name, settings.layers)
    tuned = load_judge(str(folder), progress=False)
    diffs: dict[str, float] = {}
    for dim in DIMENSIONS:
        metric = builtin_metric(dim)
        features = work / f"{judge_name}-L{settings.layers}-features"
        trainer, _ = read(base, split, metric, cases, dim, features, settings, folder)
        engine = {r.case_id: r.raw_score for r in evaluate(cases, [metric], tuned, progress=False).records}
        diffs[dim] = max(abs(e - float(t)) for c, t in zip(cases, trainer) if (e := engine[c.id]) is not None)
    return {"cases": len(cases), "bitwise_engine": tuned.info.bitwise, "max_abs_diff_expected_score": diffs}


def report(results: dict, args) -> str:
    m, t, check = results["machine"], results["manifest"], results["engine_check"]
    history = "\n".join(
        f"| {h['epoch']} | {cell(h['train_loss'])} | {h['agreement']:.3f} | "
        + " | ".join(f"{h['per_metric'][d]:.3f}" for d in DIMENSIONS)
        + f" | {h['valid_mass']:.3f} |"
        for h in t["history"]
    )
    diffs = ", ".join(f"{d} {v:.1e}" for d, v in check["max_abs_diff_expected_score"].items())
    return "\n".join(
        [
            f"# The shipped `{t['name']}` judge: its tune",
            "",
            f"Made by `python -m benchmarks.quality.tune.ship_summeval --judge {args.judge} --epochs {args.epochs}` on "
            f"{m['cpu']} ({m['cores']} cores, torch {m['torch']}, {m['torch_threads']} threads); {results['host']}.",
            "",
            f"Trained on: {t['trained_on']}. Never shown: {t['never_shown']}.",
            "",
            f"One LoRA adapter (rank {t['rank']}, alpha {t['alpha']:g}, top {t['layers']} layers, "
            f"{results['adapter_bytes']:,} bytes) for the four G-Eval metrics, loss {t['settings']['loss']}, "
            f"{t['train_cases']} training and {t['validation_cases']} validation cases (whole articles); "
            f"epoch {t['best_epoch']} kept. Epoch 0 is the untuned judge.",
            "",
            "Validation agreement (Spearman ρ per article, averaged; the validation articles chose the epoch, so "
            "these figures are not held out: the held-out ones are `summeval_halves_*`):",
            "",
            "| epoch | training loss | mean ρ | " + " | ".join(DIMENSIONS) + " | valid mass |",
            "|---|---|---|" + "---|" * len(DIMENSIONS) + "---|",
            history,
            "",
            f"Cost: {t['wall_seconds']:,.0f} s wall for the tune (features included), "
            f"{t['tokens_per_second']:.1f} tokens/s through the tuned layers, peak {t['peak_memory_gib']:.2f} GiB.",
            "",
            f"Engine check: the folder loaded as a judge (batch-invariant engine: {check['bitwise_engine']}) and read "
            f"by `evaluate` on {check['cases']} cases differs from the trainer's packed fp32 reading by at most "
            f"(expected score): {diffs}.",
            "",
        ]
    )


def cell(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


if __name__ == "__main__":
    main()
