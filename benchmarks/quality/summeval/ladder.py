"""The judge ladder on SummEval: every embedded judge, every scorer, one article at a time, resumable.

`summeval.py` runs a judge over the whole file in one go; on the larger judges that is hours on 2
cores, and a killed run keeps nothing. Here the unit of work is one (article, part), saved as it
completes to `ladder/summeval/<judge>-<dtype>.jsonl`; a rerun does only what is missing. Parts:

- `geval:<dim>`: the builtin G-Eval metric of the dimension through `evaluate`: the expected score,
  the argmax and the valid mass of every summary;
- `naive:<dim>`: greedy text after the same prompt without the "Score:" prefill, first number parsed
  (`summeval.naive_scores`; what most tools do);
- `likelihood`: the four `<dim>_likelihood` metrics with and without the article (ll-mean, ll-sum,
  ll-pmi; `summeval_likelihood.likelihood_scores`).

Each line also records the part's wall and process-CPU seconds and the tokens the judge read, so
the cost per judge comes from the same run. The report (`--report`) puts the judges side by side
on the articles every one of them has, smaller judges included from their full-file scores
(`summeval_scores/<judge>-float32.json`), and fits the hybrids on half of those articles.

Usage (from the repository root; hours for the 1.5B judge, so in the background):

    .venv/bin/python -m benchmarks.quality.summeval.ladder --judge qwen2.5-coder-1.5b --docs 25 \\
        --parts geval likelihood naive
    .venv/bin/python -m benchmarks.quality.summeval.ladder --report
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.lib.common import DIMENSIONS, SUMMEVAL_DATA, cell, kept_section, load_summeval, machine, rho_cell
from benchmarks.quality.summeval import summeval as SE
from benchmarks.quality.summeval import summeval_likelihood as LL

HERE = Path(__file__).resolve().parent

WORK = HERE / "ladder" / "summeval"
OUT_MD = HERE / "ladder" / "summeval_results.md"
OUT_JSON = HERE / "ladder" / "summeval_results.json"
LADDER = ("smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
PARTS = ("geval", "likelihood", "naive")


def work_file(judge: str, dtype: str) -> Path:
    return WORK / f"{judge}-{dtype}.jsonl"


def done_units(path: Path) -> dict[tuple[str, str], dict]:
    """(article, part) -> its saved line; a torn last line (a killed writer) is dropped."""
    out: dict[tuple[str, str], dict] = {}
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        out[(row["doc"], row["part"])] = row
    return out


def run_part(judge, part: str, cases) -> dict:
    """One part on one article's cases: per-item scores by scorer, and what it cost."""
    from localjudge.runs.evaluate import evaluate

    t0, c0 = time.perf_counter(), time.process_time()
    scores: dict[str, list] = {}
    tokens = 0
    if part.startswith("geval:"):
        metric = SE.summeval_metric(part.split(":", 1)[1])
        recs = evaluate(cases, [metric], judge, progress=False).records
        scores = {
            "expected": [r.raw_score for r in recs],
            "argmax": [None if r.mode is None else int(r.mode) for r in recs],
            "valid_mass": [r.valid_mass for r in recs],
        }
        tokens = sum(r.prompt_tokens or 0 for r in recs)
    elif part.startswith("naive:"):
        metric = SE.summeval_metric(part.split(":", 1)[1])
        parsed, raw = SE.naive_scores(judge, metric, cases)
        scores = {"naive": parsed, "text": raw}
    elif part == "likelihood":
        got, _ = LL.likelihood_scores(judge, cases)
        scores = {f"{s}:{d}": got[s][d] for s in LL.LL_SCORERS for d in DIMENSIONS}
    else:
        raise ValueError(part)
    return {
        "ids": [c.id for c in cases],
        "scores": scores,
        "tokens": tokens,
        "wall_s": round(time.perf_counter() - t0, 2),
        "cpu_s": round(time.process_time() - c0, 2),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
    }


def collect(judge_name: str, dtype: str, docs: int | None, parts: list[str], data: Path) -> None:
    """Runs every missing (article, part) of one judge, appending each as it completes."""
    from localjudge import load_judge

    cases = load_summeval(data, docs)
    articles = list(dict.fromkeys(c.extra["doc_id"] for c in cases))
    units = [p for p in parts if p == "likelihood"] + [
        f"{p}:{d}" for p in parts if p != "likelihood" for d in DIMENSIONS
    ]
    path = work_file(judge_name, dtype)
    path.parent.mkdir(parents=True, exist_ok=True)
    done = done_units(path)
    todo = [(a, u) for u in units for a in articles if (a, u) not in done]
    print(f"[{judge_name}] {len(todo)} of {len(units) * len(articles)} units to run", file=sys.stderr, flush=True)
    if not todo:
        return
    t0 = time.perf_counter()
    judge = load_judge(judge_name, device="cpu", dtype=dtype)
    print(f"[{judge_name}] loaded in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    by_doc = {a: [c for c in cases if c.extra["doc_id"] == a] for a in articles}
    with open(path, "a", encoding="utf-8") as out:
        for k, (doc, unit) in enumerate(todo, 1):
            row = {"doc": doc, "part": unit, "judge": judge_name, "dtype": dtype} | run_part(judge, unit, by_doc[doc])
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(f"[{judge_name}] {k}/{len(todo)} {unit} {doc[:20]} {row['wall_s']} s", file=sys.stderr, flush=True)


# -- report ------------------------------------------------------------------------------------


GROUPS = {
    "geval": ("expected", "argmax", "valid_mass"),
    "likelihood": LL.LL_SCORERS,
    "naive": ("naive",),
}
"""The scorers each kind of part produces; a report section covers the articles every judge read for it."""


def ladder_items(judge: str, dtype: str, ids: list[str]) -> dict[str, dict[str, list]]:
    """{scorer: {dim: per-item scores}} of a judge on `ids`, from the ladder's work file or the full-file scores.

    A scorer is left out unless every one of `ids` has it in every dimension.
    """
    path = work_file(judge, dtype)
    found: dict[str, dict[str, dict[str, object]]] = {}
    if path.exists():
        for row in done_units(path).values():
            for key, values in row["scores"].items():
                if key in ("text",):
                    continue
                if row["part"] == "likelihood":
                    scorer, dim = key.split(":")
                else:
                    scorer, dim = key, row["part"].split(":")[1]
                found.setdefault(scorer, {}).setdefault(dim, {}).update(zip(row["ids"], values))
    full = HERE / "summeval_scores" / f"{judge}-{dtype}.json"
    if full.exists():
        saved = json.loads(full.read_text())
        for scorer, dims in saved["items"].items():
            for dim, values in dims.items():
                found.setdefault(scorer, {}).setdefault(dim, {}).update(
                    {i: v for i, v in zip(saved["case_ids"], values) if i not in found.get(scorer, {}).get(dim, {})}
                )
    out = {}
    for scorer, dims in found.items():
        kept = {d: [v.get(i) for i in ids] for d, v in dims.items() if all(i in v for i in ids)}
        if len(kept) == len(DIMENSIONS):
            out[scorer] = kept
    return out


def _cover(judges: list[str], dtype: str, kind: str) -> set[str] | None:
    """Summaries every judge's ladder units of `kind` (geval, likelihood, naive) cover (None: no such units).

    A judge without ladder units of that kind counts by its full-file scores, which cover every summary.
    """
    cover = None
    for j in judges:
        path = work_file(j, dtype)
        if path.exists():
            rows = [r for r in done_units(path).values() if r["part"].split(":")[0] == kind]
            if rows:
                got = {i for row in rows for i in row["ids"]}
                cover = got if cover is None else cover & got
    return cover


def report(judges: list[str], dtype: str, data: Path) -> dict:
    """Each judge's agreement per scorer on the articles every judge covers for that kind of part, and hybrids.

    G-Eval, likelihood and the naive parse are run on as many articles as each costs (the larger
    judges read a stated subset), so each has its own section over the articles all judges read for
    it. A judge's hybrid is fitted on the articles where it has both its G-Eval and likelihood scores.
    """
    cases = load_summeval(data, None)
    res: dict = {"judges": {}, "sections": {}}
    for kind, scorers in GROUPS.items():
        cover = _cover(judges, dtype, kind)
        if cover is None:  # no ladder units of this kind: the full-file scores, where they have its scorers
            cover = set.intersection(*(_ids(j, dtype, kind) for j in judges)) if judges else set()
        sub = [c for c in cases if c.id in cover]
        res["sections"][kind] = {"articles": len({c.extra["doc_id"] for c in sub}), "summaries": len(sub)}
        ids, docs = [c.id for c in sub], [c.extra["doc_id"] for c in sub]
        human = {d: [c.extra[f"human_{d}"] for c in sub] for d in DIMENSIONS}
        for j in judges:
            items = ladder_items(j, dtype, ids)
            row = res["judges"].setdefault(j, {"dimensions": {}, "average": {}})
            for scorer in scorers:
                if scorer not in items or scorer == "valid_mass":
                    continue
                per = {d: SE.agreement(items[scorer][d], human[d], docs) for d in DIMENSIONS}
                row["dimensions"][scorer] = per | {"section": kind}
                row["average"][scorer] = SE._mean([per[d]["spearman"] for d in DIMENSIONS])
            if kind == "geval" and "valid_mass" in items:
                row["valid_mass"] = {
                    d: float(np.mean([v for v in items["valid_mass"][d] if v is not None])) for d in DIMENSIONS
                }
    # hybrids on the summaries where every judge that has both G-Eval and likelihood scores has both
    # (the same articles for each); a judge with only one kind so far has no hybrid, and is named
    fitted = [j for j in judges if _ids(j, dtype, "geval") & _ids(j, dtype, "likelihood")]
    read_both = {j: _ids(j, dtype, "geval") & _ids(j, dtype, "likelihood") for j in fitted}
    both = [c for c in cases if fitted and all(c.id in read_both[j] for j in fitted)]
    res["sections"]["hybrid"] = {
        "articles": len({c.extra["doc_id"] for c in both}),
        "summaries": len(both),
        "without": [j for j in judges if j not in fitted],
    }
    for j in judges:
        items = ladder_items(j, dtype, [c.id for c in both]) if j in fitted else {}
        row = res["judges"].setdefault(j, {"dimensions": {}, "average": {}})
        row["hybrid"] = LL.hybrids(items, both) if both and items else {}
        row["cost"] = cost(j, dtype)
    return res


_IDS: dict[tuple[str, str, str], set[str]] = {}


def _ids(judge: str, dtype: str, kind: str) -> set[str]:
    key = (judge, dtype, kind)
    if key not in _IDS:
        path = work_file(judge, dtype)
        rows = [r for r in done_units(path).values() if r["part"].split(":")[0] == kind] if path.exists() else []
        got = {i for row in rows for i in row["ids"]}
        full = HERE / "summeval_scores" / f"{judge}-{dtype}.json"
        if not rows and full.exists():
            saved = json.loads(full.read_text())
            if set(GROUPS[kind]) & set(saved["items"]):
                got = set(saved["case_ids"])
        _IDS[key] = got
    return _IDS[key]


def cost(judge: str, dtype: str) -> dict:
    """Seconds and summaries per part, summed over the ladder's saved units of this judge."""
    out: dict = {}
    for row in done_units(work_file(judge, dtype)).values():
        kind = row["part"].split(":")[0]
        acc = out.setdefault(kind, {"wall_s": 0.0, "cpu_s": 0.0, "items": 0, "peak_rss_mib": 0, "tokens": 0})
        acc["tokens"] += row.get("tokens") or 0
        acc["wall_s"] += row["wall_s"]
        acc["cpu_s"] += row["cpu_s"]
        acc["items"] += len(row["ids"])
        acc["peak_rss_mib"] = max(acc["peak_rss_mib"], row.get("peak_rss_mib", 0))
    return out


def render(res: dict) -> str:
    sec = res["sections"]
    lines = [
        "# The judge ladder on SummEval",
        "",
        "Made by `benchmarks/quality/summeval/ladder.py`; method in its docstring. "
        "Summary-level Spearman ρ (per article over its "
        "16 summaries, then averaged). Each kind of scorer is reported on the articles every judge below has "
        f"read for it: G-Eval (`expected`, `argmax`) on {sec['geval']['articles']} articles "
        f"({sec['geval']['summaries']} summaries), likelihood (`ll-*`) on {sec['likelihood']['articles']} "
        f"({sec['likelihood']['summaries']}), the naive parse on {sec['naive']['articles']} "
        f"({sec['naive']['summaries']}); hybrids on the {sec['hybrid']['articles']} articles where every judge that "
        "has both G-Eval and likelihood scores has them"
        + (
            f" ({', '.join(sec['hybrid']['without'])}: one kind only so far, no hybrid)"
            if sec["hybrid"]["without"]
            else ""
        )
        + ". A judge without a row for a scorer has not read those articles for it yet. The articles are the first "
        "of the dev file in its order; the smaller judges' figures on them come from their full-file runs.",
        "",
        "| judge | scorer | articles | " + " | ".join(d[:4] + " ρ" for d in DIMENSIONS) + " | avg ρ |",
        "|---|---|---|" + "---|" * (len(DIMENSIONS) + 1),
    ]
    for j, r in res["judges"].items():
        for s, per in r["dimensions"].items():
            n = sec[per["section"]]["articles"]
            lines.append(
                f"| {j} | {s} | {n} | "
                + " | ".join(rho_cell(per[d], n) for d in DIMENSIONS)
                + f" | {cell(r['average'][s])} |"
            )
    lines += [
        "",
        "(k of n): a ρ averaged over the k articles where it is defined; on the others the scorer gave all 16 "
        "summaries the same score (an argmax or a parsed digit often does) or the experts did.",
    ]
    lines += ["", "Valid mass (mean probability on the scale's scores) of the G-Eval prompts:", ""]
    lines += ["| judge | " + " | ".join(DIMENSIONS) + " |", "|---|" + "---|" * len(DIMENSIONS)]
    for j, r in res["judges"].items():
        if "valid_mass" in r:
            lines.append(f"| {j} | " + " | ".join(cell(r["valid_mass"][d]) for d in DIMENSIONS) + " |")
    for j, r in res["judges"].items():
        lines += [
            "",
            f"### {j}",
            "",
            *LL.render_hybrids(j, r.get("hybrid", {})),
        ]
    lines += ["", "Cost (summed over the saved units; wall time on a machine shared with other work):", ""]
    lines += [
        "| judge | part | summaries | wall s | CPU s | s per 100 | prompt tokens/s | peak RSS MiB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for j, r in res["judges"].items():
        for kind, c in r.get("cost", {}).items():
            per100 = 100 * c["wall_s"] / c["items"] if c["items"] else None
            # tokens are counted for G-Eval prompts (their records carry them); "–" where a part does not count
            rate = c.get("tokens", 0) / c["wall_s"] if c.get("tokens") and c["wall_s"] else None
            lines.append(
                f"| {j} | {kind} | {c['items']} | {c['wall_s']:.0f} | {c['cpu_s']:.0f} | {cell(per100, '{:.0f}')} "
                f"| {cell(rate, '{:.0f}')} | {c['peak_rss_mib']} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", nargs="+", default=list(LADDER))
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--docs", type=int, default=None, help="only the first N articles")
    ap.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS)
    ap.add_argument("--data", type=Path, default=SUMMEVAL_DATA)
    ap.add_argument("--report", action="store_true", help="only the report, from the saved units")
    args = ap.parse_args(argv)
    if not args.report:
        for j in args.judge:
            collect(j, args.dtype, args.docs, args.parts, args.data)
    res = report(list(LADDER), args.dtype, args.data) | {"machine": machine("torch_threads", "simd")}
    OUT_JSON.parent.mkdir(parents=True, exist_ok=True)
    OUT_JSON.write_text(json.dumps(res, indent=1) + "\n")
    OUT_MD.write_text(render(res) + kept_section(OUT_MD))
    print(render(res))


if __name__ == "__main__":
    main()
