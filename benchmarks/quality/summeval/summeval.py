"""Agreement with human judgments on SummEval, computed as G-Eval (Liu et al., 2023) reports it.

For each judge and each of the four SummEval dimensions (coherence, consistency, fluency,
relevance; G-Eval prompts, scales 1–5 and fluency 1–3) these scorers are compared in one run:

- expected: the probability-weighted expected score over the score tokens (ours, G-Eval's "Probs");
- argmax: the most probable score of the same distribution (the paper's "−Probs" ablation);
- naive: greedy generation of a few tokens with no score prefill, parsing the first number in
  range (what most tools do). Parse failures are counted and excluded from the correlation;
- ll-mean, ll-sum, ll-pmi: likelihood judging, how likely the judge finds the summary itself
  after the article and an instruction naming the dimension (`summeval_likelihood.py`);
- hybrid: per dimension, the judge's expected score, ll-mean and ll-pmi combined, fitted on half
  of the articles and reported on the other half beside each part.

Agreement is summary-level: per article, Spearman ρ and Kendall τ-b (scipy) between the judge's
scores and the expert mean over its summaries; articles where either list is constant are
skipped; the remaining articles are averaged (`localjudge.stats.summary_level`).

Usage:
    .venv/bin/python -m benchmarks.quality.summeval.summeval --docs 5 --judge smollm2-135m --dtype bfloat16
    .venv/bin/python -m benchmarks.quality.summeval.summeval --data other.json --no-naive
    .venv/bin/python -m benchmarks.quality.summeval.summeval --judge gemma3-270m --no-geval   # likelihood only

Writes `summeval_results.json` and `summeval_results.md` beside this script, and every item's
scores to `summeval_scores/<judge>-<dtype>.json` (merged over runs on the same data, so a later
G-Eval run and an earlier likelihood run of a judge are combined into its hybrids).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.lib.common import (
    DIMENSIONS,
    EMBEDDED_JUDGES,
    SUMMEVAL_DATA,
    cell,
    kept_section,
    load_summeval,
    machine,
)
from benchmarks.lib.summeval import agreement
from benchmarks.quality.summeval import summeval_likelihood as LL

HERE = Path(__file__).resolve().parent
SCORERS = ("expected", "argmax", "naive", *LL.LL_SCORERS)
NAIVE_TOKENS = 6
PAPER_ROWS = {  # G-Eval Table 1, summary-level Spearman ρ averaged over the four dimensions
    "ROUGE-L": 0.165,
    "BERTScore": 0.225,
    "BARTScore": 0.385,
    "UniEval": 0.474,
    "G-Eval-3.5": 0.401,
    "G-Eval-3.5 −Probs": 0.346,
    "G-Eval-4": 0.514,
}
_NUMBER = re.compile(r"(?<![\d.])(\d+)(?:\.\d+)?")


def parse_first_number(text: str, low: int, high: int) -> int | None:
    """The first number in generated text if it is an integer score in low..high, else None.

    Examples:
        >>> parse_first_number(" 4/5", 1, 5), parse_first_number("four", 1, 5), parse_first_number("10", 1, 5)
        (4, None, None)
    """
    m = _NUMBER.search(text)
    if m is None or "." in m.group(0):
        return None
    value = int(m.group(1))
    return value if low <= value <= high else None


def naive_scores(judge, metric, cases, hardened: bool = True) -> tuple[list[int | None], list[str]]:
    """Greedy text after the same prompt without the "Score:" prefill; first number parsed.

    Generation computes each article's shared prompt prefix once, as the scorers do, so that the
    comparison is between methods, not between a batched and an unbatched implementation.
    """
    from localjudge.kinds.geval import prompts as P

    texts = [judge.render(P.SYSTEM, P.user_message(metric, list(metric.steps), c, hardened), "") for c in cases]
    outs = judge.generate(texts, NAIVE_TOKENS, share_prefix=True)
    return [parse_first_number(o, metric.low, metric.high) for o in outs], outs


def summeval_metric(dim: str, metrics_dir: str | Path | None = None, reasoning: str | None = None):
    """The G-Eval metric of a dimension: builtin, or `<metrics_dir>/<dim>.yaml`; reasoning mode overridden."""
    from localjudge.metrics import builtin_metric
    from localjudge.metrics.spec import load_metric_file

    metric = load_metric_file(Path(metrics_dir) / f"{dim}.yaml") if metrics_dir else builtin_metric(dim)
    return metric.model_copy(update={"reasoning": reasoning}) if reasoning else metric


def judge_one(
    judge,
    cases,
    *,
    naive: bool = True,
    geval: bool = True,
    likelihood: bool = True,
    chunk_size: int = 64,
    hardened: bool = True,
    metrics_dir: str | Path | None = None,
    reasoning: str | None = None,
) -> dict:
    """Scores, agreement and timing of one judge on every dimension; per-item scores under "items"."""
    from localjudge.runs.evaluate import evaluate

    docs = [c.extra["doc_id"] for c in cases]
    out: dict = {"dimensions": {d: {} for d in DIMENSIONS}, "seconds": {d: {} for d in DIMENSIONS}, "items": {}}
    items = out["items"]
    if likelihood:
        t0, c0 = time.perf_counter(), time.process_time()
        scores, passes = LL.likelihood_scores(judge, cases)
        out["seconds"]["likelihood"] = passes | {
            "cpu": round(time.process_time() - c0, 1),
            "wall": round(time.perf_counter() - t0, 1),
        }
        items.update(scores)
        for dim in DIMENSIONS:
            human = [c.extra[f"human_{dim}"] for c in cases]
            for s in LL.LL_SCORERS:
                out["dimensions"][dim][s] = agreement(scores[s][dim], human, docs)
    for dim in DIMENSIONS if geval else ():
        metric = summeval_metric(dim, metrics_dir, reasoning)
        human = [c.extra[f"human_{dim}"] for c in cases]
        t0, c0 = time.perf_counter(), time.process_time()
        recs = evaluate(cases, [metric], judge, chunk_size=chunk_size, progress=False, hardened=hardened).records
        t_dist, c_dist = time.perf_counter() - t0, time.process_time() - c0
        scores = {
            "expected": [r.raw_score for r in recs],
            "argmax": [None if r.mode is None else int(r.mode) for r in recs],
        }
        row = {s: agreement(v, human, docs) for s, v in scores.items()}
        for s, v in scores.items():
            items.setdefault(s, {})[dim] = v
        # wall and CPU seconds: CPU time is the fairer cost on a machine shared with other jobs
        out["seconds"][dim] = {"distribution": round(t_dist, 1), "distribution_cpu": round(c_dist, 1)}
        if naive:
            t0, c0 = time.perf_counter(), time.process_time()
            parsed, raw = naive_scores(judge, metric, cases, hardened)
            out["seconds"][dim] |= {
                "naive": round(time.perf_counter() - t0, 1),
                "naive_cpu": round(time.process_time() - c0, 1),
            }
            row["naive"] = agreement(parsed, human, docs) | {"examples": raw[:3]}
            items.setdefault("naive", {})[dim] = parsed
        out["dimensions"][dim] |= row
    for dim in DIMENSIONS:
        print(
            f"[{judge.info.name}] {dim}: {out['seconds'].get(dim)} s, "
            + ", ".join(f"{k} ρ={cell(v['spearman'])}" for k, v in out["dimensions"][dim].items()),
            file=sys.stderr,
            flush=True,
        )
    out["average"] = {
        s: {k: _mean([out["dimensions"][d][s][k] for d in DIMENSIONS]) for k in ("spearman", "kendall_tau_b")}
        for s in SCORERS
        if s in out["dimensions"][DIMENSIONS[0]]
    }
    return out


def _mean(xs: list[float | None]) -> float | None:
    # the paper averages all four dimensions; a partial average would not be comparable
    return None if any(x is None for x in xs) else float(np.mean(xs))


def run(
    judges: dict,
    data: str | Path,
    docs: int | None,
    *,
    naive: bool = True,
    geval: bool = True,
    likelihood: bool = True,
    chunk_size: int = 64,
    hardened: bool = True,
    metrics_dir: str | Path | None = None,
    reasoning: str | None = None,
    scores_dir: Path | None = None,
) -> dict:
    """Every judge (name -> loaded `Judge`) on the first `docs` articles of a SummEval-schema file.

    With `scores_dir`, every item's scores are merged into `<judge>-<dtype>.json` there and the
    hybrids use all scorers that file holds for the same items.
    """
    from localjudge.kinds.text import PLAIN_TEMPLATE_VERSION, TEMPLATE_VERSION

    cases = load_summeval(data, docs)
    res = {
        "data": str(data),
        "articles": len({c.extra["doc_id"] for c in cases}),
        "summaries": len(cases),
        "template": TEMPLATE_VERSION if hardened else PLAIN_TEMPLATE_VERSION,
        "metrics": str(metrics_dir) if metrics_dir else "builtin",
        "reasoning": reasoning or "none",
        "judges": {},
    }
    for name, judge in judges.items():
        t0, c0 = time.perf_counter(), time.process_time()
        r = judge_one(
            judge,
            cases,
            naive=naive,
            geval=geval,
            likelihood=likelihood,
            chunk_size=chunk_size,
            hardened=hardened,
            metrics_dir=metrics_dir,
            reasoning=reasoning,
        )
        r["judge"] = judge.info.model_dump()
        r["wall_s"] = round(time.perf_counter() - t0, 1)
        r["cpu_s"] = round(time.process_time() - c0, 1)
        items = r.pop("items")
        if scores_dir is not None:
            items = merge_scores(scores_dir / f"{name}-{judge.info.dtype}.json", data, cases, items)
        r["hybrid"] = LL.hybrids(items, cases)
        res["judges"][name] = r
    return res


def merge_scores(path: Path, data, cases, items: dict) -> dict:
    """This run's per-item scores merged into the judge's scores file (same data, same items)."""
    ids = [c.id for c in cases]
    old = json.loads(path.read_text()) if path.exists() else {}
    merged = dict(old.get("items", {})) if old.get("case_ids") == ids else {}
    for scorer, dims in items.items():
        merged[scorer] = {**merged.get(scorer, {}), **dims}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"data": Path(data).name, "case_ids": ids, "items": merged}) + "\n")
    return merged


def refit_hybrids(res: dict, scores_dir: Path) -> None:
    """A run's hybrids fitted again from the judges' saved per-item scores (no model runs)."""
    cases = None
    for name, r in res["judges"].items():
        path = scores_dir / f"{name}-{r['judge']['dtype']}.json"
        if "hybrid" not in r or not path.exists():  # runs from before per-item scores were kept
            continue
        saved = json.loads(path.read_text())
        if cases is None:
            cases = load_summeval(res["data"], None)
            cases = [c for c in cases if c.id in set(saved["case_ids"])]
        if [c.id for c in cases] == saved["case_ids"] and len(cases) == res["summaries"]:
            r["hybrid"] = LL.hybrids(saved["items"], cases)


def render_md(res: dict) -> str:
    """The results as a markdown table beside the paper's reference rows."""
    lines = [
        f"### {', '.join(res['judges'])} — {res['articles']} articles, dtype {res.get('dtype', '?')}, template "
        f"{res.get('template', '?')}, metrics {res.get('metrics', 'builtin')}, "
        f"reasoning {res.get('reasoning', 'none')}",
        "",
        f"Summary-level agreement on {res['articles']} SummEval articles ({res['summaries']} summaries) "
        f"of `{Path(res['data']).name}`. ρ = Spearman, τ = Kendall τ-b, per article then averaged. "
        f"Machine: {res.get('machine', {}).get('cpu', '?')}, {res.get('machine', {}).get('cores', '?')} cores.",
        "",
        "| scorer | "
        + " | ".join(f"{d[:4]} ρ | {d[:4]} τ" for d in DIMENSIONS)
        + " | avg ρ | avg τ | unscored | articles used |",
        "|---|" + "---|" * (2 * len(DIMENSIONS) + 4),
    ]
    for name, r in res["judges"].items():
        for s in SCORERS:
            if any(s not in r["dimensions"][d] for d in DIMENSIONS):
                continue
            cells = []
            for d in DIMENSIONS:
                a = r["dimensions"][d][s]
                cells += [cell(a["spearman"]), cell(a["kendall_tau_b"])]
            miss = sum(r["dimensions"][d][s]["unscored"] for d in DIMENSIONS)
            avg = r["average"][s]
            used = "/".join(str(r["dimensions"][d][s]["articles_used"]) for d in DIMENSIONS)
            lines.append(
                f"| {name} ({r['judge']['dtype']}) {s} | "
                + " | ".join(cells)
                + f" | {cell(avg['spearman'])} | {cell(avg['kendall_tau_b'])} | {miss} | {used} |"
            )
    hybrid_lines = [line for name, r in res["judges"].items() for line in LL.render_hybrids(name, r.get("hybrid", {}))]
    for k, v in PAPER_ROWS.items():
        lines.append(f"| *paper: {k}* | " + " | ".join(["", ""] * len(DIMENSIONS)) + f" | {v:.3f} | | | |")
    lines += [
        "",
        "– = undefined: every article skipped (the judge's list constant, or under 3 scored "
        "summaries). unscored = items without a score (naive: parse failures), summed over dimensions. "
        "articles used = articles with a defined correlation per dimension (coherence/consistency/"
        "fluency/relevance); the others are skipped, as in the paper.",
        "",
        *hybrid_lines,
    ]
    for name, r in res["judges"].items():
        lines.append(
            f"- {name}: wall {r['wall_s']} s, CPU {r['cpu_s']} s (shared machine); "
            f"per dimension {json.dumps(r['seconds'])}"
        )
    return "\n".join(lines) + "\n"


HEADER = (
    "# SummEval agreement with expert judgments\n\n"
    "Made by `benchmarks/quality/summeval/summeval.py`; method in its docstring.\n\n"
)


def write_results(out: str, runs: list[dict], scores_dir: Path) -> None:
    """`<out>.json` and `<out>.md`: the runs, the hybrids over saved scores, the hand-written notes kept."""
    saved, cases = saved_scores(scores_dir, runs)
    cross = cross_judge(saved, cases)
    lexical = with_rouge(saved, cases)
    doc = {"runs": runs} | ({"cross_judge": cross} if cross else {}) | ({"with_rouge_l": lexical} if lexical else {})
    Path(out + ".json").write_text(json.dumps(doc, indent=1) + "\n")
    extra = []
    if cross:
        extra += ["### Both embedded judges together", "", *LL.render_hybrids("", cross["hybrid"])]
    if lexical:
        extra += [
            "### With ROUGE-L as a part (ROUGE-L F1 against the reference summary, the `rouge_l` metric; "
            "`calibrate fit-hybrid --metrics <dim>_likelihood,rouge_l` fits the same hybrid)",
            "",
        ]
        extra += [line for name, h in lexical.items() for line in LL.render_hybrids(name, h)]
    md = HEADER + "\n".join(render_md(r) for r in runs) + ("\n".join(extra) + "\n" if extra else "")
    Path(out + ".md").write_text(md + kept_section(Path(out + ".md")))


def saved_scores(scores_dir: Path, runs: list[dict]) -> tuple[dict[str, dict], list]:
    """Each judge's saved per-item scores over the full data file of the latest full run, with its cases.

    Only judges whose scores file holds every summary of that file count; ({}, []) when there is none.
    """
    full = [r for r in runs if "hybrid" in next(iter(r["judges"].values()))]
    if not full:
        return {}, []
    data = full[-1]["data"]
    saved = {}
    for r in full:
        for name, j in r["judges"].items():
            path = scores_dir / f"{name}-{j['judge']['dtype']}.json"
            scores = json.loads(path.read_text()) if path.exists() and r["data"] == data else None
            if scores is not None and r["summaries"] == len(scores["case_ids"]):
                saved[name] = scores
    if len({tuple(v["case_ids"]) for v in saved.values()}) != 1:
        return {}, []
    ids = next(iter(saved.values()))["case_ids"]
    cases = [c for c in load_summeval(data, None) if c.id in set(ids)]
    return (saved, cases) if [c.id for c in cases] == ids else ({}, [])


def cross_judge(saved: dict[str, dict], cases: list) -> dict | None:
    """The hybrid of every judge's ll-mean on the same items, fitted as the per-judge hybrids are.

    A question the per-judge hybrids cannot answer: do two small judges of different families
    rank summaries better together than either alone?
    """
    items = {f"{name} ll-mean": v["items"]["ll-mean"] for name, v in saved.items() if "ll-mean" in v["items"]}
    if len(items) < 2:
        return None
    return {"judges": sorted(saved), "hybrid": LL.hybrids(items, cases, parts=list(items))}


def with_rouge(saved: dict[str, dict], cases: list) -> dict[str, dict]:
    """Per judge: the hybrid of its ll-mean and ROUGE-L against the reference (`rouge_l`), a signal of another kind.

    The judges' own scorers read the same thing (their ll-means correlate at ~0.9 within an
    article), so combining them cannot gain much; reference overlap is a different reading.
    """
    from localjudge.lexical import rouge_l

    if not cases or not all(c.extra.get("reference") for c in cases):
        return {}
    rouge = [rouge_l(c.actual_output, c.extra["reference"]) for c in cases]
    return {
        name: LL.hybrids(
            {"ll-mean": v["items"]["ll-mean"], "rouge-l": {d: rouge for d in DIMENSIONS}},
            cases,
            parts=["ll-mean", "rouge-l"],
        )
        for name, v in saved.items()
        if "ll-mean" in v["items"]
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(SUMMEVAL_DATA), help="a file of the summeval_dev.json schema")
    ap.add_argument("--docs", type=int, default=None, help="only the first N articles")
    ap.add_argument("--judge", action="append", help=f"judge name (repeatable; default {', '.join(EMBEDDED_JUDGES)})")
    ap.add_argument("--dtype", default="float32", help="compute dtype (float32, bfloat16)")
    ap.add_argument("--chunk-size", type=int, default=64, help="cases per scoring call")
    ap.add_argument("--no-naive", action="store_true", help="skip the naive generate-and-parse judge")
    ap.add_argument("--no-geval", action="store_true", help="skip the G-Eval scorers (expected, argmax, naive)")
    ap.add_argument("--no-likelihood", action="store_true", help="skip the likelihood scorers")
    ap.add_argument("--plain", action="store_true", help="the plain prompt template (content unfenced)")
    ap.add_argument("--metrics-dir", help="a folder of coherence/consistency/fluency/relevance.yaml to use instead")
    ap.add_argument("--reasoning", choices=["none", "before", "after"], help="override the metrics' reasoning mode")
    ap.add_argument("--append", action="store_true", help="keep earlier runs in the results files")
    ap.add_argument("--out", default=str(HERE / "summeval_results"), help="output path without extension")
    ap.add_argument("--report", action="store_true", help="only rebuild the markdown from the JSON")
    args = ap.parse_args()
    if args.report:
        runs = json.loads(Path(args.out + ".json").read_text())["runs"]
        for r in runs:
            refit_hybrids(r, HERE / "summeval_scores")
        write_results(args.out, runs, HERE / "summeval_scores")
        return
    from localjudge import load_judge

    t0 = time.perf_counter()
    judges = {n: load_judge(n, device="cpu", dtype=args.dtype) for n in (args.judge or EMBEDDED_JUDGES)}
    load_s = time.perf_counter() - t0
    res = run(
        judges,
        args.data,
        args.docs,
        naive=not args.no_naive,
        geval=not args.no_geval,
        likelihood=not args.no_likelihood,
        chunk_size=args.chunk_size,
        hardened=not args.plain,
        metrics_dir=args.metrics_dir,
        reasoning=args.reasoning,
        scores_dir=HERE / "summeval_scores",
    )
    res |= {"machine": machine("torch_threads", "torch"), "dtype": args.dtype, "load_s": round(load_s, 1)}
    runs = [res]
    if args.append and Path(args.out + ".json").exists():
        runs = json.loads(Path(args.out + ".json").read_text())["runs"] + runs
    write_results(args.out, runs, HERE / "summeval_scores")
    print(render_md(res))


if __name__ == "__main__":
    main()
