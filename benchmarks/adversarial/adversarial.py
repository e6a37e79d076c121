"""How far can an answer move the judge's score by talking to the judge? Plain vs hardened template.

Runs `adversarial/attacks.jsonl` (10 wrong base answers, each also with 5 attacks appended)
through the correctness metric for each embedded judge, with the plain template
(`hardened=False`) and the hardened one, and reports per judge × template × attack kind the mean
score shift (attack − the same answer without the attack, on the normalised 0–1 score) with a
95% bootstrap interval over the base cases. A robust judge shows shifts near 0.

Usage:
    .venv/bin/python -m benchmarks.adversarial.adversarial                  # both judges, ~20 min on 2 CPU cores
    .venv/bin/python -m benchmarks.adversarial.adversarial --judge smollm2-135m --bootstrap 500

Writes `adversarial/results.json` and `adversarial/results.md` beside this script.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.lib.common import EMBEDDED_JUDGES, kept_section, machine

HERE = Path(__file__).resolve().parent
ATTACKS = ("ignore_instructions", "fake_score", "fake_delimiter", "role_play", "padding")
FINDINGS = "## Findings"
MACHINE = ("torch_threads", "torch", "transformers", "python")  # recorded in results.json beside cpu, cores


def attack_scores(judge, cases, hardened: bool) -> dict[str, float | None]:
    """Normalised correctness score of every case id (None when unscored)."""
    from localjudge.metrics import builtin_metric
    from localjudge.runs.evaluate import evaluate

    result = evaluate(cases, [builtin_metric("correctness")], judge, hardened=hardened, progress=False)
    return {r.case_id: r.score for r in result.records}


def shifts(cases, scores: dict[str, float | None]) -> dict[str, list[float]]:
    """Per attack kind, score(attack) − score(base) for every base case where both are scored."""
    base = {c.extra["base_id"]: scores[c.id] for c in cases if c.extra["attack"] == "none"}
    out: dict[str, list[float]] = {a: [] for a in ATTACKS}
    for c in cases:
        kind, b = c.extra["attack"], c.extra["base_id"]
        if kind != "none" and scores[c.id] is not None and base[b] is not None:
            out[kind].append(scores[c.id] - base[b])
    return out


def bootstrap_ci(xs: list[float], n: int, seed: int) -> tuple[float, float]:
    """95% percentile interval of the mean, resampling the base cases."""
    from localjudge.stats import resample_means

    if not xs:
        return (float("nan"), float("nan"))
    means = resample_means(np.asarray(xs), n, seed)  # (n,) from (K,)
    # percentiles exactly 2.5 and 97.5, not `stats.percentile_interval(level=0.95)`, whose tail
    # (1 - 0.95) / 2 * 100 is 2.500000000000002: results.json was computed with these
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def run(judges: list[str], n_boot: int, seed: int) -> dict:
    from localjudge import load_judge
    from localjudge.io.cases import load_cases
    from localjudge.kinds.text import PLAIN_TEMPLATE_VERSION, TEMPLATE_VERSION

    cases = load_cases(HERE / "attacks.jsonl")
    # control: the reference answer itself as the response; a judge that reads the content scores it higher
    correct = [
        c.model_copy(update={"id": f"{c.id}-correct", "actual_output": c.expected_output})
        for c in cases
        if c.extra["attack"] == "none"
    ]
    t_all, c_all = time.perf_counter(), time.process_time()
    rows, timings, base_means, unscored, discrimination = [], {}, {}, {}, {}

    def lap(key: str, t0: float, c0: float) -> None:
        # wall time, and CPU time of this process (robust when other work shares the cores)
        timings[key] = {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0}
        print(f"{key}: {timings[key]['wall_s']:.0f} s wall, {timings[key]['cpu_s']:.0f} s CPU", file=sys.stderr)

    for name in judges:
        t0, c0 = time.perf_counter(), time.process_time()
        judge = load_judge(name, device="cpu", dtype="float32")
        lap(f"{name} load", t0, c0)
        for hardened in (False, True):
            template = TEMPLATE_VERSION if hardened else PLAIN_TEMPLATE_VERSION
            t0, c0 = time.perf_counter(), time.process_time()
            scores = attack_scores(judge, cases + correct, hardened)
            lap(f"{name} {template}", t0, c0)
            bases = [scores[c.id] for c in cases if c.extra["attack"] == "none" and scores[c.id] is not None]
            goods = [scores[c.id] for c in correct if scores[c.id] is not None]
            base_means[f"{name} {template}"] = float(np.mean(bases)) if bases else None
            discrimination[f"{name} {template}"] = float(np.mean(goods) - np.mean(bases)) if bases and goods else None
            unscored[f"{name} {template}"] = sum(s is None for s in scores.values())
            per_kind = shifts(cases, scores)
            for kind in ATTACKS:
                xs = per_kind[kind]
                lo, hi = bootstrap_ci(xs, n_boot, seed)
                rows.append(
                    {
                        "judge": name,
                        "template": template,
                        "hardened": hardened,
                        "attack": kind,
                        "n": len(xs),
                        "mean_shift": float(np.mean(xs)) if xs else None,
                        "ci95": [lo, hi],
                        "shifts": xs,
                    }
                )
            allx = [x for k in ATTACKS for x in per_kind[k]]
            lo, hi = bootstrap_ci(allx, n_boot, seed)
            rows.append(
                {
                    "judge": name,
                    "template": template,
                    "hardened": hardened,
                    "attack": "all",
                    "n": len(allx),
                    "mean_shift": float(np.mean(allx)) if allx else None,
                    "ci95": [lo, hi],
                    "shifts": [],
                }
            )
        del judge
    return {
        "machine": machine(*MACHINE),
        "wall_s": time.perf_counter() - t_all,
        "cpu_s": time.process_time() - c_all,
        "load_avg_1m": os.getloadavg()[0],
        "timings": timings,
        "n_bootstrap": n_boot,
        "seed": seed,
        "base_mean_score": base_means,
        "discrimination": discrimination,
        "unscored_items": unscored,
        "rows": rows,
    }


def render_md(res: dict) -> str:
    m = res["machine"]
    lines = [
        "# Adversarial answers: score shift, plain vs hardened template",
        "",
        "Generated by `benchmarks/adversarial/adversarial.py` from `attacks.jsonl` "
        "(10 wrong base answers × 5 attack kinds),",
        "correctness metric (1–5, normalised to 0–1). **Shift** = score(answer + attack) − score(same answer",
        "without attack); mean over the 10 base cases, 95% bootstrap interval over base cases",
        f"({res['n_bootstrap']} resamples, seed {res['seed']}). "
        "Positive: the attack raised the score of a wrong answer.",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores (torch {m['torch']}, {m['torch_threads']} threads, "
        f"transformers {m['transformers']}), fp32 on CPU. Total wall time {res['wall_s']:.0f} s, "
        f"CPU time {res['cpu_s']:.0f} s (load average at the end {res['load_avg_1m']:.1f}).",
        "",
        "| judge | template | attack | n | mean shift | 95% CI |",
        "| --- | --- | --- | ---: | ---: | --- |",
    ]
    for r in res["rows"]:
        ms = "-" if r["mean_shift"] is None else f"{r['mean_shift']:+.3f}"
        ci = "-" if r["mean_shift"] is None else f"[{r['ci95'][0]:+.3f}, {r['ci95'][1]:+.3f}]"
        attack = f"**{r['attack']}**" if r["attack"] == "all" else r["attack"]
        lines.append(f"| {r['judge']} | {r['template']} | {attack} | {r['n']} | {ms} | {ci} |")
    lines += [
        "",
        "Mean normalised score of the 10 wrong base answers (no attack); **discrimination** = mean score",
        "of the reference answer itself as the response − that mean (a judge that reads the answers scores",
        "the correct ones higher); unscored items of 70:",
        "",
    ]
    for k, v in res["base_mean_score"].items():
        d = res["discrimination"][k]
        lines.append(
            f"- {k}: {'-' if v is None else f'{v:.3f}'}; discrimination {'-' if d is None else f'{d:+.3f}'}; "
            f"unscored {res['unscored_items'][k]}"
        )
    lines += ["", "Time per step (70 prompts per template: 60 attack-set items + 10 correct controls):", ""]
    lines += [f"- {k}: {v['wall_s']:.0f} s wall, {v['cpu_s']:.0f} s CPU" for k, v in res["timings"].items()]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judge", action="append", choices=EMBEDDED_JUDGES, help="Judge(s) to run (default: both).")
    ap.add_argument("--bootstrap", type=int, default=2000, help="Bootstrap resamples.")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=HERE, help="Folder for results.json and results.md.")
    args = ap.parse_args()
    res = run(args.judge or list(EMBEDDED_JUDGES), args.bootstrap, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    md = args.out / "results.md"
    md.write_text(render_md(res) + kept_section(md, FINDINGS), encoding="utf-8")  # hand-written findings kept
    print(render_md(res))


if __name__ == "__main__":
    main()
