"""A pairwise head on human preference pairs: MT-Bench human pairs and LLMBar natural, questions held out.

Each answer is read after its question ("Instruction: ... Response: ..."); the head is a logistic
on the difference of the two answers' features with no intercept (both orders), so P(output 1
better) flips exactly with the order. Halves: the distinct questions (`input`) alternate in file
order; fit on one half (grouped CV inside it by question), read the other, then swap, so every pair
is read by a head that never saw its question. Beside it on the same pairs: the longer answer
(length baseline) with a paired bootstrap over questions, and the likelihood difference. Then the
MT-Bench head (fit on all 200 pairs) read on LLMBar, a kind of data it never saw.

    python -m benchmarks.quality.heads.heads_pairs --judge smollm2-135m
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from benchmarks.lib.common import machine
from benchmarks.lib.tuning import alternate_groups
from benchmarks.quality.heads import data
from benchmarks.quality.heads.study import fit_read
from localjudge.metrics import builtin_metric

HERE = Path(__file__).resolve().parent


def accuracy_ci(correct: np.ndarray, groups: np.ndarray, n: int = 2000, seed: int = 0):
    """Accuracy and its 95% interval, questions resampled."""
    names = list(dict.fromkeys(groups.tolist()))
    per = [correct[groups == g] for g in names]
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n):
        pick = rng.integers(0, len(per), len(per))
        boots.append(np.concatenate([per[i] for i in pick]).mean())
    return float(correct.mean()), float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))


def paired_diff(a: np.ndarray, b: np.ndarray, groups: np.ndarray, n: int = 2000, seed: int = 0):
    """Mean of a - b (accuracy difference) with a 95% interval and the share of resamples at or below 0."""
    names = list(dict.fromkeys(groups.tolist()))
    per = [(a[groups == g], b[groups == g]) for g in names]
    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(n):
        pick = rng.integers(0, len(per), len(per))
        x = np.concatenate([per[i][0] for i in pick])
        y = np.concatenate([per[i][1] for i in pick])
        diffs.append(x.mean() - y.mean())
    d = np.array(diffs)
    return (
        float(a.mean() - b.mean()),
        float(np.percentile(d, 2.5)),
        float(np.percentile(d, 97.5)),
        float((d <= 0).mean()),
    )


def study(judge, name: str, work: Path) -> dict:
    metric = builtin_metric("pairwise")
    cases, spec, feats, cost = data.features(judge, name, work)
    groups = np.array([str(c.input) for c in cases])
    first, second = alternate_groups(list(range(len(cases))), lambda i: groups[i])
    read = np.full(len(cases), np.nan)
    chosen = []
    for fit_rows, read_rows in ((np.array(first), np.array(second)), (np.array(second), np.array(first))):
        r, c, s = fit_read(metric, cases, "label", spec, feats, fit_rows, read_rows, data.ANSWER)
        read[read_rows] = r
        chosen.append({"layers": c.chosen.layers, "alpha": c.chosen.alpha, "cv": c.oof_agreement, "fit_s": s})
    truth = np.array([c.extra["label"] == 1 for c in cases])
    head_ok = (read > 0.5) == truth
    l1 = np.array([len(str(c.extra["output_1"])) for c in cases])
    l2 = np.array([len(str(c.extra["output_2"])) for c in cases])
    length_ok = (l1 > l2) == truth
    lik = np.array([a.logprobs.mean() - b.logprobs.mean() for a, b in zip(feats["output_1"], feats["output_2"])])
    lik_ok = (lik > 0) == truth
    return {
        "pairs": len(cases),
        "questions": len(set(groups)),
        "head": accuracy_ci(head_ok, groups),
        "length (longer answer)": accuracy_ci(length_ok, groups),
        "likelihood difference": accuracy_ci(lik_ok.astype(float), groups),
        "head - length": paired_diff(head_ok.astype(float), length_ok.astype(float), groups),
        "chosen": chosen,
        "features": cost,
    }


def transfer(judge, work: Path) -> dict:
    """The MT-Bench head, fit on all its pairs, read on LLMBar natural."""
    metric = builtin_metric("pairwise")
    mt, spec, mt_feats, _ = data.features(judge, "mtbench", work)
    lb, _, lb_feats, _ = data.features(judge, "llmbar", work)
    cases = mt + lb
    feats = {f: mt_feats[f] + lb_feats[f] for f in mt_feats}
    fit_rows, read_rows = np.arange(len(mt)), np.arange(len(mt), len(cases))
    r, _, _ = fit_read(metric, cases, "label", spec, feats, fit_rows, read_rows, data.ANSWER)
    groups = np.array([str(c.input) for c in lb])
    truth = np.array([c.extra["label"] == 1 for c in lb])
    l1 = np.array([len(str(c.extra["output_1"])) for c in lb])
    l2 = np.array([len(str(c.extra["output_2"])) for c in lb])
    return {
        "mtbench head on llmbar": accuracy_ci(((r > 0.5) == truth).astype(float), groups),
        "length on llmbar": accuracy_ci(((l1 > l2) == truth).astype(float), groups),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judge", default="smollm2-135m")
    ap.add_argument("--work", type=Path, default=data.WORK)
    args = ap.parse_args()
    from localjudge.engine.options import EngineOptions
    from localjudge.judges.loading import load_judge

    started, load0 = time.perf_counter(), os.getloadavg()[0]
    judge = load_judge(args.judge, options=EngineOptions(dtype="float32"), progress=False)
    res = {
        "judge": args.judge,
        "mtbench": study(judge, "mtbench", args.work),
        "llmbar": study(judge, "llmbar", args.work),
    }
    res["transfer"] = transfer(judge, args.work)
    res["machine"], res["host"] = (
        machine(),
        f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end",
    )
    res["total_seconds"] = time.perf_counter() - started
    (HERE / f"heads_pairs_{args.judge}.json").write_text(json.dumps(res, indent=1) + "\n")
    (HERE / f"heads_pairs_{args.judge}.md").write_text(render(res))


def render(res: dict) -> str:
    def f(x):
        return f"{x[0]:.3f} [{x[1]:.3f}, {x[2]:.3f}]"

    lines = [
        f"# A pairwise head on human preference pairs: {res['judge']}",
        "",
        f"Made by `python -m benchmarks.quality.heads.heads_pairs --judge {res['judge']}` on "
        f"{res['machine'].get('cpu', '?')} ({res['host']}); fp32 features, questions held out (halves by question).",
        "",
        "| data | pairs (questions) | head | longer answer | likelihood difference | head − length [95% CI], P(≤0) |",
        "|---|---|---|---|---|---|",
    ]
    for name in ("mtbench", "llmbar"):
        r = res[name]
        d = r["head - length"]
        lines.append(
            f"| {name} | {r['pairs']} ({r['questions']}) | {f(r['head'])} | {f(r['length (longer answer)'])} | "
            f"{f(r['likelihood difference'])} | {d[0]:+.3f} [{d[1]:+.3f}, {d[2]:+.3f}], {d[3]:.3f} |"
        )
    t = res["transfer"]
    lines += [
        "",
        f"The MT-Bench head (fit on all 200 pairs) on LLMBar natural: {f(t['mtbench head on llmbar'])}; "
        f"the longer answer there {f(t['length on llmbar'])}.",
        "",
        "Accuracy is the share of pairs whose P(output 1 better) > 0.5 agrees with the people; intervals resample "
        "questions. Chosen per half: "
        + "; ".join(
            f"{n} {c['layers']} α {c['alpha']:g} (cv {c['cv']:.3f}, fit {c['fit_s']:.1f} s)"
            for n in ("mtbench", "llmbar")
            for c in res[n]["chosen"]
        ),
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
