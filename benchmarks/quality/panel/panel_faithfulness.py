"""Judges as a panel on faithfulness: the RAG pairs and SummEdits, beside each member and the length baseline.

- RAG pairs: `benchmarks/quality/faithfulness/rag_faithfulness/contrastive.jsonl`, 40 hand-written
  pairs of answers over the same passages, one faithful and one not. The builtin G-Eval
  `faithfulness` metric (expected score); figures: ROC AUC over the 80 answers, and pair accuracy
  (the faithful answer scored above its partner; a tie counts half).
- SummEdits: the first `--summedits-docs` documents of each of the five dev domains
  (`shared/data/summedits/`), the builtin `consistency_entailment` metric (P(yes)); figures: ROC
  AUC within each domain averaged over the five, and balanced accuracy leave-one-domain-out (the
  threshold fitted on the other four domains, applied to the fifth, averaged over the five).

Every member judges every case through `localjudge.evaluate_panel` (each member's run resumable
under `runs/`), and the panel pools the members' scores per case: `mean`, and `agreement`
(weights from each member's correlation with the others' mean, no labels). A case a member leaves
unscored is unscored for the panel. `longer` (no judge): the answer's length in characters as its
score.

`--summedits stored` reads no judge on SummEdits: it pools, with the same weightings
(`localjudge.panel.weights`), the `entail` readings (`consistency_entailment`, P(yes)) that the
faithfulness study stored (`benchmarks/quality/faithfulness/summedits_scores/`), on the summaries
every member read there (the Qwen judges read the first two documents of each domain); a judge with
no stored `entail` is named and left out.

    .venv/bin/python -m benchmarks.quality.panel.panel_faithfulness \\
        --judges smollm2-135m gemma3-270m qwen2.5-coder-0.5b qwen2.5-coder-1.5b --summedits-docs 2

Writes `panel_faithfulness_results.{md,json}` beside this script.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.lib import common
from benchmarks.lib.common import SHARED_DATA, cell, host_load, kept_section, machine

HERE = Path(__file__).resolve().parent
RAG_PAIRS = HERE.parents[1] / "quality" / "faithfulness" / "rag_faithfulness" / "contrastive.jsonl"
STORED = HERE.parents[1] / "quality" / "faithfulness" / "summedits_scores"
SUMMEDITS = SHARED_DATA / "summedits"
DOMAINS = ("ectsum", "qmsumm", "sales_call", "sales_email", "scitldr")
OUT_MD = HERE / "panel_faithfulness_results.md"
OUT_JSON = HERE / "panel_faithfulness_results.json"


def rag_cases():
    from localjudge.io.cases import load_cases

    return load_cases(RAG_PAIRS)


def summedits_cases(docs: int):
    """The summaries of the first `docs` documents of each domain (document as input, label 1 = consistent)."""
    from localjudge.io.cases import TestCase

    out = []
    for domain in DOMAINS:
        ids: dict[str, int] = {}
        for r in json.loads((SUMMEDITS / f"summedits_{domain}.json").read_text(encoding="utf-8")):
            if ids.setdefault(r["doc"], len(ids)) >= docs:
                continue
            extra = {"label": int(r["label"]), "domain": domain, "doc_id": f"{domain}/{ids[r['doc']]}"}
            out.append(TestCase(id=r["id"], input=r["doc"], actual_output=r["summary"], extra=extra))
    return out


def label(case) -> int:
    return int(case.extra["label"])


def rag_figures(cases, scores: list[float | None]) -> dict:
    """AUC over the answers and accuracy within pairs, over the pairs both of whose answers were scored."""
    from localjudge.stats.classification import roc_auc

    by_pair: dict[str, dict[int, float | None]] = {}
    for c, s in zip(cases, scores):
        by_pair.setdefault(c.extra["pair"], {})[label(c)] = s
    pairs = [p for p in by_pair.values() if p.get(0) is not None and p.get(1) is not None]
    hits = [0.5 if p[1] == p[0] else float(p[1] > p[0]) for p in pairs]
    ok = [(s, label(c)) for c, s in zip(cases, scores) if s is not None]
    return {
        "auc": roc_auc(np.array([s for s, _ in ok]), np.array([y for _, y in ok])) if ok else None,
        "pair_accuracy": float(np.mean(hits)) if hits else None,
        "scored": len(ok),
        "n": len(cases),
    }


def summedits_figures(cases, scores: list[float | None]) -> dict:
    """AUC within each domain averaged over the five (as the faithfulness study reports it), and balanced accuracy
    leave-one-domain-out (the threshold fitted on the other four)."""
    from localjudge.stats.classification import balanced_accuracy, best_threshold, roc_auc

    ok = [(s, label(c), c.extra["domain"]) for c, s in zip(cases, scores) if s is not None]
    x = np.array([s for s, _, _ in ok])
    y = np.array([v for _, v, _ in ok])
    dom = np.array([d for _, _, d in ok])
    per, aucs = {}, []
    for d in DOMAINS:
        train, test = dom != d, dom == d
        if test.sum() and len(np.unique(y[test])) == 2:
            aucs.append(roc_auc(x[test], y[test]))
        if test.sum() == 0 or len(np.unique(y[train])) < 2:
            per[d] = None
            continue
        per[d] = balanced_accuracy(x[test] >= best_threshold(x[train], y[train]), y[test])
    vals = [v for v in per.values() if v is not None]
    return {
        "auc": float(np.mean(aucs)) if aucs else None,
        "balanced_accuracy": float(np.mean(vals)) if vals else None,
        "per_domain": per,
        "scored": len(ok),
        "n": len(cases),
    }


def stored_panels(judge_names: list[str], panels: dict) -> dict:
    """SummEdits rows from the faithfulness study's stored `entail` readings, pooled as `evaluate_panel` pools."""
    import gzip

    from localjudge.panel.pool import choose_weights
    from localjudge.panel.weights import pool

    readings, missing = {}, []
    for j in judge_names:
        path = STORED / f"{j}.json.gz"
        entail = json.loads(gzip.open(path).read())["scores"].get("entail") if path.is_file() else None
        if entail:
            readings[j] = entail
        else:
            missing.append(j)
    cases = [c for c in summedits_cases(10**6) if all(c.id in r for r in readings.values())]
    rows: dict = {}
    for j, r in readings.items():
        rows[j] = summedits_figures(cases, [r[c.id] for c in cases])
    done: set[tuple[str, ...]] = set()
    for panel_name, members in panels.items():
        members = [m for m in members if m in readings]
        if len(members) < 2 or tuple(members) in done:  # e.g. "all" without the judge left out
            continue
        done.add(tuple(members))
        scores = np.array([[readings[m][c.id] for m in members] for c in cases])  # (n, M)
        for method in ("mean", "agreement"):
            chosen = choose_weights(scores, method)
            key = f"panel {panel_name} ({method})"
            rows[key] = summedits_figures(cases, [float(x) for x in pool(scores, chosen.weights)])
            rows[key]["weights"] = [float(w) for w in chosen.weights]
            rows[key]["members"] = members
    rows["longer (no judge)"] = summedits_figures(cases, [float(len(c.actual_output or "")) for c in cases])
    return {"rows": rows, "seconds": 0.0, "metric": "consistency_entailment (stored)", "left_out": missing}


SETS = {"rag_pairs": ("faithfulness", rag_figures), "summedits": ("consistency_entailment", summedits_figures)}


def run(
    judge_names: list[str], sets: list[str], summedits_docs: int, runs: Path, subpanels: dict, stored: bool
) -> dict:
    from localjudge.judges.loading import load_judge
    from localjudge.metrics import builtin_metric
    from localjudge.panel import PanelOptions, evaluate_panel, member_path

    tag = "+".join(judge_names)
    panels = {"all": judge_names, **subpanels}
    out: dict = {"judges": judge_names, "panels": panels, "summedits_docs": summedits_docs, "sets": {}}
    if stored and "summedits" in sets:
        out["sets"]["summedits"] = stored_panels(judge_names, panels)
        out["summedits_stored"] = True
        sets = [s for s in sets if s != "summedits"]
    judges = [load_judge(n) for n in judge_names] if sets else []
    for name in sets:
        cases = rag_cases() if name == "rag_pairs" else summedits_cases(summedits_docs)
        metric_name, figures = SETS[name]
        rows: dict = {}
        t0 = time.perf_counter()
        for panel_name, members in panels.items():
            path = runs / f"{name}_{'+'.join(members)}.jsonl"
            for j in members:  # a sub-panel's members were judged with the whole panel: their files are reused
                done, mine = member_path(runs / f"{name}_{tag}.jsonl", j), member_path(path, j)
                if panel_name != "all" and done.exists() and not mine.exists():
                    shutil.copyfile(done, mine)
            chosen = [judges[judge_names.index(j)] for j in members]
            for method in ("mean", "agreement"):
                res = evaluate_panel(
                    cases, [builtin_metric(metric_name)], chosen, PanelOptions(method=method),
                    out=path, resume=True, progress=False,
                )  # fmt: skip
                if method == "mean" and panel_name == "all":
                    for member, own in res.members.items():
                        rows[member] = figures(cases, [r.score for r in own.records])
                key = f"panel {panel_name} ({method})"
                rows[key] = figures(cases, [r.score for r in res.records])
                rows[key]["weights"] = [m.weight for m in res.summaries[0].members]
                rows[key]["members"] = list(members)
                rows[key]["disagreed"] = res.summaries[0].disagreed
        rows["longer (no judge)"] = figures(cases, [float(len(c.actual_output or "")) for c in cases])
        out["sets"][name] = {"rows": rows, "seconds": time.perf_counter() - t0, "metric": metric_name}
    return out


def write(result: dict) -> None:
    OUT_JSON.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    m = result["machine"]
    lines = [
        "# Judges as a panel on faithfulness: the RAG pairs and SummEdits",
        "",
        f"One run of `benchmarks/quality/panel/panel_faithfulness.py` on {m['cpu']}, {m['cores']} cores; "
        f"{result['host']}. Command: `{result['command']}`; seconds per set (members' readings already on disk "
        "in `runs/` are reused, not timed again): "
        + ", ".join(f"{k} {v['seconds']:.0f} s" for k, v in result["sets"].items())
        + ".",
        "",
        "Panels: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in result["panels"].items()) + ".",
        "",
    ]
    if "rag_pairs" in result["sets"]:
        lines += [
            "RAG pairs (40 hand-written pairs, G-Eval `faithfulness`, expected score): AUC over the 80 answers, "
            "pair accuracy = the faithful answer scored above its partner.",
            "",
            "| scorer | AUC | pair accuracy | scored / n | weights | members disagree |",
            "|---|---|---|---|---|---|",
        ]
        for scorer, r in result["sets"]["rag_pairs"]["rows"].items():
            weights = ", ".join(f"{w:.2f}" for w in r.get("weights", [])) or "–"
            lines.append(
                f"| {scorer} | {cell(r['auc'])} | {cell(r['pair_accuracy'])} | {r['scored']} / {r['n']} | "
                f"{weights} | {r.get('disagreed', '–')} |"
            )
        lines.append("")
    if "summedits" in result["sets"]:
        entry = result["sets"]["summedits"]
        which = (
            "the faithfulness study's stored `entail` readings (`benchmarks/quality/faithfulness/summedits_scores/`) "
            "of the summaries every member read there"
            + (f"; no stored reading, left out: {', '.join(entry['left_out'])}" if entry.get("left_out") else "")
            if result.get("summedits_stored")
            else f"the first {result['summedits_docs']} documents of each dev domain, judged in this run"
        )
        lines += [
            f"SummEdits ({which}; `consistency_entailment`, P(yes)): balanced accuracy (BA) "
            "with the threshold fitted on the other four domains, per held-out domain and averaged; AUC within each "
            "domain, averaged.",
            "",
            "| scorer | AUC | BA | " + " | ".join(f"BA {d}" for d in DOMAINS) + " | scored / n | weights |",
            "|---|---|---|" + "---|" * len(DOMAINS) + "---|---|",
        ]
        for scorer, r in result["sets"]["summedits"]["rows"].items():
            weights = ", ".join(f"{w:.2f}" for w in r.get("weights", [])) or "–"
            per = " | ".join(cell(r["per_domain"][d]) for d in DOMAINS)
            lines.append(
                f"| {scorer} | {cell(r['auc'])} | {cell(r['balanced_accuracy'])} | {per} | "
                f"{r['scored']} / {r['n']} | {weights} |"
            )
        lines.append("")
    OUT_MD.write_text("\n".join(lines) + kept_section(OUT_MD), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judges", nargs="+", default=["smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b"])
    parser.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS))
    parser.add_argument("--summedits-docs", type=int, default=2, help="First N documents of each SummEdits domain.")
    parser.add_argument(
        "--summedits", choices=["stored", "judge"], default="stored",
        help="SummEdits: pool the faithfulness study's stored readings, or judge the summaries again.",
    )  # fmt: skip
    parser.add_argument(
        "--subpanel", action="append", default=[], metavar="NAME=J1,J2",
        help="Also a panel of some of --judges (their readings reused); repeatable.",
    )  # fmt: skip
    args = parser.parse_args()
    subpanels = common.subpanels(parser, args.subpanel, args.judges)
    load = os.getloadavg()
    result = run(args.judges, args.sets, args.summedits_docs, HERE / "runs", subpanels, args.summedits == "stored")
    result["command"] = "python -m benchmarks.quality.panel.panel_faithfulness " + " ".join(sys.argv[1:])
    result["machine"] = machine("torch_threads")
    result["host"] = host_load(load)
    write(result)
    print(OUT_MD.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
