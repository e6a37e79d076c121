"""SummEval consistency with token-level signals: the experts' ranking of an article's summaries, and a verdict.

Data: the 800 SummEval dev summaries (50 CNN/DailyMail articles × 16 systems) with the experts'
consistency score (mean of 3 ratings, 1–5). The scorers are those of `summedits.py`
(`_faithful_scores.py`), read under the same `consistency_likelihood` prompt; `ref` scorers are
relative to the article's reference summary read the same way.

Figures:

- agreement as G-Eval reports it (`shared/data/README.md`): Spearman ρ between a scorer and the
  experts over each article's 16 summaries, articles where either list is constant skipped, then
  averaged (`localjudge.stats.summary_level`); today's `consistency_likelihood` (ll:mean) is the
  baseline to beat;
- ρ over all 800 summaries at once (scores compared across articles, what a fixed threshold needs);
- a verdict as `calibrate fit-verdict --metrics ... --pass-at 4.5 --group doc_id` fits it (acceptable: the experts'
  mean is 4.5 or more, i.e. at most one expert took a point off): held-back accuracy and ECE.

Usage:

    # read, score, report:
    .venv/bin/python -m benchmarks.quality.faithfulness.summeval_tokens --judge smollm2-135m gemma3-270m
    .venv/bin/python -m benchmarks.quality.faithfulness.summeval_tokens --report

Per-item scores: `summeval_tokens_scores/tokens-<judge>.json.gz`; results: `summeval_tokens_results.md/.json`.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import numpy as np

from benchmarks.lib.common import EMBEDDED_JUDGES, cell, kept_section, machine
from benchmarks.lib.readings import READINGS, Store
from benchmarks.quality.faithfulness import _faithful_data as D
from benchmarks.quality.faithfulness._faithful_scores import all_scorers

HERE = Path(__file__).resolve().parent

SCORES = HERE / "summeval_tokens_scores"
OUT_MD = HERE / "summeval_tokens_results.md"
OUT_JSON = HERE / "summeval_tokens_results.json"
CONDITIONS = ("given", "nodoc", "reference", "lead", "lead_nodoc", "entail")
"""Readings per judge (the shuffled-document contrast is measured on SummEdits only: on SummEval its
800 readings cost another half hour of a shared 2-core machine and `ref`/`lead` already test a
cross-document contrast)."""
PASS_AT = 4.5
VERDICT_PARTS = ("pmi:wmin", "ll:mean")


def score(judges: list[str]) -> None:
    items = D.load_items("summeval")
    SCORES.mkdir(exist_ok=True)
    for j in judges:
        store = Store(READINGS / j / "summeval")
        data = {"judge": j, "timing": store.timing(), "scores": all_scorers(store, items)}
        with gzip.open(SCORES / f"tokens-{j}.json.gz", "wt", encoding="utf-8") as f:
            json.dump(data, f)


def figures(values: dict[str, float], items) -> dict:
    from localjudge.stats import correlations, summary_level

    its = [it for it in items if it.id in values]
    x = np.array([values[it.id] for it in its])
    y = np.array([it.label for it in its])
    g = np.array([it.doc_id for it in its])
    lvl = summary_level(x, y, g)
    return {
        "n": len(its),
        "rho": lvl.means.spearman,
        "tau": lvl.means.kendall_tau_b,
        "rho_all": correlations(x, y).spearman,
    }


def verdict(scores: dict, items) -> dict | None:
    from localjudge.calibration.options import CalibrationOptions
    from localjudge.calibration.verdict import fit_verdict_arrays

    parts = [p for p in VERDICT_PARTS if p in scores]
    if not parts:
        return None
    its = [it for it in items if all(it.id in scores[p] for p in parts)]
    x = np.array([[scores[p][it.id] for p in parts] for it in its])
    y = np.array([float(it.label >= PASS_AT) for it in its])
    g = np.array([it.doc_id for it in its])
    return fit_verdict_arrays(x, y, g, parts, CalibrationOptions(seed=0))[1].model_dump(mode="json")


def report() -> dict:
    items = D.load_items("summeval")
    res: dict = {"machine": machine("torch_threads", "torch", "transformers"), "judges": {}}
    for path in sorted(SCORES.glob("tokens-*.json.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
        scores = data["scores"]
        res["judges"][data["judge"]] = {
            "figures": {s: figures(v, items) for s, v in scores.items() if s != "entail_mass"},
            "verdict": verdict(scores, items),
            "timing": data["timing"],
        }
    return res


def render(res: dict) -> str:
    m = res["machine"]
    lines = [
        "# SummEval consistency: token-level signals of the embedded judges",
        "",
        "Made by `benchmarks/quality/faithfulness/summeval_tokens.py` (method in its docstring). Machine: "
        f"{m['cpu']}, {m['cores']} cores, shared with other jobs; {m.get('torch_threads')} torch thread(s), fp32.",
        "",
        "Command: `.venv/bin/python -m benchmarks.quality.faithfulness.summeval_tokens "
        "--judge smollm2-135m gemma3-270m`; `--report` rebuilds this from `summeval_tokens_scores/tokens-*.json.gz`.",
        "",
        "ρ = Spearman with the experts' consistency per article, averaged over articles (G-Eval's protocol; "
        "today's `consistency_likelihood` is `ll:mean`); ρ all = over the 800 summaries at once.",
        "",
    ]
    for judge, r in res["judges"].items():
        lines += [f"## {judge}", "", "| scorer | ρ | τ | ρ all | n |", "|---|---|---|---|---|"]
        for s, f in r["figures"].items():
            lines.append(f"| {s} | {cell(f['rho'])} | {cell(f['tau'])} | {cell(f['rho_all'])} | {f['n']} |")
        v = r.get("verdict")
        if v:
            h = v["held_out"]
            ci = h.get("accuracy_ci")
            lines += [
                "",
                f"Verdict (`calibrate fit-verdict --metrics {','.join(v['components'])} --human consistency "
                f"--pass-at {PASS_AT} "
                f"--group doc_id`): kept {v['chosen']}, pass at P(acceptable) ≥ {v['threshold']:.3f}; held back "
                f"{h['items']} summaries of {v['held_groups']} articles ({h['positive_rate']:.0%} acceptable): "
                f"accuracy {h['accuracy']:.3f}" + (f" (95% {ci[0]:.2f}–{ci[1]:.2f})" if ci else "") + ", balanced "
                f"accuracy {cell(h['balanced_accuracy'])}, AUC {cell(h['auc'])}, ECE {h['ece']:.3f}.",
            ]
        lines += ["", "Wall seconds per reading: " + ", ".join(f"{k} {v:.0f}" for k, v in r["timing"].items()), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", nargs="+", default=list(EMBEDDED_JUDGES))
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args(argv)
    if not args.report:
        from benchmarks.quality.faithfulness import faithful_collect

        for j in args.judge:
            faithful_collect.main(["--set", "summeval", "--judge", j, "--conditions", *CONDITIONS])
        score(args.judge)
    res = report()
    OUT_JSON.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    OUT_MD.write_text(render(res) + kept_section(OUT_MD), encoding="utf-8")
    print(render(res))


if __name__ == "__main__":
    main()
