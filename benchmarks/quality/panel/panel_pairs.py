"""Judges as a panel on human-labelled pairs and on SummEval, beside each member and the length baseline.

Pairs: `shared/data/mtbench_human_pairs.json` and `llmbar_natural.json` (`{input, output_1, output_2,
label}`), the first N of each. Every member judges every pair with the builtin `pairwise` metric
(both presentation orders); the panel pools the members' P(output 1 better) before deciding
(`localjudge.evaluate_panel`): `mean`, and `agreement` (weights from each member's correlation with
the other members' mean, no labels). Accuracy = share of pairs where the preferred output is the one
people chose (an exact draw counts half; a pair a member leaves unscored is unscored for the panel
too and left out, its count reported), unless `--quorum N` asks for panels that pool the members
that scored a pair when they are N or more (their weights renormalised); the best member's accuracy
on the same pairs then covers the pairs it scored among them. `longer`: no judge, the longer
response (characters) wins.

SummEval (`--summeval-docs N`): the builtin G-Eval `consistency` metric on the first N articles'
summaries, summary-level Spearman ρ per article averaged, for each member and each panel.

Usage (under `nice`; the host may be shared: the results file says so):

    .venv/bin/python -m benchmarks.quality.panel.panel_pairs --judges smollm2-135m gemma3-270m qwen2.5-coder-0.5b \\
        --pairs 30 --summeval-docs 2

Writes `panel_results.{md,json}` beside this script and the runs' files under `runs/`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

from benchmarks.lib import common
from benchmarks.lib.common import (
    SHARED_DATA,
    SUMMEVAL_DATA,
    cell,
    host_load,
    kept_section,
    load_pairs,
    load_summeval,
    machine,
)
from benchmarks.lib.summeval import agreement

HERE = Path(__file__).resolve().parent
OUT_MD = HERE / "panel_results.md"
OUT_JSON = HERE / "panel_results.json"
SETS = {"mtbench": "mtbench_human_pairs.json", "llmbar_natural": "llmbar_natural.json"}


def pair_cases(name: str, n: int):
    return load_pairs(SHARED_DATA / SETS[name], name, n)


def accuracy(prefs: list[float | None], labels: list[int]) -> dict:
    """Share of scored pairs whose preferred output (P(1 better) vs 0.5) is the human's; draws count half."""
    hits = [
        (1.0 if (p > 0.5) == (y == 1) else 0.0) if p != 0.5 else 0.5 for p, y in zip(prefs, labels) if p is not None
    ]
    return {"accuracy": sum(hits) / len(hits) if hits else None, "scored": len(hits), "n": len(labels)}


def run(
    judge_names: list[str],
    n_pairs: int,
    summeval_docs: int,
    runs: Path,
    subpanels: dict,
    sets: list[str],
    quorums: tuple[int, ...] = (),
) -> dict:
    from localjudge import PanelOptions, evaluate_panel, load_judge
    from localjudge.metrics import builtin_metric
    from localjudge.panel.run import member_path

    runs.mkdir(parents=True, exist_ok=True)
    judges = [load_judge(n) for n in judge_names]
    tag = "+".join(judge_names)
    panels = {"all": judge_names, **subpanels}
    out: dict = {"judges": judge_names, "panels": panels, "pairs": n_pairs, "summeval_docs": summeval_docs, "sets": {}}
    out["quorums"] = list(quorums)
    for name in sets:
        cases = pair_cases(name, n_pairs)
        labels = [c.extra["label"] for c in cases]
        rows = {}
        t0 = time.perf_counter()
        for panel_name, members in panels.items():
            path = runs / f"{name}_{'+'.join(members)}.jsonl"
            for j in members:  # a sub-panel's members were judged with the whole panel: their files are reused
                done, mine = member_path(runs / f"{name}_{tag}.jsonl", j), member_path(path, j)
                if panel_name != "all" and done.exists() and not mine.exists():
                    shutil.copyfile(done, mine)
            chosen = [judges[judge_names.index(j)] for j in members]
            for quorum, method in [(None, m) for m in ("mean", "agreement")] + [
                (q, m) for q in quorums if q < len(members) for m in ("mean", "agreement")
            ]:
                res = evaluate_panel(
                    cases, [builtin_metric("pairwise")], chosen, PanelOptions(method=method, quorum=quorum),
                    out=path, resume=True, progress=False, truncate=True,  # members judged once
                )  # fmt: skip
                if method == "mean" and panel_name == "all" and quorum is None:
                    for member, own in res.members.items():
                        rows[member] = accuracy([r.score for r in own.records], labels)
                key = f"panel {panel_name} ({method}" + (f", quorum {quorum})" if quorum else ")")
                rows[key] = accuracy([r.score for r in res.records], labels)
                scored = [r.score is not None for r in res.records]
                rows[key]["members_same_pairs"] = {  # each member on exactly the pairs the panel scored
                    m: accuracy([r.score if k else None for r, k in zip(own.records, scored)], labels)["accuracy"]
                    for m, own in res.members.items()
                }
                rows[key]["weights"] = [m.weight for m in res.summaries[0].members]
                rows[key]["members"] = list(members)
                rows[key]["disagreed"] = res.summaries[0].disagreed
        longer = [1.0 if len(c.extra["output_1"]) > len(c.extra["output_2"]) else 0.0 for c in cases]
        rows["longer (no judge)"] = accuracy(longer, labels)
        out["sets"][name] = {"rows": rows, "seconds": time.perf_counter() - t0}
    if summeval_docs:
        cases = load_summeval(SUMMEVAL_DATA, summeval_docs)
        human = [c.extra["human_consistency"] for c in cases]
        docs = [c.extra["doc_id"] for c in cases]
        rows = {}
        for method in ("mean", "agreement"):
            res = evaluate_panel(
                cases, [builtin_metric("consistency")], judges, PanelOptions(method=method),
                out=runs / f"summeval_{tag}.jsonl", resume=True, progress=False,
            )  # fmt: skip
            if method == "mean":
                for member, own in res.members.items():
                    rows[member] = agreement([r.score for r in own.records], human, docs)
            rows[f"panel ({method})"] = agreement([r.score for r in res.records], human, docs)
            rows[f"panel ({method})"]["weights"] = [m.weight for m in res.summaries[0].members]
        out["summeval"] = rows
    return out


def write(result: dict) -> None:
    OUT_JSON.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    m = result["machine"]
    lines = [
        "# Judges as a panel, beside each member and the length baseline",
        "",
        f"Panel {', '.join(f'`{j}`' for j in result['judges'])}; one run of "
        f"`benchmarks/quality/panel/panel_pairs.py` on {m['cpu']}, {m['cores']} cores; {result['host']}.",
        "",
        f"Command: `{result.get('command', 'not recorded')}`; this run's seconds per set (members' readings "
        "already on disk in `runs/` are reused, not timed again): "
        + ", ".join(f"{k} {v['seconds']:.0f} s" for k, v in result["sets"].items())
        + ".",
        "",
        f"A SMALL subset: the first {result['pairs']} pairs of each set"
        + (f", the first {result['summeval_docs']} SummEval dev articles" if result["summeval_docs"] else "")
        + ". With this few pairs one pair moves accuracy by "
        f"{100 / max(result['pairs'], 1):.1f} points: differences of a few points are noise.",
        "",
        "Panels: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in result.get("panels", {}).items()) + ".",
        "",
        "| set | scorer | accuracy | scored / n | best member on the same pairs | weights | "
        "members disagree (spread > 0.3) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, entry in result["sets"].items():
        for scorer, r in entry["rows"].items():
            weights = ", ".join(f"{w:.2f}" for w in r.get("weights", [])) or "–"
            same = r.get("members_same_pairs") or {}
            best = max(same.items(), key=lambda kv: -1 if kv[1] is None else kv[1]) if same else None
            lines.append(
                f"| {name} | {scorer} | {cell(r['accuracy'])} | {r['scored']} / {r['n']} | "
                f"{f'{best[0]} {cell(best[1])}' if best else '–'} | {weights} | {r.get('disagreed', '–')} |"
            )
    if "summeval" in result:
        lines += ["", "SummEval consistency (G-Eval), summary-level ρ averaged over articles:", "",
                  "| scorer | summary ρ | summary τ | weights |", "|---|---|---|---|"]  # fmt: skip
        for scorer, r in result["summeval"].items():
            weights = ", ".join(f"{w:.2f}" for w in r.get("weights", [])) or "–"
            lines.append(f"| {scorer} | {cell(r['spearman'])} | {cell(r['kendall_tau_b'])} | {weights} |")
    OUT_MD.write_text("\n".join(lines) + "\n" + kept_section(OUT_MD), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judges", nargs="+", default=["smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b"])
    parser.add_argument("--pairs", type=int, default=30, help="First N pairs of each set.")
    parser.add_argument("--summeval-docs", type=int, default=0, help="First N SummEval dev articles (0: none).")
    parser.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS), help="Pair sets to read.")
    parser.add_argument(
        "--subpanel", action="append", default=[], metavar="NAME=J1,J2",
        help="Also a panel of some of --judges (their readings reused); repeatable.",
    )  # fmt: skip
    parser.add_argument(
        "--quorum", type=int, action="append", default=[], metavar="N",
        help="Also pool each panel with this quorum (members that must score a pair; fewer than all); repeatable.",
    )  # fmt: skip
    args = parser.parse_args()
    subpanels = common.subpanels(parser, args.subpanel, args.judges)
    load = os.getloadavg()
    t0 = time.perf_counter()
    result = run(args.judges, args.pairs, args.summeval_docs, HERE / "runs", subpanels, args.sets, tuple(args.quorum))
    result["command"] = "python -m benchmarks.quality.panel.panel_pairs " + " ".join(sys.argv[1:])
    result["machine"] = machine("torch_threads")
    result["host"] = host_load(load)
    result["total_seconds"] = time.perf_counter() - t0
    write(result)
    print(OUT_MD.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
