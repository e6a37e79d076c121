"""Heads on SummEval dev, every figure on articles the head never saw (the halves of `quality/tune`).

The 50 dev articles split in two halves (alternate articles in file order). A head is fit on one
half (layers and L2 strength by grouped 5-fold cross-validation inside it, as `localjudge tune
--method head` fits) and read on the other, then the halves swap: every article is read by a head
that never saw it. Summary-level ρ (Spearman per article against the expert mean, averaged, as
G-Eval's Table 1) with a 95% interval over articles; pooled ρ over all 800 readings (a score
compared across articles). Beside it, on the same articles: the head without its likelihood
anchor, the likelihood alone (the output's mean token log-probability under the head's prompt),
features centred within an article (a measured option: a reading that needs the article's other
summaries), and the judge's G-Eval and builtin `<dim>_likelihood` readings from
`quality/summeval/summeval_scores` where that file has the judge. Then a learning curve and the cost.

    python -m benchmarks.quality.heads.heads_summeval --judge smollm2-135m --sentences

With --sentences, also: each summary's sentences read alone after the article (`FeatureSpec.sentences`),
as two more head features and as readings of their own (the least likely sentence, the mean).
With --panel-with J, judge J's heads (fit the same way on its own features) and the mean of both
judges' readings, as `localjudge eval --judge A --judge B --panel mean` pools them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from benchmarks.lib.common import machine
from benchmarks.lib.tuning import alternate_groups
from benchmarks.quality.heads import data
from benchmarks.quality.heads.study import bootstrap_mean, ci, fit_read, per_group_rho
from localjudge.metrics import builtin_metric

HERE = Path(__file__).resolve().parent
SCORES = HERE.parent / "summeval" / "summeval_scores"
CURVE = (48, 96, 192, 400)


def centred(cases, feats):
    """Features with each article's mean pooled state subtracted (log-probabilities as they are)."""
    out = {}
    for field, fs in feats.items():
        docs = np.array([c.extra["doc_id"] for c in cases])
        means = {d: np.mean([fs[i].pooled for i in np.flatnonzero(docs == d)], axis=0) for d in set(docs)}
        out[field] = [f._replace(pooled=f.pooled - means[d]) for f, d in zip(fs, docs)]
    return out


def halves_reading(metric, cases, dim, spec, feats, halves, options):
    """(800,) readings, each article read by the head fit on the other half; fit seconds; chosen configs."""
    out = np.full(len(cases), np.nan)
    seconds, chosen = [], []
    for fit_rows, read_rows in (halves, halves[::-1]):
        r, c, s = fit_read(metric, cases, f"human_{dim}", spec, feats, fit_rows, read_rows, options, (1, 5))
        out[read_rows] = r
        seconds.append(s)
        chosen.append({"layers": c.chosen.layers, "alpha": c.chosen.alpha, "cv": c.oof_agreement})
    return out, seconds, chosen


def agreement(scores, human, docs) -> dict:
    rhos = per_group_rho(scores, human, docs)
    return {
        "summary_rho": bootstrap_mean(rhos),
        "articles": len(rhos),
        "pooled_rho": float(spearmanr(scores, human)[0]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judge", default="smollm2-135m")
    ap.add_argument("--dims", nargs="+", default=list(data.DIMENSIONS))
    ap.add_argument("--work", type=Path, default=data.WORK)
    ap.add_argument("--render", action="store_true", help="Rewrite the Markdown from the JSON results file.")
    ap.add_argument("--panel-with", help="Another judge whose heads are read beside these and pooled (mean).")
    ap.add_argument(
        "--sentences", action="store_true", help="Also read each summary's sentences alone (one more pass)."
    )
    args = ap.parse_args()
    if args.render:
        res = json.loads((HERE / f"heads_summeval_{args.judge}.json").read_text())
        (HERE / f"heads_summeval_{args.judge}.md").write_text(render(res))
        return
    from localjudge.engine.options import EngineOptions
    from localjudge.judges.loading import load_judge

    started, load0 = time.perf_counter(), os.getloadavg()[0]
    judge = load_judge(args.judge, options=EngineOptions(dtype="float32"), progress=False)
    cases, spec, feats, cost = data.features(judge, "summeval", args.work)
    if args.sentences:
        _, sspec, sfeats, scost = data.features(judge, "summeval", args.work, sentences=True)
    if args.panel_with:  # another judge's heads beside these, pooled as `eval --panel mean` pools them
        other = load_judge(args.panel_with, options=EngineOptions(dtype="float32"), progress=False)
        _, ospec, ofeats, _ = data.features(other, "summeval", args.work)
    docs = np.array([c.extra["doc_id"] for c in cases])
    first, second = alternate_groups(list(range(len(cases))), lambda i: docs[i])
    halves = (np.array(first), np.array(second))
    plain, unanchored = data.SUMMARY, data.SUMMARY.model_copy(update={"anchor": "none"})
    flat = centred(cases, feats)
    stored = SCORES / f"{args.judge}-float32.json"
    prior = json.loads(stored.read_text()) if stored.is_file() else None
    results: dict = {"judge": args.judge, "dtype": "float32", "layers": spec.layers, "dimensions": {}}
    for dim in args.dims:
        metric = builtin_metric(dim)
        human = np.array([c.extra[f"human_{dim}"] for c in cases])
        head, fit_s, chosen = halves_reading(metric, cases, dim, spec, feats, halves, plain)
        alone, _, _ = halves_reading(metric, cases, dim, spec, feats, halves, unanchored)
        cent, _, _ = halves_reading(metric, cases, dim, spec, flat, halves, unanchored)
        lik = np.array([f.logprobs.mean() for f in feats["actual_output"]])
        row = {
            "head (anchored)": agreement(head, human, docs),
            "head alone": agreement(alone, human, docs),
            "head alone, centred per article": agreement(cent, human, docs),
            "likelihood under the head's prompt": agreement(lik, human, docs),
            "fit_seconds": fit_s,
            "chosen": chosen,
        }
        if args.panel_with:
            theirs, _, _ = halves_reading(metric, cases, dim, ospec, ofeats, halves, plain)
            row[f"{args.panel_with} head (anchored)"] = agreement(theirs, human, docs)
            # both on the metric's scale: the mean rating orders cases as the mean 0-1 score does
            row[f"panel mean of both judges' heads (with {args.panel_with})"] = agreement(
                (head + theirs) / 2, human, docs
            )
        if args.sentences:
            sent, _, _ = halves_reading(metric, cases, dim, sspec, sfeats, halves, plain)
            row["head with sentence readings (anchored)"] = agreement(sent, human, docs)
            for how, f in (("least likely sentence", np.min), ("mean over sentences", np.mean)):
                read = np.array([f(x.sentences) for x in sfeats["actual_output"]])
                row[f"sentences read alone: {how}"] = agreement(read, human, docs)
        if prior is not None:
            order = {cid: i for i, cid in enumerate(prior["case_ids"])}
            idx = [order[c.id] for c in cases]
            row["builtin <dim>_likelihood"] = agreement(np.array(prior["items"]["ll-mean"][dim])[idx], human, docs)
            row["G-Eval"] = agreement(np.array(prior["items"]["expected"][dim])[idx], human, docs)
            own = np.column_stack([np.array(prior["items"][k][dim])[idx] for k in ("expected", "ll-mean", "ll-pmi")])
            mixed = np.full(len(cases), np.nan)
            for fit_rows, read_rows in (halves, halves[::-1]):
                got = fit_read(metric, cases, f"human_{dim}", spec, feats, fit_rows, read_rows, plain, (1, 5), own)
                mixed[read_rows] = got[0]
            row["head with the metric's own readings (G-Eval, likelihood, PMI)"] = agreement(mixed, human, docs)
        curve = {}
        for n in CURVE:
            k = -(-n // 16)  # articles of each half fit on
            sub = []
            for fit_half, read_half in (halves, halves[::-1]):
                keep = list(dict.fromkeys(docs[fit_half]))[:k]
                sub.append((fit_half[np.isin(docs[fit_half], keep)], read_half))
            r = np.full(len(cases), np.nan)
            for fit_rows, read_rows in sub:
                r[read_rows] = fit_read(metric, cases, f"human_{dim}", spec, feats, fit_rows, read_rows, plain, (1, 5))[
                    0
                ]
            curve[str(k * 16)] = agreement(r, human, docs)["summary_rho"]
        row["learning_curve"] = curve
        results["dimensions"][dim] = row
        print(dim, ci(row["head (anchored)"]["summary_rho"]), flush=True)
    results["cost"] = cost_of(judge, cases, spec, cost)
    if args.sentences:
        results["cost"]["sentence_pass_this_run"] = scost
    results["machine"], results["host"] = (
        machine(),
        f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end",
    )
    results["total_seconds"] = time.perf_counter() - started
    out = HERE / f"heads_summeval_{args.judge}.json"
    out.write_text(json.dumps(results, indent=1) + "\n")
    (HERE / f"heads_summeval_{args.judge}.md").write_text(render(results))


def cost_of(judge, cases, spec, cost) -> dict:
    """A fresh feature pass over two articles (32 summaries): wall and CPU seconds per 100 summaries."""
    from localjudge.kinds.head.features import prompt_of, read_outputs

    sample = cases[:32]
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    read_outputs(judge, spec, [prompt_of(spec, c) for c in sample], [str(c.actual_output) for c in sample])
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    h = judge.backend.model.config.hidden_size
    return {
        "per_100_summaries_wall_s": wall * 100 / len(sample),
        "per_100_summaries_cpu_s": cpu * 100 / len(sample),
        "load_average": os.getloadavg()[0],
        "feature_pass_this_run": cost,
        "head_bytes_four_dimensions_all_layers": 4 * 3 * 8 * (len(spec.layers) * h + 3),
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    }


def render(res: dict) -> str:
    j = res["judge"]
    lines = [
        f"# Heads on SummEval dev, held-out halves: {j}",
        "",
        f"Made by `python -m benchmarks.quality.heads.heads_summeval --judge {j}` on {res['machine'].get('cpu', '?')} "
        f"({res['host']}); features fp32 through the batch-invariant engine, layers {res['layers']}.",
        "",
        "Each half of the 50 dev articles is fit on (grouped 5-fold CV inside it) and read on the other; ρ is "
        "Spearman per article against the expert mean, averaged over the articles read (95% interval over articles); "
        "pooled ρ is over all 800 readings.",
        "",
        "| dimension | reading | summary-level ρ [95% CI] | pooled ρ |",
        "|---|---|---|---|",
    ]
    means: dict[str, list[float]] = {}
    for dim, row in res["dimensions"].items():
        for name, v in row.items():
            if isinstance(v, dict) and "summary_rho" in v:
                name = "builtin <dim>_likelihood" if name.endswith("_likelihood (builtin)") else name  # older files
                lines.append(f"| {dim} | {name} | {ci(v['summary_rho'])} | {v['pooled_rho']:.3f} |")
                means.setdefault(name, []).append(v["summary_rho"][0])
    lines += ["", "| reading | mean ρ over the dimensions run |", "|---|---|"]
    lines += [f"| {k} | {np.mean(v):.3f} |" for k, v in means.items()]
    lines += [
        "",
        "Learning curve (anchored head, labels fit on per half → mean summary-level ρ on the other half):",
        "",
    ]
    lines += [
        "| dimension | "
        + " | ".join(f"{n} labels" for n in next(iter(res["dimensions"].values()))["learning_curve"])
        + " |"
    ]
    lines += ["|---|" + "---|" * len(CURVE)]
    for dim, row in res["dimensions"].items():
        lines.append(f"| {dim} | " + " | ".join(f"{v[0]:.3f}" for v in row["learning_curve"].values()) + " |")
    c = res["cost"]
    fits = [s for row in res["dimensions"].values() for s in row["fit_seconds"]]
    lines += [
        "",
        f"Cost: {c['per_100_summaries_wall_s']:.1f} s wall, {c['per_100_summaries_cpu_s']:.1f} CPU-s per 100 "
        f"summaries (a fresh feature pass over 2 articles, load average {c['load_average']:.1f}); one head fit "
        f"(CV and final fit) {min(fits):.1f}-{max(fits):.1f} s; four dimensions' heads "
        f"{c['head_bytes_four_dimensions_all_layers'] / 2**10:.0f} KiB at most; peak resident "
        f"{c['peak_rss_gib']:.2f} GiB; whole run {res['total_seconds']:.0f} s."
        + (
            f" Sentence readings: {c['sentence_pass_this_run']['computed']} sentences read alone in "
            f"{c['sentence_pass_this_run']['seconds']:.0f} s this run."
            if "sentence_pass_this_run" in c
            else ""
        ),
        "",
        "Chosen per half (layers, alpha, out-of-fold agreement inside the half):",
        "",
    ]
    for dim, row in res["dimensions"].items():
        lines.append(
            f"- {dim}: " + "; ".join(f"{c['layers']} α {c['alpha']:g} cv {c['cv']:.3f}" for c in row["chosen"])
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
