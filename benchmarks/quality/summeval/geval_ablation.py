"""G-Eval on a real instruct judge: which prompt choices matter, on SummEval consistency.

G-Eval (Liu et al., 2023) ablates its own parts: probabilities against the printed number,
evaluation steps, the scale. On the Qwen2.5-Coder judges (the first embedded instruct judges that
read a 1–5 prompt with nearly all their probability on the scale) this script varies one choice at
a time against localjudge's builtin `consistency` metric (our system prompt, Qwen's chat template,
score first, 1–5), on the first `--docs` SummEval dev articles:

- `builtin`: the metric as `localjudge eval` runs it (system prompt "You are a careful, impartial
  evaluator...", the chat template, "Score:" prefilled in the judge's turn);
- `qwen-system`: no system message, so Qwen's template puts its own default ("You are Qwen, created
  by Alibaba Cloud. You are a helpful assistant.");
- `no-template`: the same parts as plain text, no chat template (what a base model reads);
- `scale-1-10`: the 1–10 scale (criteria and request say 1–10), normalised to 0–1 for the report;
- `reasoning-first`: the judge writes its analysis first (128 tokens, greedy, cut at its own
  "Score"), then the score is read after "Score:" (`reasoning: before`, G-Eval's chain of thought);
- `unhardened`: the plain template (content unfenced, no restated instructions after it).

Per variant: summary-level Spearman ρ of the expected score and of the argmax (per article over
its 16 summaries, averaged), and the mean valid mass. The naive parse (greedy text, first number)
is the ladder's (`ladder.py`, `naive`). Every (judge, variant, article) unit is saved as it
completes to `ladder/geval_ablation/<judge>-<dtype>.jsonl`; a rerun does only what is missing. The
variants are compared with each other in one dtype (`--dtype`, default float32; bfloat16 is the
mixed-precision default, within 0.01 of fp32's normalised scores on the Qwen judges).

Usage (from the repository root; about an hour for the 1.5B judge on 5 articles):

    .venv/bin/python -m benchmarks.quality.summeval.geval_ablation --judge qwen2.5-coder-0.5b qwen2.5-coder-1.5b \\
        --docs 5
    .venv/bin/python -m benchmarks.quality.summeval.geval_ablation --judge qwen2.5-coder-1.5b --docs 3 --dtype bfloat16
    .venv/bin/python -m benchmarks.quality.summeval.geval_ablation --report
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.lib.common import SUMMEVAL_DATA, kept_section, load_summeval, machine, rho_cell
from benchmarks.quality.summeval import summeval as SE

HERE = Path(__file__).resolve().parent

WORK = HERE / "ladder" / "geval_ablation"
OUT_MD, OUT_JSON = HERE / "ladder" / "geval_ablation_results.md", HERE / "ladder" / "geval_ablation_results.json"
VARIANTS = ("builtin", "qwen-system", "no-template", "scale-1-10", "reasoning-first", "unhardened")
JUDGES = ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")


def _metric(variant: str):
    metric = SE.summeval_metric("consistency")
    if variant == "scale-1-10":
        return metric.model_copy(update={"high": 10, "criteria": metric.criteria.replace("(1-5)", "(1-10)")})
    if variant == "reasoning-first":
        return metric.model_copy(update={"reasoning": "before"})
    return metric


def run_unit(judge, variant: str, cases) -> dict:
    """One variant on one article's summaries: expected scores, argmax, valid mass, seconds."""
    from localjudge.judges.judge import Judge
    from localjudge.kinds.geval import prompts as P
    from localjudge.runs.evaluate import evaluate

    t0 = time.perf_counter()
    metric = _metric(variant)
    if variant in ("builtin", "scale-1-10", "reasoning-first", "unhardened"):
        recs = evaluate(cases, [metric], judge, progress=False, hardened=variant != "unhardened").records
        expected = [r.raw_score for r in recs]
        argmax = [None if r.mode is None else int(r.mode) for r in recs]
        mass = [r.valid_mass for r in recs]
        extra = {"reasoning": [r.reasoning for r in recs[:2]]} if variant == "reasoning-first" else {}
    else:  # the system message or the template changes: the same parts, rendered another way
        use = (
            judge
            if variant == "qwen-system"
            else Judge(judge.backend, judge.info.model_copy(update={"chat_template": False}))
        )
        system = "" if variant == "qwen-system" else P.SYSTEM
        prompts = [
            use.render(system, P.user_message(metric, list(metric.steps), c, True), P.SCORE_PREFILL) for c in cases
        ]
        dists = use.score_texts(prompts, metric.low, metric.high)
        expected = [d.expected if d.valid_mass >= 0.1 else None for d in dists]
        argmax = [d.mode if d.valid_mass >= 0.1 else None for d in dists]
        mass = [d.valid_mass for d in dists]
        extra = {"prompt_end": prompts[0][-160:]}
    return {
        "ids": [c.id for c in cases],
        "expected": expected,
        "argmax": argmax,
        "valid_mass": mass,
        "high": metric.high,
        "seconds": round(time.perf_counter() - t0, 1),
        **extra,
    }


def _done(path: Path) -> dict[tuple[str, str], dict]:
    out = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a killed writer
            out[(row["variant"], row["doc"])] = row
    return out


def collect(name: str, docs: int, variants: list[str], dtype: str = "float32") -> None:
    from localjudge import load_judge

    cases = load_summeval(SUMMEVAL_DATA, docs)
    articles = list(dict.fromkeys(c.extra["doc_id"] for c in cases))
    path = WORK / f"{name}-{dtype}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    done = _done(path)
    todo = [(v, a) for v in variants for a in articles if (v, a) not in done]
    if not todo:
        return
    judge = load_judge(name, device="cpu", dtype=dtype)
    with open(path, "a", encoding="utf-8") as out:
        for k, (variant, doc) in enumerate(todo, 1):
            row = {"variant": variant, "doc": doc} | run_unit(
                judge, variant, [c for c in cases if c.extra["doc_id"] == doc]
            )
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(f"[{name}] {k}/{len(todo)} {variant} {doc[:20]} {row['seconds']} s", file=sys.stderr, flush=True)


def report() -> dict:
    cases = {c.id: c for c in load_summeval(SUMMEVAL_DATA, None)}
    res: dict = {"judges": {}}
    for path in sorted(WORK.glob("*.jsonl")):
        rows = _done(path)
        per: dict = {}
        for variant in VARIANTS:
            units = [r for (v, _), r in rows.items() if v == variant]
            if not units:
                continue
            ids = [i for r in units for i in r["ids"]]
            human = [cases[i].extra["human_consistency"] for i in ids]
            docs = [cases[i].extra["doc_id"] for i in ids]
            exp = [x for r in units for x in r["expected"]]
            arg = [x for r in units for x in r["argmax"]]
            mass = [x for r in units for x in r["valid_mass"]]
            per[variant] = {
                "articles": len(units),
                "expected": SE.agreement(exp, human, docs),
                "argmax": SE.agreement(arg, human, docs),
                "valid_mass": float(np.mean(mass)),
                "seconds": sum(r["seconds"] for r in units),
                "score_sd": float(np.nanstd([np.nan if x is None else (x - 1) / (units[0]["high"] - 1) for x in exp])),
            }
        res["judges"][path.stem] = per
    return res


def render(res: dict) -> str:
    lines = [
        "# G-Eval ablation on a real instruct judge (SummEval consistency)",
        "",
        "Made by `benchmarks/quality/summeval/geval_ablation.py` (variants and method in its docstring). "
        "Summary-level Spearman ρ "
        "against the experts (per article over its 16 summaries, averaged), mean valid mass, and the spread of "
        "the normalised expected score (sd over summaries; a judge that gives every summary the same score "
        "cannot rank them). CPU; the judge column names the dtype.",
        "",
        "| judge | variant | articles | expected ρ | argmax ρ | valid mass | score sd (0-1) | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for j, per in res["judges"].items():
        for v, r in per.items():
            lines.append(
                f"| {j} | {v} | {r['articles']} | {rho_cell(r['expected'], r['articles'])} | "
                f"{rho_cell(r['argmax'], r['articles'])} | {r['valid_mass']:.3f} | {r['score_sd']:.3f} "
                f"| {r['seconds']:.0f} |"
            )
    lines += [
        "",
        "(k of n): the ρ is the mean over the k articles where it is defined; on the others the judge gave all "
        "16 summaries the same score (an argmax often does) or the experts did, so there is no ranking to compare.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", nargs="+", default=list(JUDGES))
    ap.add_argument("--docs", type=int, default=5)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    ap.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args(argv)
    if not args.report:
        for j in args.judge:
            collect(j, args.docs, args.variants, args.dtype)
    res = report() | {"machine": machine("torch_threads", "simd")}
    OUT_JSON.write_text(json.dumps(res, indent=1) + "\n")
    OUT_MD.write_text(render(res) + kept_section(OUT_MD))
    print(render(res))


if __name__ == "__main__":
    main()
