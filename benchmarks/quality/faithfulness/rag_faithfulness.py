"""RAG faithfulness: which scorers of the embedded judges tell supported answers from unsupported ones.

Three sets, each with labels a person gave or that hold by construction:

- `demo`: the 10 bundled RAG answers (`localjudge/examples/rag_demo.jsonl`). Three contradict
  their passages (rag-03 Berlin Wall in 1991, rag-09 Everest in the Karakoram, rag-10 light at
  300,000 m/s); five are correct; rag-05 (a hallucinated detail) and rag-07 (answers another
  question) are flawed in other ways and left out of the separation figures.
- `contrastive`: 40 hand-written pairs (`rag_faithfulness/contrastive.jsonl`, built as its README
  says): the same question and passages with a faithful answer and one whose single claim is
  contradicted by, or absent from, the passages, of matched length.
- `summeval`: the 800 SummEval dev summaries as grounded answers (the article is the retrieved
  passage, the question "Summarize the news article."), against the experts' consistency scores:
  real human labels of faithfulness to a source.

Scorers (all from `localjudge eval` records): the G-Eval `faithfulness` and `correctness` expected
scores; `likelihood` (mean log-probability of the answer given passages and question) and its
least likely token; `faithfulness_pmi` (mean PMI of answer and passages) and its smallest
per-token PMI; `correctness_pmi` (mean PMI of answer and the reference answer, a likelihood
reading of correctness).

Figures: AUROC (probability that a faithful answer outscores an unfaithful one; 0.5 = chance),
pairwise accuracy within contrastive pairs, summary-level Spearman ρ against the experts.

    .venv/bin/python -m benchmarks.quality.faithfulness.rag_faithfulness --sets demo contrastive --judge smollm2-135m
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.lib.common import EMBEDDED_JUDGES, SUMMEVAL_DATA, cell, kept_section, load_summeval, machine

HERE = Path(__file__).resolve().parent
OUT = HERE / "rag_faithfulness"

WRONG = {"rag-03", "rag-09", "rag-10"}
RIGHT = {"rag-01", "rag-02", "rag-04", "rag-06", "rag-08"}
QUESTION = "Summarize the news article."


def correctness_pmi():
    """Mean PMI of the answer and the reference answer, given the question."""
    from localjudge.metrics.spec import metric_from_dict

    return metric_from_dict(
        {
            "kind": "likelihood",
            "name": "correctness_pmi",
            "instruction": "Answer the question; the reference answer above is correct.",
            "fields": ["expected_output", "input"],
            "required": ["expected_output", "input", "actual_output"],
            "field_labels": {"expected_output": "Reference answer", "input": "Question"},
            "target_label": "Answer",
            "pmi": {"without": ["expected_output"], "instruction": "Answer the question."},
        }
    )


def metrics(set_name: str):
    from localjudge.metrics import builtin_metric

    names = ["likelihood", "faithfulness_pmi", "faithfulness"]
    out = [builtin_metric(n) for n in names]
    return out + ([builtin_metric("correctness"), correctness_pmi()] if set_name != "summeval" else [])


def load(set_name: str, docs: int | None):
    from localjudge.io.cases import TestCase, load_cases

    if set_name == "demo":
        import localjudge

        cases = load_cases(Path(localjudge.__path__[0]) / "examples" / "rag_demo.jsonl")
        labels = {c.id: 1 if c.id in RIGHT else 0 for c in cases if c.id in RIGHT | WRONG}
        return cases, labels, None
    if set_name == "contrastive":
        cases = load_cases(OUT / "contrastive.jsonl")
        return cases, {c.id: c.extra["label"] for c in cases}, [c.extra["pair"] for c in cases]
    rows = load_summeval(SUMMEVAL_DATA, docs)
    cases = [
        TestCase(id=c.id, input=QUESTION, retrieval_context=[c.input], actual_output=c.actual_output, extra=c.extra)
        for c in rows
    ]
    return cases, {c.id: c.extra["human_consistency"] for c in cases}, [c.extra["doc_id"] for c in cases]


def scorer_values(records) -> dict[str, dict[str, float | None]]:
    """{scorer: {case id: value}}; higher should mean more faithful."""
    out: dict[str, dict[str, float | None]] = {}
    for r in records:
        if r.kind == "likelihood":
            d = r.detail if r.score is not None else None  # unscored: no value, as before
            out.setdefault(r.metric, {})[r.case_id] = r.raw_score
            key, value = (
                (f"{r.metric} min-token-pmi", d.pmi_min)
                if d is not None and d.pmi_min is not None
                else (f"{r.metric} min-token", d.given_source.min if d is not None else None)
            )
            out.setdefault(key, {})[r.case_id] = value
        else:
            out.setdefault(r.metric, {})[r.case_id] = r.raw_score
    return out


def _fields(metric) -> list[str]:
    """Fields a metric reads (the contrastive set has no reference answers)."""
    return [*metric.fields, getattr(metric, "target", "actual_output")]


def auroc(good: list[float], bad: list[float]) -> float | None:
    """P(a good item outscores a bad one), ties counting half."""
    if not good or not bad:
        return None
    wins = sum((g > b) + 0.5 * (g == b) for g in good for b in bad)
    return wins / (len(good) * len(bad))


def figures(values: dict[str, float | None], labels: dict, pairs: list | None, cases, set_name: str) -> dict:
    from localjudge.stats import summary_level

    ids = [c.id for c in cases if c.id in labels and values.get(c.id) is not None]
    out: dict = {"n": len(ids)}
    if set_name == "summeval":
        x = np.array([values[i] for i in ids])
        y = np.array([labels[i] for i in ids])
        g = np.array([c.extra["doc_id"] for c in cases if c.id in set(ids)])
        out["spearman"] = summary_level(x, y, g).means.spearman
        out["auroc_all5_vs_rest"] = auroc(
            [values[i] for i in ids if labels[i] >= 5], [values[i] for i in ids if labels[i] < 5]
        )
        return out
    good = [values[i] for i in ids if labels[i] == 1]
    bad = [values[i] for i in ids if labels[i] == 0]
    out["auroc"] = auroc(good, bad)
    out["gap"] = min(good) - max(bad) if good and bad else None  # > 0: every unfaithful answer below every faithful one
    if pairs is not None:
        by_pair: dict = {}
        for c, p in zip(cases, pairs):
            if c.id in ids:
                by_pair.setdefault(p, {})[labels[c.id]] = values[c.id]
        wins = [(v[1] > v[0]) + 0.5 * (v[1] == v[0]) for v in by_pair.values() if len(v) == 2]
        out["pair_accuracy"] = float(np.mean(wins)) if wins else None
        kinds = {c.extra.get("kind") for c in cases} - {"faithful", None}
        for kind in sorted(kinds):
            kp = {c.extra["pair"] for c in cases if c.extra.get("kind") == kind}
            kw = [(v[1] > v[0]) + 0.5 * (v[1] == v[0]) for p, v in by_pair.items() if p in kp and len(v) == 2]
            out[f"pair_accuracy_{kind}"] = float(np.mean(kw)) if kw else None
    else:
        out["values"] = {i: values[i] for i in ids}
    return out


def run_set(judge, set_name: str, docs: int | None) -> dict:
    from localjudge.runs.evaluate import evaluate

    cases, labels, pairs = load(set_name, docs)
    needed = [m for m in metrics(set_name) if set_name != "contrastive" or "expected_output" not in _fields(m)]
    recs, seconds = [], {}
    for metric in needed:  # one at a time, for the wall time of each
        t0 = time.perf_counter()
        recs += evaluate(cases, [metric], judge, progress=False, chunk_size=64).records
        seconds[metric.name] = round(time.perf_counter() - t0, 1)
    vals = scorer_values(recs)
    return {
        "cases": len(cases),
        "labelled": len(labels),
        "wall_s": round(sum(seconds.values()), 1),
        "metric_seconds": seconds,
        "scorers": {s: figures(v, labels, pairs, cases, set_name) for s, v in vals.items()},
    }


def render(res: dict) -> str:
    lines = [
        "# RAG faithfulness: which scorers separate supported from unsupported answers",
        "",
        "Made by `benchmarks/quality/faithfulness/rag_faithfulness.py`; sets and scorers in its docstring. "
        f"Machine: {res['machine']['cpu']}, {res['machine']['cores']} cores, fp32.",
        "",
    ]
    for judge, sets in res["judges"].items():
        for set_name, r in sets.items():
            lines += [f"## {judge} — {set_name} ({r['labelled']} labelled of {r['cases']} cases, {r['wall_s']} s)", ""]
            r = {**r, "scorers": {s: f for s, f in r["scorers"].items() if f["n"]}}  # a set without its fields
            if r.get("metric_seconds"):
                lines += [
                    "Wall seconds per metric (a likelihood metric's min-token row comes from the same "
                    "pass): " + ", ".join(f"{k} {v}" for k, v in r["metric_seconds"].items()) + ".",
                    "",
                ]
            if set_name == "summeval":
                lines += [
                    "| scorer | summary-level ρ vs experts' consistency | AUROC (all experts 5 vs not) | n |",
                    "|---|---|---|---|",
                ]
                for s, f in r["scorers"].items():
                    lines.append(f"| {s} | {cell(f['spearman'])} | {cell(f['auroc_all5_vs_rest'])} | {f['n']} |")
            elif set_name == "contrastive":
                kinds = sorted(k for k in next(iter(r["scorers"].values())) if k.startswith("pair_accuracy_"))
                lines += [
                    "| scorer | AUROC | pair accuracy | "
                    + " | ".join(k.removeprefix("pair_accuracy_") for k in kinds)
                    + " | n |",
                    "|---|---|---|" + "---|" * len(kinds) + "---|",
                ]
                for s, f in r["scorers"].items():
                    lines.append(
                        f"| {s} | {cell(f['auroc'])} | {cell(f['pair_accuracy'])} | "
                        + " | ".join(cell(f.get(k)) for k in kinds)
                        + f" | {f['n']} |"
                    )
            else:
                ids = sorted(RIGHT | WRONG)
                lines += [
                    "| scorer | AUROC (5 right vs 3 wrong) | separates? | "
                    + " | ".join(f"{i.removeprefix('rag-')}{'✗' if i in WRONG else ''}" for i in ids)
                    + " |",
                    "|---|---|---|" + "---|" * len(ids),
                ]
                for s, f in r["scorers"].items():
                    sep = "yes" if f["gap"] is not None and f["gap"] > 0 else "no"
                    lines.append(
                        f"| {s} | {cell(f['auroc'])} | {sep} | "
                        + " | ".join(cell(f.get("values", {}).get(i), "{:.2f}") for i in ids)
                        + " |"
                    )
            lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", nargs="+", default=["demo", "contrastive"], choices=["demo", "contrastive", "summeval"])
    ap.add_argument("--judge", action="append", help="judge (repeatable; default both embedded judges)")
    ap.add_argument("--docs", type=int, default=None, help="summeval: only the first N articles")
    ap.add_argument("--report", action="store_true", help="only rebuild the markdown from the JSON")
    args = ap.parse_args()
    path = OUT / "results.json"
    res = json.loads(path.read_text()) if path.exists() else {"judges": {}}
    if not args.report:
        from localjudge import load_judge

        for name in args.judge or EMBEDDED_JUDGES:
            judge = load_judge(name, device="cpu", dtype="float32")
            for s in args.sets:
                res["judges"].setdefault(name, {})[s] = run_set(judge, s, args.docs)
                print(f"[{name}] {s} done", file=sys.stderr, flush=True)
        res["machine"] = machine("torch_threads", "torch")
        path.write_text(json.dumps(res, indent=1) + "\n")
    md = OUT / "results.md"
    md.write_text(render(res) + kept_section(md))
    print(render(res))


if __name__ == "__main__":
    main()
