"""Ranking SummEval summaries from pairwise comparisons, beside the pointwise scorers, on the same items.

For each article of a subset of SummEval dev (`shared/data/summeval_dev.json`, 16 summaries per
article), and each dimension asked, the same judge scores the summaries three ways:

- `geval`: the builtin pointwise G-Eval metric of the dimension (expected score, exact);
- `likelihood`: the builtin `<dim>_likelihood` metric;
- `rank@b`: `localjudge.rank_outputs` with a pairwise metric of the dimension (below; both presentation
  orders, a Bradley–Terry fit on the probabilities, comparisons chosen adaptively), at b comparisons
  per summary.

Reported: summary-level Spearman ρ with the experts (per article, averaged, as G-Eval reports it);
system level: Kendall τ between each scorer's ranking of the 16 systems (mean score over the articles)
and the experts', with a percentile interval from resampling articles; cost: wall time as a multiple
of the pointwise G-Eval reading of the same summaries. The pairwise criteria are SummEval's
definitions of the dimensions, written before any run and not tuned.

Usage (under `nice`; the host may be shared: the results file says so):

    .venv/bin/python -m benchmarks.quality.rank.rank_summeval --judge smollm2-135m --docs 3 --budgets 2 4

`--dtype bfloat16` reads in bf16 (fast on CPUs with AMX or AVX-512 BF16); the default is the judge's own.

Writes `rank_summeval_<judge>.{md,json}` beside this script and the runs' files under `runs/`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np

from benchmarks.lib.common import SUMMEVAL_DATA, cell, host_load, kept_section, load_summeval, machine
from benchmarks.lib.summeval import CRITERIA, agreement, pairwise_metric

HERE = Path(__file__).resolve().parent


def out_paths(judge: str) -> tuple[Path, Path]:
    """The results files of one judge's run: `rank_summeval_<judge>.{md,json}` beside this script."""
    return HERE / f"rank_summeval_{judge}.md", HERE / f"rank_summeval_{judge}.json"


def system_tau(scores, human, systems, docs, n_boot: int = 1000, seed: int = 0) -> dict:
    """Kendall τ-b between the system means of a scorer and of the experts, articles resampled for the interval."""
    from scipy.stats import kendalltau

    keep = [i for i, s in enumerate(scores) if s is not None]
    s = np.array([scores[i] for i in keep], dtype=float)
    h = np.array([human[i] for i in keep], dtype=float)
    sy = np.array([systems[i] for i in keep])
    dc = np.array([docs[i] for i in keep])
    names = sorted(set(sy))

    def tau(idx: np.ndarray) -> float:
        a = [s[idx][sy[idx] == n].mean() if (sy[idx] == n).any() else np.nan for n in names]
        b = [h[idx][sy[idx] == n].mean() if (sy[idx] == n).any() else np.nan for n in names]
        ok = np.isfinite(a) & np.isfinite(b)
        return float(kendalltau(np.array(a)[ok], np.array(b)[ok])[0])

    point = tau(np.arange(len(s)))
    from localjudge.stats import bootstrap_indices

    boot = np.array([tau(idx) for idx in bootstrap_indices(len(s), dc, n_boot, seed)])
    boot = boot[np.isfinite(boot)]
    lo, hi = np.percentile(boot, [2.5, 97.5]).tolist() if len(boot) else [None, None]
    return {"tau": point, "ci_low": lo, "ci_high": hi, "systems": len(names)}


def run(judge_name: str, docs: int, budgets: list[int], dims: list[str], runs: Path, dtype: str | None = None) -> dict:
    from localjudge import RankOptions, evaluate, load_judge, rank_outputs
    from localjudge.metrics import builtin_metric
    from localjudge.rank.run import comparisons_path

    cases = load_summeval(SUMMEVAL_DATA, docs)
    judge = load_judge(judge_name, dtype=dtype)
    doc_ids = [c.extra["doc_id"] for c in cases]
    systems = [c.extra["system_id"] for c in cases]
    out: dict = {"judge": judge_name, "dtype": judge.info.dtype, "docs": docs,
                 "summaries": len(cases), "dimensions": {}}  # fmt: skip
    runs.mkdir(parents=True, exist_ok=True)
    for dim in dims:
        human = [c.extra[f"human_{dim}"] for c in cases]
        rows = {}
        for label, metric in (("geval", builtin_metric(dim)), ("likelihood", builtin_metric(f"{dim}_likelihood"))):
            t0 = time.perf_counter()
            res = evaluate(cases, [metric], judge, out=runs / f"{judge_name}_{dim}_{label}.jsonl", overwrite=True,
                           progress=False)  # fmt: skip
            seconds = time.perf_counter() - t0
            scores = [r.score for r in res.records]
            rows[label] = {"seconds": seconds, **agreement(scores, human, doc_ids),
                           "system": system_tau(scores, human, systems, doc_ids)}  # fmt: skip
        spent, before = 0.0, None
        for b in sorted(budgets):
            # each budget resumes from the smaller one's comparisons: a larger budget on resume only adds
            # comparisons and replays the same choices (docs/rank.md), so the ranks are those of a run from
            # scratch at that budget, and its cost is the cumulative time to reach it
            out_b = runs / f"{judge_name}_{dim}_rank{b}.jsonl"
            fresh = comparisons_path(out_b)
            out_b.unlink(missing_ok=True)
            if before is None:
                fresh.unlink(missing_ok=True)
            else:
                shutil.copyfile(before, fresh)
            t0 = time.perf_counter()
            res = rank_outputs(
                cases, pairwise_metric(dim), judge, RankOptions(group="doc_id", budget=b, system="system_id"),
                out=out_b, resume=True, progress=False,
            )  # fmt: skip
            spent += time.perf_counter() - t0
            seconds, before = spent, fresh
            scores = [r.score for r in res.records]
            rows[f"rank@{b}"] = {
                "seconds": seconds, **agreement(scores, human, doc_ids),
                "system": system_tau(scores, human, systems, doc_ids),
                "comparisons": res.summary.comparisons, "mean_disagreement": res.summary.mean_disagreement,
            }  # fmt: skip
        base = rows["geval"]["seconds"]
        for r in rows.values():
            r["cost_vs_geval"] = r["seconds"] / base
        out["dimensions"][dim] = rows
    return out


def write(result: dict) -> Path:
    out_md, out_json = out_paths(result["judge"])
    out_json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    lines = [
        "# Ranking SummEval summaries from comparisons, beside pointwise scoring",
        "",
        f"Judge `{result['judge']}` on the first {result['docs']} articles of SummEval dev "
        f"({result['summaries']} summaries) in {result.get('dtype', 'float32')}, one run of "
        "`benchmarks/quality/rank/rank_summeval.py`. "
        f"Machine: {result['machine']['cpu']}, {result['machine']['cores']} cores; {result['host']}: on a shared "
        "host the times are inflated and noisy, the cost ratios less so.",
        "",
        "A SMALL subset: the per-article ρ averages only these articles and the system-level τ ranks 16 systems "
        "from these articles only; intervals are wide. Not a measurement of the issue's targets (1.5B judge, all "
        "50 articles), which were not run here.",
        "",
        "Budgets run in increasing order, each resuming from the smaller budget's comparisons (the ranks a run "
        "from scratch at that budget gives); a rank@b row's wall time is the cumulative time to reach budget b.",
        "",
        "| dimension | scorer | summary ρ | summary τ | system τ [95% CI] | comparisons | wall s | cost × G-Eval |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for dim, rows in result["dimensions"].items():
        for name, r in rows.items():
            s = r["system"]
            ci = f"{cell(s['tau'])} [{cell(s['ci_low'])}, {cell(s['ci_high'])}]"
            lines.append(
                f"| {dim} | {name} | {cell(r['spearman'])} | {cell(r['kendall_tau_b'])} | {ci} | "
                f"{r.get('comparisons', '–')} | {r['seconds']:.0f} | {r['cost_vs_geval']:.2f} |"
            )
    lines += mean_over_dimensions(result["dimensions"])
    out_md.write_text("\n".join(lines) + "\n" + kept_section(out_md), encoding="utf-8")
    return out_md


def mean_over_dimensions(dims: dict) -> list[str]:
    """Markdown rows of each scorer's mean over the dimensions run (summary ρ, summary τ, system τ); none for one."""
    if len(dims) < 2:
        return []
    scorers = [name for name in next(iter(dims.values())) if all(name in rows for rows in dims.values())]
    lines = [
        "",
        f"Mean over the {len(dims)} dimensions ({', '.join(dims)}), each dimension's figure as in the table:",
        "",
        "| scorer | mean summary ρ | mean summary τ | mean system τ | wall s, all dimensions |",
        "|---|---|---|---|---|",
    ]
    for name in scorers:
        rows = [d[name] for d in dims.values()]
        rho = _mean([r["spearman"] for r in rows])
        tau = _mean([r["kendall_tau_b"] for r in rows])
        system = _mean([r["system"]["tau"] for r in rows])
        lines.append(f"| {name} | {cell(rho)} | {cell(tau)} | {cell(system)} | {sum(r['seconds'] for r in rows):.0f} |")
    return lines


def _mean(xs: list) -> float | None:
    return None if any(x is None for x in xs) else float(np.mean(xs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judge", default="smollm2-135m")
    parser.add_argument("--docs", type=int, default=3, help="First N articles of SummEval dev.")
    parser.add_argument("--budgets", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--dims", nargs="+", default=["consistency"], choices=sorted(CRITERIA))
    parser.add_argument("--dtype", default=None, help="float32 or bfloat16; default the judge's own.")
    parser.add_argument(
        "--render", action="store_true", help="Rewrite the judge's Markdown from its JSON results; judge nothing."
    )
    args = parser.parse_args()
    if args.render:
        result = json.loads(out_paths(args.judge)[1].read_text(encoding="utf-8"))
        print(write(result).read_text(encoding="utf-8"))
        return
    load = os.getloadavg()
    t0 = time.perf_counter()
    result = run(args.judge, args.docs, args.budgets, args.dims, HERE / "runs", args.dtype)
    result["machine"] = machine("torch_threads")
    result["host"] = host_load(load)
    result["total_seconds"] = time.perf_counter() - t0
    print(write(result).read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
