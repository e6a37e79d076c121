"""`rank` without position: SummEval summaries ranked from comparisons on articles the heads never saw.

The 50 dev articles split into the halves of `heads_summeval` (alternate articles). On the second
half, each article's 16 summaries are ranked by `localjudge.rank_outputs` (adaptive pairs, both
presentation orders, a Bradley-Terry fit) three ways, beside pointwise readings of the same summaries:

- `pairwise, probability pool`: the prompted pairwise metric of `quality/rank` (SummEval's definition
  of the dimension), its two orders' P(output 1 better) averaged, today's default;
- `pairwise, log-odds pool`: the same metric with `pool: log_odds` (cancels a constant position prior);
  each pool also with `--min-valid-mass 0`, every comparison read however little probability the judge
  puts on the two labels (by default a comparison below 0.1 is unscored, and so is a summary with none);
- `pairwise head`: a preference head (`tune --method head`) fit on pairs of the first half's summaries
  (every two summaries of an article the experts rated differently; output 1 better when rated higher),
  read on the difference of the two summaries' features: antisymmetric, no position to prefer;
- beside them, read without comparisons: the SummEval head of `heads_summeval` fit on the first half
  (anchored rating head) and the likelihood under the head's prompt.

The prompted rows cost a prompt per order per comparison, so they run on the first --docs articles
of the second half; the heads read all 25. Summary-level Spearman ρ per article (95% interval over
articles) and, for the comparisons, how often the two orders disagree on the winner.

    python -m benchmarks.quality.heads.heads_rank --judge smollm2-135m --dims consistency --docs 3 --budget 4
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np

from benchmarks.lib.common import machine
from benchmarks.lib.summeval import pairwise_metric
from benchmarks.lib.tuning import alternate_groups
from benchmarks.quality.heads import data
from benchmarks.quality.heads.study import bootstrap_mean, ci, fit_read, per_group_rho
from localjudge.metrics import builtin_metric

HERE = Path(__file__).resolve().parent


def preference_pairs(cases, dim: str, docs: set[str], per_article: int = 48) -> list:
    """Two summaries of an article in `docs` that the experts rated differently, as a labelled pair: at most
    `per_article` of an article's pairs, drawn with a fixed seed (a logistic fit on all ~2,500 takes minutes)."""
    from localjudge.io.cases import TestCase

    by_doc: dict[str, list] = {}
    for c in cases:
        if c.extra["doc_id"] in docs:
            by_doc.setdefault(c.extra["doc_id"], []).append(c)
    out = []
    rng = np.random.default_rng(0)
    for doc, members in by_doc.items():
        rated = [
            (i, j)
            for i in range(len(members))
            for j in range(i + 1, len(members))
            if members[i].extra[f"human_{dim}"] != members[j].extra[f"human_{dim}"]
        ]
        keep = sorted(rng.permutation(len(rated))[:per_article].tolist())
        for i, j in (rated[k] for k in keep):
            a, b = members[i], members[j]
            ha, hb = a.extra[f"human_{dim}"], b.extra[f"human_{dim}"]
            if (i + j) % 2:  # half the pairs show the better summary second
                a, b, ha, hb = b, a, hb, ha
            out.append(
                TestCase(
                    id=f"{a.id}|{b.id}",
                    input=a.input,
                    extra={
                        "output_1": a.actual_output,
                        "output_2": b.actual_output,
                        "label": 1 if ha > hb else 2,
                        "doc_id": doc,
                    },
                )
            )
    return out


def rank_rows(cases, metric, judge, budget: int, runs: Path, tag: str, **scoring) -> tuple[dict, object]:
    from localjudge import RankOptions, rank_outputs

    out = runs / f"{tag}.jsonl"
    t0 = time.perf_counter()
    res = rank_outputs(cases, metric, judge, RankOptions(group="doc_id", budget=budget, system="system_id"),
                       out=out, overwrite=True, progress=False, **scoring)  # fmt: skip
    by_id = {r.case_id: r.score for r in res.records}
    summary = res.summary
    return {
        "seconds": time.perf_counter() - t0,
        "comparisons": summary.comparisons,
        "mean_disagreement": summary.mean_disagreement,
        "flipped_share": summary.flipped_share,
    }, by_id


def agreement(scores: dict, cases, dim: str) -> dict:
    ids = [c.id for c in cases if scores.get(c.id) is not None]
    by = {c.id: c for c in cases}
    s = np.array([scores[i] for i in ids], dtype=float)
    h = np.array([by[i].extra[f"human_{dim}"] for i in ids], dtype=float)
    g = np.array([by[i].extra["doc_id"] for i in ids])
    rhos = per_group_rho(s, h, g)
    return {"summary_rho": bootstrap_mean(rhos), "articles": len(rhos), "scored": len(ids)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judge", default="smollm2-135m")
    ap.add_argument("--dims", nargs="+", default=["consistency"])
    ap.add_argument("--docs", type=int, default=3, help="Articles of the second half the prompted rows rank.")
    ap.add_argument("--budget", type=int, default=4, help="Comparisons per summary.")
    ap.add_argument("--work", type=Path, default=data.WORK)
    args = ap.parse_args()
    from localjudge.engine.options import EngineOptions
    from localjudge.heads import fit_heads
    from localjudge.judges.loading import load_judge
    from localjudge.tune.job import TuneJob

    started, load0 = time.perf_counter(), os.getloadavg()[0]
    judge = load_judge(args.judge, options=EngineOptions(dtype="float32"), progress=False)
    cases, spec, feats, _ = data.features(judge, "summeval", args.work, progress=False)
    index = {c.id: i for i, c in enumerate(cases)}
    first, second = alternate_groups(cases, lambda c: c.extra["doc_id"])
    fit_docs = {c.extra["doc_id"] for c in first}
    read_docs = list(dict.fromkeys(c.extra["doc_id"] for c in second))
    few = [c for c in second if c.extra["doc_id"] in read_docs[: args.docs]]
    runs = args.work / "rank_runs"
    runs.mkdir(parents=True, exist_ok=True)
    results: dict = {"judge": args.judge, "budget": args.budget, "docs": args.docs, "dimensions": {}}
    for dim in args.dims:
        rows: dict = {}
        scores: dict[str, dict] = {}
        # pointwise, no comparisons: the anchored head fit on the first half, and the likelihood
        fit_rows = np.array([index[c.id] for c in first])
        read_rows = np.array([index[c.id] for c in second])
        r, _, _ = fit_read(builtin_metric(dim), cases, f"human_{dim}", spec, feats, fit_rows, read_rows,
                           data.SUMMARY, (1, 5))  # fmt: skip
        scores["pointwise head"] = {c.id: float(v) for c, v in zip(second, r)}
        scores["likelihood under the head's prompt"] = {
            c.id: float(feats["actual_output"][index[c.id]].logprobs.mean()) for c in second
        }
        # the pairwise head, fit on the first half's pairs (features from the studies' cache)
        pairs = preference_pairs(cases, dim, fit_docs)
        metric = pairwise_metric(dim)
        head_dir = args.work / f"pair-head-{args.judge}-{dim}"
        shutil.rmtree(head_dir, ignore_errors=True)
        t0 = time.perf_counter()
        job = TuneJob(
            judge=args.judge,
            human="label",
            group="doc_id",
            out=head_dir,
            overwrite=True,
            features=args.work / "features",
            data_sha256="-",
            data_name="SummEval dev, first half",
            trained_on=f"{len(pairs)} pairs of the first half",
            never_shown="the second half",
            progress=False,
        )
        manifest = fit_heads(pairs, [metric], job, data.SUMMARY)
        rows["pairwise head fit"] = {
            "pairs": len(pairs),
            "seconds": time.perf_counter() - t0,
            "cv_agreement": manifest.heads[0].chosen.agreement,
            "layers": manifest.heads[0].chosen.layers,
        }
        head_judge = load_judge(str(head_dir), progress=False)
        info, scores["pairwise head"] = rank_rows(second, metric, head_judge, args.budget, runs, f"{dim}-head")
        rows["pairwise head"] = info
        info, scores["pairwise head, first articles"] = rank_rows(few, metric, head_judge, args.budget, runs,
                                                                  f"{dim}-head-few")  # fmt: skip
        rows["pairwise head, first articles"] = info
        for pool in ("probability", "log_odds"):
            m = metric.model_copy(update={"pool": pool})
            name = f"pairwise, {pool.replace('_', '-')} pool"
            info, scores[name] = rank_rows(few, m, judge, args.budget, runs, f"{dim}-{pool}")
            rows[name] = info
            # the same with every comparison read, however little probability the judge puts on the labels
            name += ", every comparison read (min valid mass 0)"
            info, scores[name] = rank_rows(few, m, judge, args.budget, runs, f"{dim}-{pool}-all", min_valid_mass=0.0)
            rows[name] = info
        for name, s in scores.items():
            on = few if name.startswith("pairwise, ") or name.endswith("first articles") else second
            rows.setdefault(name, {}).update(agreement(s, on, dim))
            if not name.startswith("pairwise"):  # the pointwise readings on the prompted rows' articles too
                rows[f"{name}, first articles"] = agreement(s, few, dim)
        results["dimensions"][dim] = rows
        print(dim, json.dumps({k: v.get("summary_rho") for k, v in rows.items()}), flush=True)
    results["machine"] = machine()
    results["host"] = f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    results["total_seconds"] = time.perf_counter() - started
    (HERE / f"heads_rank_{args.judge}.json").write_text(json.dumps(results, indent=1) + "\n")
    (HERE / f"heads_rank_{args.judge}.md").write_text(render(results))


def render(res: dict) -> str:
    j = res["judge"]
    lines = [
        f"# `rank` without position: {j}",
        "",
        f"Made by `python -m benchmarks.quality.heads.heads_rank --judge {j}` on {res['machine'].get('cpu', '?')} "
        f"({res['host']}; whole run {res['total_seconds']:.0f} s). Every article read is in the second half of "
        "SummEval dev; every head was fit on the first half. Budget "
        f"{res['budget']} comparisons per summary; the prompted rows and the rows marked 'first articles' read the "
        f"first {res['docs']} articles of the second half, the others all 25.",
        "",
        "| dimension | reading | articles | summary-level ρ [95% CI] | comparisons | orders disagree (mean gap) | "
        "winner flips | wall s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for dim, rows in res["dimensions"].items():
        for name, r in rows.items():
            if "summary_rho" not in r:
                continue
            gap = r.get("mean_disagreement")
            flips = r.get("flipped_share")
            lines.append(
                f"| {dim} | {name} | {r['articles']} | {ci(r['summary_rho'])} | {r.get('comparisons', '–')} | "
                f"{'–' if gap is None else f'{gap:.3f}'} | {'–' if flips is None else f'{flips:.2f}'} | "
                f"{r['seconds']:.0f} |"
                if "seconds" in r
                else f"| {dim} | {name} | {r['articles']} | {ci(r['summary_rho'])} | – | – | – | – |"
            )
        fit = rows.get("pairwise head fit")
        if fit:
            lines += [
                "",
                f"{dim}: the pairwise head was fit on {fit['pairs']} pairs in {fit['seconds']:.1f} s (features "
                f"cached), layers {fit['layers']}, out-of-fold accuracy {fit['cv_agreement']:.3f}.",
                "",
            ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
