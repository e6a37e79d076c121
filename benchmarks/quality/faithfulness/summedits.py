"""SummEdits: does a summary state only what its document says? Token-level signals of the embedded judges.

Data: SummEdits' five dev domains (`shared/data/summedits/`; ectsum, qmsumm, sales_call,
sales_email, scitldr; 2,698 summaries of 94 documents). Within a document the summaries are
near copies of one another: consistent paraphrases (label 1) and copies with one or two small
edits that people marked inconsistent (label 0: a changed entity or number, an antonym, a
negation, an inserted fact).

Scorers (`_faithful_scores.py`): the judge's per-token log-probabilities of the summary given the
document (`ll`), per-token PMI against the same prompt without the document (`pmi`) or with
another document of the domain (`spmi`), aggregated by mean, sum, minimum, low quantile, count
below a threshold, names and numbers only, or worst sentence; the same relative to the document's
own lead (`lead`); P(Yes) to "is every claim supported?" per summary and per sentence
(`entail`); both small judges' readings averaged (`both`); the size contrast of the Qwen judges (the
1.5B judge's per-token log-probability minus the 0.5B's, one tokenizer: `qwen2.5-coder-1.5b-minus-0.5b`,
its `ll:*` and `pmi:*` scorers read from the differences); and a baseline with no judge (`lexical`).

Figures (`_faithful_eval.py`), as SummEdits reports them: ROC AUC per domain, within-document AUC,
and balanced accuracy with the threshold fitted leave-one-domain-out (on four domains, tested on
the fifth), then the scorer chosen by the same protocol nested inside the four domains; verdicts
(`calibrate fit-verdict`'s protocol) with held-back accuracy and ECE.

Usage (from the repository root; the readings take hours on 2 CPU cores, so in the background):

    .venv/bin/python -m benchmarks.quality.faithfulness.summedits --judge smollm2-135m gemma3-270m # read, score, report
    .venv/bin/python -m benchmarks.quality.faithfulness.summedits --report  # from summedits_scores/

Readings: `faithful_readings/` (not kept in git; `faithful_collect.py`). Per-item scores:
`summedits_scores/<judge>.json` (kept, so the report and verdict fits re-derive without a judge).
Results: `summedits_results.md` and `.json`.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

from benchmarks.lib.common import EMBEDDED_JUDGES, kept_section, machine
from benchmarks.lib.readings import READINGS, Store
from benchmarks.quality.faithfulness import _faithful_data as D
from benchmarks.quality.faithfulness import _faithful_eval as E
from benchmarks.quality.faithfulness._faithful_report import render_summedits
from benchmarks.quality.faithfulness._faithful_scores import all_scorers, examples

HERE = Path(__file__).resolve().parent

SCORES = HERE / "summedits_scores"
OUT_MD = HERE / "summedits_results.md"
OUT_JSON = HERE / "summedits_results.json"
CONDITIONS = ("given", "nodoc", "entail", "lead", "lead_nodoc", "shuffled")
"""Readings per judge. Per-sentence entailment (`entail_sent`, `consistency_entailment` with
`unit: sentence`) is not among them: per-summary P(yes) is at chance for SmolLM2 here (AUC 0.495)
and a sentence-by-sentence pass costs twice its 49 minutes; `faithful_collect.py --conditions
entail_sent` reads it when wanted."""
CANDIDATES = (
    *("ll:mean", "ll:wmin", "ll:smin", "ll:stmin"),
    *("pmi:mean", "pmi:min", "pmi:wmin", "pmi:q10", "pmi:below5", "pmi:smin", "pmi:stmin", "pmi:sent"),
    *("spmi:min", "spmi:wmin", "spmi:mean", "spmi:stmin", "entail"),
)
"""Scorers the nested choice picks from: a few of each kind, fixed before looking at the held-out domain."""

VERDICT_PARTS = ("pmi:stmin", "ll:smin", "ll:mean")
"""Scorers a verdict is offered (the protocol keeps the simplest that does as well as the best)."""

EDIT_TYPE_ROWS = ("ll:mean", "pmi:mean", "pmi:min", "pmi:stmin", "ll:smin", "entail", "lexical")
"""Scorers whose detection is broken down by kind of edit."""


CONTRAST = ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b")
"""Expert and amateur of one family (one tokenizer): the size contrast reads the first minus the second."""
CONTRAST_NAME = "qwen2.5-coder-1.5b-minus-0.5b"
CONTRAST_CONDITIONS = ("given", "nodoc", "shuffled")
"""Likelihood conditions whose per-token readings the contrast subtracts (label readings are not subtracted)."""


def contrast_readings() -> bool:
    """The size contrast as a judge's readings: per token, the expert's log-probability minus the amateur's.

    Written to `faithful_readings/<CONTRAST_NAME>/summedits/` for the summaries both judges read under
    a condition with the same token ids, so every token scorer applies to it unchanged (`ll:*` is then
    the contrast of the summary given its document, `pmi:*` the contrast of the two judges' PMI).
    Returns whether any summary has a contrast.
    """
    big, small = (Store(READINGS / j / "summedits") for j in CONTRAST)
    out = Store(READINGS / CONTRAST_NAME / "summedits")
    for old in out.root.glob("*.jsonl"):
        old.unlink()
    tb, ts = big.load("tokens"), small.load("tokens")
    same = {i for i in tb if i in ts and tb[i]["ids"] == ts[i]["ids"]}
    out.append("tokens", (tb[i] for i in sorted(same)))
    for cond in CONTRAST_CONDITIONS:
        a, b = big.load(cond), small.load(cond)
        rows = [
            {"id": i, "lp": [x - y for x, y in zip(a[i]["lp"], b[i]["lp"])]} for i in sorted(same) if i in a and i in b
        ]
        if rows:
            out.append(cond, rows)
    return bool(same) and bool(out.load("given"))


def score(judges: list[str]) -> None:
    """Per-item scores of every scorer, from the readings, to summedits_scores/<judge>.json.gz."""
    items = D.load_items("summedits")
    SCORES.mkdir(exist_ok=True)
    both: dict[str, dict[str, dict[str, float]]] = {}
    for j in judges:
        store = Store(READINGS / j / "summedits")
        scores = all_scorers(store, items)
        both[j] = scores
        data = {"judge": j, "timing": store.timing(), "scores": scores, "examples": examples(store, items)}
        with gzip.open(SCORES / f"{j}.json.gz", "wt", encoding="utf-8") as f:
            json.dump(data, f)


def load_scores() -> dict[str, dict]:
    out = {}
    for path in sorted(SCORES.glob("*.json.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
        out[data["judge"]] = data
    return out


BOTH = ("gemma3-270m", "smollm2-135m")
"""The two small embedded judges whose readings `both` averages (the larger judges are reported on their own)."""


def with_both(per_judge: dict[str, dict]) -> dict[str, dict[str, float]]:
    """The two small judges' readings averaged, scorer by scorer (the same units: nats, or probabilities)."""
    if not all(j in per_judge for j in BOTH):
        return {}
    a, b = (per_judge[j]["scores"] for j in BOTH)
    return {s: {i: (a[s][i] + b[s][i]) / 2 for i in a[s] if i in b[s]} for s in a if s in b and s != "lexical"}


SAME_ITEMS_ROWS = ("ll:mean", "pmi:mean", "pmi:min", "pmi:stmin", "spmi:stmin", "ll:smin", "entail", "lexical")
"""Scorers compared judge by judge on the summaries every judge read (when their coverage differs)."""


def same_items(per_judge: dict[str, dict], both: dict[str, dict[str, float]], items: list) -> dict | None:
    """The key scorers of each judge (and of both averaged) on the summaries all judges read, if not all.

    "Read" = with the readings of the plain and the PMI scorers (`ll:mean`, `pmi:mean`) where every judge
    has them; scorers of names and numbers cover the same summaries that have any.
    """
    if len(per_judge) < 2:
        return None
    keys = [k for k in ("ll:mean", "pmi:mean") if all(k in d["scores"] for d in per_judge.values())]
    common = set.intersection(*(set(d["scores"][k]) for d in per_judge.values() for k in keys))
    if len(common) == len(items):
        return None
    sub = [it for it in items if it.id in common]
    tables = {name: d["scores"] for name, d in per_judge.items()} | ({"both": both} if both else {})
    return {
        "n": len(sub),
        "documents": len({it.doc_id for it in sub}),
        "judges": {
            name: {r: E.scorer_figures(sc[r], sub) for r in SAME_ITEMS_ROWS if r in sc} for name, sc in tables.items()
        },
        "nested": {name: E.nested_choice(sc, [c for c in CANDIDATES if c in sc], sub) for name, sc in tables.items()},
    }


def report() -> dict:
    items = D.load_items("summedits")
    per_judge = load_scores()
    res: dict = {"machine": machine("torch_threads", "torch", "transformers"), "judges": {}}
    judged = dict(per_judge)
    both = with_both(per_judge)
    for name, data in [*judged.items(), *([("both", {"scores": both, "timing": {}})] if both else [])]:
        scores = data["scores"]
        figs = {s: E.scorer_figures(v, items) for s, v in scores.items() if s != "entail_mass"}
        parts = [p for p in VERDICT_PARTS if p in scores]
        res["judges"][name] = {
            "items": len(items),
            "figures": figs,
            "nested": E.nested_choice(scores, [c for c in CANDIDATES if c in scores], items),
            "verdict_lodo": E.lodo_verdict(scores, parts, items) if parts else None,
            "verdict_documents": E.document_verdict(scores, parts, items) if parts else None,
            "by_edit_type": {s: E.by_edit_type(scores[s], items) for s in EDIT_TYPE_ROWS if s in scores},
            "timing": data.get("timing", {}),
            "examples": data.get("examples", []),
        }
    res["same_items"] = same_items(per_judge, both, items)
    return res


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", nargs="+", default=list(EMBEDDED_JUDGES))
    ap.add_argument("--report", action="store_true", help="only rebuild the results from summedits_scores/")
    ap.add_argument("--conditions", nargs="+", default=list(CONDITIONS))
    ap.add_argument("--docs", type=int, help="first N documents per domain (a stated subset, for the larger judges)")
    args = ap.parse_args(argv)
    if not args.report:
        from benchmarks.quality.faithfulness import faithful_collect

        subset = ["--docs", str(args.docs)] if args.docs else []
        for j in args.judge:
            faithful_collect.main(["--set", "summedits", "--judge", j, "--conditions", *args.conditions, *subset])
        judges = list(args.judge)
        if set(CONTRAST) & set(judges) and contrast_readings():
            judges.append(CONTRAST_NAME)
        score(judges)
    res = report()
    OUT_JSON.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    text = render_summedits(res)
    OUT_MD.write_text(text + kept_section(OUT_MD), encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
