"""Panels of the embedded judges on SummEval dev, beside each member and the length baseline.

The members' readings are the judge ladder's (`benchmarks/quality/summeval/ladder.py`): every
embedded judge's G-Eval expected score (the builtin G-Eval metrics, as the ladder read them) and its likelihood
scores of every summary of the first 25 dev articles, stored in `ladder/summeval/<judge>-float32.jsonl`
(the Qwen judges) and `summeval_scores/<judge>-float32.json` (the small judges' full-file runs).
`--verify N` reads the first N articles' consistency again with this code, every member through
`evaluate` and the members' records pooled by the panel's own `pool_metric`, and states the largest
difference from the stored readings and from their mean, so the figures below are this code's.

Panels pool the members' scores per summary with localjudge's own weightings (`localjudge.panel.weights`):
`mean`; `agreement` (learned without labels: each member's correlation with the others' mean);
`fitted` (non-negative least squares on the expert scores, as `calibrate panel-weights` fits
them), fitted on half the articles (alternate articles) and read on the other half, then swapped,
so no article is read by weights fitted on it. Agreement: Spearman ρ per article over its 16
summaries against the expert mean, averaged over articles. `longer`: the summary's length in
characters, no judge.

Likelihood panels pool the members' log-likelihood scores (`ll-sum`, `ll-mean`: the mean of the
members' log-probabilities is a product of experts); each member's scores are standardised over
the run first (their scales differ by tokenizer), for every weighting.

Usage (seconds without --verify; --verify 1 loads each judge once, about 5 minutes on 2 cores):

    .venv/bin/python -m benchmarks.quality.panel.panel_summeval --verify 1

Writes `panel_summeval_results.{md,json}` beside this script.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from benchmarks.lib.common import DIMENSIONS, SUMMEVAL_DATA, cell, host_load, kept_section, load_summeval, machine
from benchmarks.lib.summeval import agreement

HERE = Path(__file__).resolve().parent
LADDER = HERE.parents[1] / "quality" / "summeval" / "ladder" / "summeval"
FULL = HERE.parents[1] / "quality" / "summeval" / "summeval_scores"
OUT_MD = HERE / "panel_summeval_results.md"
OUT_JSON = HERE / "panel_summeval_results.json"
JUDGES = ("smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
PANELS = {
    "four judges": JUDGES,
    "Qwen 1.5B + 0.5B + SmolLM2": ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m"),
    "one per family (SmolLM2, Gemma, Qwen 1.5B)": ("smollm2-135m", "gemma3-270m", "qwen2.5-coder-1.5b"),
}
SCORERS = ("expected", "ll-sum", "ll-mean")
DOCS = 25


def stored(judge: str, scorer: str, ids: list[str]) -> dict[str, np.ndarray]:
    """{dimension: (n,) the judge's stored scores of the cases `ids`}, NaN where it left one unscored."""
    out: dict[str, dict[str, float]] = {d: {} for d in DIMENSIONS}
    ladder = LADDER / f"{judge}-float32.jsonl"
    rows = [json.loads(line) for line in ladder.read_text().splitlines()] if ladder.exists() else []
    for row in rows:
        part = row["part"]
        if scorer == "expected" and part.startswith("geval:"):
            dim = part.split(":", 1)[1]
            out[dim].update(zip(row["ids"], row["scores"]["expected"], strict=True))
        elif scorer != "expected" and part == "likelihood":
            for dim in DIMENSIONS:
                out[dim].update(zip(row["ids"], row["scores"][f"{scorer}:{dim}"], strict=True))
    full = FULL / f"{judge}-float32.json"
    if full.exists():
        data = json.loads(full.read_text())
        for dim in DIMENSIONS:
            for cid, v in zip(data["case_ids"], data["items"][scorer][dim], strict=True):
                out[dim].setdefault(cid, v)
    missing = [(d, i) for d in DIMENSIONS for i in ids if i not in out[d]]
    if missing:
        raise SystemExit(
            f"{judge}: no stored {scorer} for {len(missing)} readings (first {missing[0]}); run the ladder"
        )
    return {d: np.array([np.nan if out[d][i] is None else out[d][i] for i in ids], dtype=float) for d in DIMENSIONS}


def standardised(x: np.ndarray) -> np.ndarray:
    """(n,) x centred and scaled over its finite values (a likelihood member's scale is its tokenizer's)."""
    ok = np.isfinite(x)
    return (x - x[ok].mean()) / (x[ok].std() or 1.0)


def pooled(scores: np.ndarray, method: str, human: np.ndarray, halves: list[np.ndarray]) -> tuple[np.ndarray, list]:
    """(n,) the panel's scores and the weights used (one vector, or one per half for `fitted`)."""
    from localjudge.panel.weights import agreement_weights, fitted_weights, mean_weights, pool

    if method == "mean":
        w = mean_weights(scores).weights
        return pool(scores, w), [w.round(3).tolist()]
    if method == "agreement":
        w = agreement_weights(scores).weights
        return pool(scores, w), [w.round(3).tolist()]
    out = np.full(len(human), np.nan)
    used = []
    for fit_on, read_on in ((halves[0], halves[1]), (halves[1], halves[0])):
        w = fitted_weights(scores[fit_on], human[fit_on]).weights
        out[read_on] = pool(scores[read_on], w)
        used.append(w.round(3).tolist())
    return out, used


def study(cases) -> dict:
    ids = [c.id for c in cases]
    docs = [c.extra["doc_id"] for c in cases]
    order = list(dict.fromkeys(docs))
    half_a = np.array([order.index(d) % 2 == 0 for d in docs])  # alternate articles, as the tune study's halves
    halves = [half_a, ~half_a]
    rows: list[dict] = []
    length = np.array([len(c.actual_output or "") for c in cases], dtype=float)
    row = {"scorer": "longer", "what": "characters, no judge", "dims": {}}
    for dim in DIMENSIONS:
        human = np.array([c.extra[f"human_{dim}"] for c in cases])
        row["dims"][dim] = agreement(list(length), list(human), docs)
    rows.append(row)
    for scorer in SCORERS:
        members = {j: stored(j, scorer, ids) for j in JUDGES}
        for j in JUDGES:
            row = {"scorer": scorer, "what": j, "dims": {}}
            for dim in DIMENSIONS:
                human = [c.extra[f"human_{dim}"] for c in cases]
                s = members[j][dim]
                row["dims"][dim] = agreement([None if np.isnan(v) else float(v) for v in s], human, docs)
            rows.append(row)
        for name, panel in PANELS.items():
            for method in ("mean", "agreement", "fitted"):
                row = {"scorer": scorer, "what": f"{name}, {method}", "members": list(panel), "dims": {}, "weights": {}}
                spread = []
                for dim in DIMENSIONS:
                    human = np.array([c.extra[f"human_{dim}"] for c in cases], dtype=float)
                    cols = [members[j][dim] for j in panel]
                    if scorer != "expected":
                        cols = [standardised(c) for c in cols]
                    scores = np.stack(cols, axis=1)  # (n, M)
                    got, used = pooled(scores, method, human, halves)
                    row["dims"][dim] = agreement([None if np.isnan(v) else float(v) for v in got], list(human), docs)
                    row["weights"][dim] = used
                    if scorer == "expected":  # the members' spread on the 0-1 scale, as panel records state it
                        unit = (scores - 1.0) / 4.0
                        spread.append(float(np.nanmean(unit.max(axis=1) - unit.min(axis=1))))
                if spread:
                    row["mean_spread"] = float(np.mean(spread))
                rows.append(row)
    for row in rows:
        rhos = [row["dims"][d]["spearman"] for d in DIMENSIONS]
        row["average"] = None if any(r is None for r in rhos) else float(np.mean(rhos))
    return {"rows": rows, "articles": len(order), "summaries": len(cases)}


def verify(cases, articles: int) -> dict:
    """The first `articles` articles' consistency read again by every member, and pooled by the panel's code.

    Each member reads them through `evaluate` (as a panel member does, one judge in memory at a
    time); `localjudge.panel.pool.pool_metric` pools the fresh records as `evaluate_panel` does.
    """
    from localjudge import load_judge
    from localjudge.metrics import builtin_metric
    from localjudge.panel.pool import pool_metric
    from localjudge.runs.evaluate import evaluate

    docs = list(dict.fromkeys(c.extra["doc_id"] for c in cases))[:articles]
    sub = [c for c in cases if c.extra["doc_id"] in docs]
    ids = [c.id for c in sub]
    metric = builtin_metric("consistency")  # the ladder's summeval_metric("consistency"): the builtin
    out: dict = {"articles": articles, "summaries": len(sub), "members": {}}
    records = {}
    for j in JUDGES:
        t0 = time.perf_counter()
        judge = load_judge(j, device="cpu", dtype="float32")
        records[j] = evaluate(sub, [metric], judge, progress=False).records
        got = np.array([np.nan if r.raw_score is None else r.raw_score for r in records[j]], dtype=float)
        want = stored(j, "expected", ids)["consistency"]
        seconds = round(time.perf_counter() - t0, 1)
        out["members"][j] = {"max_abs_diff": float(np.nanmax(np.abs(got - want))), "seconds": seconds}
        del judge
    pooled_records, _ = pool_metric(records, "mean")
    fresh = np.array([np.nan if r.raw_score is None else r.raw_score for r in pooled_records], dtype=float)
    kept = np.stack([stored(j, "expected", ids)["consistency"] for j in JUDGES], axis=1).mean(axis=1)
    out["pooled_max_abs_diff"] = float(np.nanmax(np.abs(fresh - kept)))
    return out


def report(res: dict, args) -> str:
    m = res["machine"]
    lines = [
        "# Panels of the embedded judges on SummEval dev",
        "",
        f"Made by `python -m benchmarks.quality.panel.panel_summeval"
        f"{' --verify ' + str(args.verify) if args.verify else ''}` "
        f"on {m['cpu']} ({m['cores']} cores, torch {m['torch']}); {res.get('host', 'host load not recorded')}. "
        f"{res['articles']} articles, {res['summaries']} summaries (the first articles of the dev file, which every "
        "member's stored readings cover). Method in the script's docstring: Spearman ρ per article against the "
        "expert mean, averaged; `fitted` weights are fitted on one half of the articles and read on the other.",
        "",
    ]
    v = res.get("verify")
    if v:
        diffs = ", ".join(f"{j} {d['max_abs_diff']:.1e} ({d['seconds']:.0f} s)" for j, d in v["members"].items())
        lines += [
            f"Readings checked with this code: the first {v['articles']} article(s)' consistency ({v['summaries']} "
            f"summaries) read again by each member through `evaluate`, largest difference from the stored "
            f"expected score: {diffs}; the mean panel pooled from the fresh records by `pool_metric` differs from "
            f"the mean of the stored readings by at most {v['pooled_max_abs_diff']:.1e}.",
            "",
        ]
    lines += [
        "| scorer | judge or panel | coherence | consistency | fluency | relevance | average | mean spread (0-1) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in res["rows"]:
        lines.append(
            f"| {row['scorer']} | {row['what']} | "
            + " | ".join(cell(row["dims"][d]["spearman"]) for d in DIMENSIONS)
            + f" | {cell(row['average'])} | {cell(row.get('mean_spread'))} |"
        )
    best = {}
    for row in res["rows"]:
        if row["what"] in JUDGES and row["average"] is not None:
            best[row["scorer"]] = max(best.get(row["scorer"], -1.0), row["average"])
    lines += ["", "Best panel against its best member (average ρ):", ""]
    for scorer in SCORERS:
        panels = [r for r in res["rows"] if r["scorer"] == scorer and "members" in r and r["average"] is not None]
        top = max(panels, key=lambda r: r["average"])
        lines.append(
            f"- {scorer}: {top['what']} {top['average']:.3f} against the best member's {best[scorer]:.3f} "
            f"({top['average'] - best[scorer]:+.3f})."
        )
    lines += ["", "Weights per dimension (agreement: one vector; fitted: the two halves'):", ""]
    for row in res["rows"]:
        if "weights" in row and not row["what"].endswith(", mean"):
            w = "; ".join(f"{d[:4]} {row['weights'][d]}" for d in DIMENSIONS)
            lines.append(f"- {row['scorer']}, {row['what']} ({', '.join(row['members'])}): {w}")
    return "\n".join(lines) + "\n" + kept_section(OUT_MD)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--verify", type=int, default=0, help="Articles whose consistency is read again with this code.")
    args = ap.parse_args()
    load = os.getloadavg()
    cases = load_summeval(SUMMEVAL_DATA, DOCS)
    res = {"machine": machine("torch"), **study(cases)}
    if args.verify:
        res["verify"] = verify(cases, args.verify)
    res["host"] = host_load(load)
    OUT_JSON.write_text(json.dumps(res, indent=1) + "\n")
    OUT_MD.write_text(report(res, args))
    print(OUT_MD.read_text())


if __name__ == "__main__":
    main()
