"""A consistency head on SummEdits' five dev domains, each domain read by a head fit on the other four; and heads
that travel: the SummEval heads read on SummEdits, the SummEdits head read on SummEval.

Leave one domain out: the logistic head (grouped CV by document inside the four domains) reads the
fifth; the threshold on P(consistent) is the one that maximises balanced accuracy on the four
domains' out-of-fold readings. Beside it, the likelihood (mean token log-probability of the
summary after its document, the reading a user could fall back on) with its threshold fitted the
same way on the four domains. Transfer: a SummEval consistency head (fit on all 50 dev articles)
read on each SummEdits domain (AUC; balanced accuracy at the threshold fitted on the other four
domains' readings), and the SummEdits head (fit on all five domains) read on SummEval consistency
(summary-level ρ), each beside the likelihood.

    python -m benchmarks.quality.heads.heads_summedits --judge smollm2-135m --sentences

With --sentences, also the head with sentence readings and the least likely sentence read alone.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from benchmarks.lib.common import machine
from benchmarks.quality.heads import data
from benchmarks.quality.heads.study import bootstrap_mean, ci, fit_read, per_group_rho
from localjudge.metrics import builtin_metric
from localjudge.stats.classification import roc_auc

HERE = Path(__file__).resolve().parent


def balanced_accuracy(scores: np.ndarray, labels: np.ndarray, threshold: float) -> float:
    pred = scores >= threshold
    pos, neg = labels == 1, labels == 0
    return float((pred[pos].mean() + (~pred[neg]).mean()) / 2)


def best_threshold(scores: np.ndarray, labels: np.ndarray) -> float:
    """The threshold maximising balanced accuracy (midpoints between sorted distinct scores)."""
    s = np.unique(scores)
    cuts = np.concatenate([[s[0] - 1], (s[:-1] + s[1:]) / 2, [s[-1] + 1]])
    return float(max(cuts, key=lambda t: balanced_accuracy(scores, labels, t)))


def lodo(judge, work: Path, sentences: bool = False) -> dict:
    metric = builtin_metric("consistency_entailment")
    cases, spec, feats, cost = data.features(judge, "summedits", work)
    if sentences:
        _, sspec, sfeats, scost = data.features(judge, "summedits", work, sentences=True)
        least = np.array([f.sentences.min() for f in sfeats["actual_output"]])
    domains = np.array([c.extra["domain"] for c in cases])
    labels = np.array([c.extra["label"] for c in cases])
    lik = np.array([f.logprobs.mean() for f in feats["actual_output"]])
    rows = {}
    for d in data.DOMAINS:
        fit_rows, read_rows = np.flatnonzero(domains != d), np.flatnonzero(domains == d)
        r, chosen, secs = fit_read(metric, cases, "label", spec, feats, fit_rows, read_rows, data.SUMMARY)
        # the threshold from the four domains' out-of-fold readings (each read by a head that never saw it)
        t_head = best_threshold(chosen.oof, labels[fit_rows])
        t_lik = best_threshold(lik[fit_rows], labels[fit_rows])
        rows[d] = {
            "n": len(read_rows),
            "head_balanced_accuracy": balanced_accuracy(r, labels[read_rows], t_head),
            "head_auc": roc_auc(r, labels[read_rows]),
            "likelihood_balanced_accuracy": balanced_accuracy(lik[read_rows], labels[read_rows], t_lik),
            "likelihood_auc": roc_auc(lik[read_rows], labels[read_rows]),
            "chosen": {"layers": chosen.chosen.layers, "alpha": chosen.chosen.alpha, "cv_auc": chosen.oof_agreement},
            "fit_seconds": secs,
        }
        if sentences:
            r, chosen, _ = fit_read(metric, cases, "label", sspec, sfeats, fit_rows, read_rows, data.SUMMARY)
            t_head = best_threshold(chosen.oof, labels[fit_rows])
            t_least = best_threshold(least[fit_rows], labels[fit_rows])
            rows[d] |= {
                "sentence_head_balanced_accuracy": balanced_accuracy(r, labels[read_rows], t_head),
                "sentence_head_auc": roc_auc(r, labels[read_rows]),
                "least_sentence_balanced_accuracy": balanced_accuracy(least[read_rows], labels[read_rows], t_least),
                "least_sentence_auc": roc_auc(least[read_rows], labels[read_rows]),
            }
        print(d, rows[d]["head_balanced_accuracy"], rows[d]["likelihood_balanced_accuracy"], flush=True)
    return {"domains": rows, "features": cost} | ({"sentence_features": scost} if sentences else {})


def transfer(judge, work: Path) -> dict:
    se, spec, se_feats, _ = data.features(judge, "summeval", work)
    sd, _, sd_feats, _ = data.features(judge, "summedits", work)
    cases = se + sd
    feats = {"actual_output": se_feats["actual_output"] + sd_feats["actual_output"]}
    se_rows, sd_rows = np.arange(len(se)), np.arange(len(se), len(cases))
    # the SummEval consistency head, read on SummEdits (a rating: higher = more consistent)
    r, _, _ = fit_read(builtin_metric("consistency"), cases, "human_consistency", spec, feats, se_rows, sd_rows,
                       data.SUMMARY, (1, 5))  # fmt: skip
    labels = np.array([c.extra["label"] for c in sd])
    domains = np.array([c.extra["domain"] for c in sd])
    lik = np.array([f.logprobs.mean() for f in sd_feats["actual_output"]])
    on_summedits = {}
    for d in data.DOMAINS:
        m, rest = domains == d, domains != d
        on_summedits[d] = {
            "head_auc": roc_auc(r[m], labels[m]),
            "head_balanced_accuracy": balanced_accuracy(r[m], labels[m], best_threshold(r[rest], labels[rest])),
            "likelihood_auc": roc_auc(lik[m], labels[m]),
            "likelihood_balanced_accuracy": balanced_accuracy(
                lik[m], labels[m], best_threshold(lik[rest], labels[rest])
            ),
        }
    # the SummEdits head (all five domains), read on SummEval consistency
    p, _, _ = fit_read(
        builtin_metric("consistency_entailment"), cases, "label", spec, feats, sd_rows, se_rows, data.SUMMARY
    )
    human = np.array([c.extra["human_consistency"] for c in se])
    docs = np.array([c.extra["doc_id"] for c in se])
    se_lik = np.array([f.logprobs.mean() for f in se_feats["actual_output"]])
    return {
        "summeval consistency head on summedits": on_summedits,
        "summedits head on summeval consistency": bootstrap_mean(per_group_rho(p, human, docs)),
        "likelihood on summeval consistency": bootstrap_mean(per_group_rho(se_lik, human, docs)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judge", default="smollm2-135m")
    ap.add_argument("--work", type=Path, default=data.WORK)
    ap.add_argument(
        "--sentences", action="store_true", help="Also read each summary's sentences alone (one more pass)."
    )
    args = ap.parse_args()
    from localjudge.engine.options import EngineOptions
    from localjudge.judges.loading import load_judge

    started, load0 = time.perf_counter(), os.getloadavg()[0]
    judge = load_judge(args.judge, options=EngineOptions(dtype="float32"), progress=False)
    res = {"judge": args.judge, "lodo": lodo(judge, args.work, args.sentences), "transfer": transfer(judge, args.work)}
    res["machine"], res["host"] = (
        machine(),
        f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end",
    )
    res["total_seconds"] = time.perf_counter() - started
    (HERE / f"heads_summedits_{args.judge}.json").write_text(json.dumps(res, indent=1) + "\n")
    (HERE / f"heads_summedits_{args.judge}.md").write_text(render(res))


def render(res: dict) -> str:
    rows = res["lodo"]["domains"]
    lines = [
        f"# A consistency head on SummEdits, domains held out; heads that travel: {res['judge']}",
        "",
        f"Made by `python -m benchmarks.quality.heads.heads_summedits --judge {res['judge']}` on "
        f"{res['machine'].get('cpu', '?')} ({res['host']}); fp32 features.",
        "",
        "Leave one domain out (threshold fitted on the other four):",
        "",
        "| domain | cases | head balanced acc. | head AUC | likelihood balanced acc. | likelihood AUC |",
        "|---|---|---|---|---|---|",
    ]
    for d, r in rows.items():
        lines.append(
            f"| {d} | {r['n']} | {r['head_balanced_accuracy']:.3f} | {r['head_auc']:.3f} | "
            f"{r['likelihood_balanced_accuracy']:.3f} | {r['likelihood_auc']:.3f} |"
        )
    mean = {
        k: np.mean([r[k] for r in rows.values()]) for k in next(iter(rows.values())) if k.endswith(("accuracy", "auc"))
    }
    lines.append(
        f"| **mean of five** | | **{mean['head_balanced_accuracy']:.3f}** | {mean['head_auc']:.3f} | "
        f"{mean['likelihood_balanced_accuracy']:.3f} | {mean['likelihood_auc']:.3f} |"
    )
    if "sentence_head_auc" in mean:
        lines += [
            "",
            "Sentences read alone (`FeatureSpec.sentences`: each summary sentence read after the document on its own), "
            "the same protocol:",
            "",
            "| domain | head with sentence readings: balanced acc. | its AUC | least likely sentence: balanced acc. | "
            "its AUC |",
            "|---|---|---|---|---|",
        ]
        for d, r in [*rows.items(), ("**mean of five**", mean)]:
            lines.append(
                f"| {d} | {r['sentence_head_balanced_accuracy']:.3f} | {r['sentence_head_auc']:.3f} | "
                f"{r['least_sentence_balanced_accuracy']:.3f} | {r['least_sentence_auc']:.3f} |"
            )
    t = res["transfer"]
    on = t["summeval consistency head on summedits"]
    m = {k: np.mean([r[k] for r in on.values()]) for k in next(iter(on.values()))}
    lines += [
        "",
        "Heads that travel (data of another kind than they were fit on):",
        "",
        f"- SummEval consistency head (all 50 dev articles) on SummEdits' five domains: mean AUC {m['head_auc']:.3f}, "
        f"balanced accuracy {m['head_balanced_accuracy']:.3f}; the likelihood there: AUC {m['likelihood_auc']:.3f}, "
        f"balanced accuracy {m['likelihood_balanced_accuracy']:.3f}.",
        f"- SummEdits head (all five domains) on SummEval consistency: summary-level ρ "
        f"{ci(t['summedits head on summeval consistency'])}; "
        f"the likelihood {ci(t['likelihood on summeval consistency'])}.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
