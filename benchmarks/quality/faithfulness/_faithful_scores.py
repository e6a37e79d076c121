"""Every scorer of the faithfulness benchmarks, computed from saved readings by the library's own code.

A scorer is a name and one number per item (higher = more likely consistent). Token-level
scorers go through `localjudge.scoring.aggregate.read_tokens`, the function a likelihood metric's
record is made by, so a scorer here equals the `raw_score` of the metric named beside it.

Scorer names read `<values>:<aggregation>`:

- values: `ll` (log-probability given the document), `pmi` (given minus without the document, the
  `pmi: {without: [input]}` contrast), `spmi` (given minus given another document: the shuffled
  contrast), `lead` (ll minus the same aggregate of the document's own lead read the same way),
  `ref` (SummEval: ll minus the reference summary's);
- aggregation: `mean`, `sum`, `min`, `wmin` (lowest word), `q10` (10% quantile of tokens), `wq10`
  (of words), `below5` (minus the tokens under −5 nats), `wbelow5` (words), `smin` (lowest word
  among names and numbers), `stmin` (lowest token of those words), `sent` (worst sentence mean);
  names-and-numbers scorers leave a summary without any unscored (about a fifth of SummEdits);
- `entail` (P(yes) per summary), `entail_sent` (lowest P(yes) over sentences);
- `lexical`: no judge, minus the share of the summary's words absent from the document.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from benchmarks.lib.readings import Store
from benchmarks.quality.faithfulness._faithful_data import Item
from localjudge.scoring.aggregate import read_tokens

AGGREGATIONS: dict[str, dict] = {
    "mean": dict(aggregation="mean"),
    "sum": dict(aggregation="sum"),
    "min": dict(aggregation="min"),
    "wmin": dict(aggregation="min", unit="word"),
    "q10": dict(aggregation="quantile", quantile=0.1),
    "wq10": dict(aggregation="quantile", unit="word", quantile=0.1),
    "below5": dict(aggregation="count_below", below=-5.0),
    "wbelow5": dict(aggregation="count_below", unit="word", below=-5.0),
    "smin": dict(aggregation="min", unit="word", focus="salient"),
    "stmin": dict(aggregation="min", focus="salient"),
    "sent": dict(aggregation="sentence_min"),
}
"""Aggregation settings, as a likelihood metric's spec gives them."""

PMI_BELOW = -2.0
"""count_below threshold for PMI values (nats the document takes away), instead of −5."""


def _agg(values: np.ndarray, surfaces: Sequence[str], name: str, pmi: bool) -> float:
    kw = dict(AGGREGATIONS[name])
    if pmi and "below" in kw:
        kw["below"] = PMI_BELOW
    return read_tokens(values, surfaces, **kw).value


def token_scorers(store: Store, items: Sequence[Item], have: set[str]) -> dict[str, dict[str, float]]:
    """{scorer: {item id: value}} of every token-level scorer whose readings exist."""
    tokens = store.load("tokens")
    given = store.load("given")
    contrasts = {"pmi": "nodoc", "spmi": "shuffled"}
    rows = {name: store.load(cond) for name, cond in contrasts.items() if cond in have}
    out: dict[str, dict[str, float]] = {}
    for it in items:
        if it.id not in given:
            continue
        surf = tokens[it.id]["surfaces"]
        g = np.array(given[it.id]["lp"])  # (T,)
        for agg in AGGREGATIONS:
            out.setdefault(f"ll:{agg}", {})[it.id] = _agg(g, surf, agg, False)
        for name, readings in rows.items():
            if it.id in readings:
                v = g - np.array(readings[it.id]["lp"])  # (T,) per-token PMI
                for agg in AGGREGATIONS:
                    out.setdefault(f"{name}:{agg}", {})[it.id] = _agg(v, surf, agg, True)
    return {k: {i: x for i, x in v.items() if not math.isnan(x)} for k, v in out.items()}


def baseline_scorers(store: Store, items: Sequence[Item], scores: dict, condition: str, name: str) -> dict:
    """ll minus the same aggregate of the document's lead (or reference) read under the same prompt."""
    base = store.load(condition)
    out: dict[str, dict[str, float]] = {}
    for agg in ("mean", "min"):
        src = scores.get(f"ll:{agg}", {})
        for it in items:
            b = base.get(it.doc_id)
            if b is None or it.id not in src or not b["lp"]:
                continue
            lp = np.array(b["lp"])
            ref = lp.mean() if agg == "mean" else lp.min()
            out.setdefault(f"{name}:{agg}", {})[it.id] = src[it.id] - float(ref)
    return out


def entail_scorers(store: Store, items: Sequence[Item], have: set[str]) -> dict[str, dict[str, float]]:
    """P(yes) per summary, and the lowest over its sentences."""
    out: dict[str, dict[str, float]] = {}
    if "entail" in have:
        e = store.load("entail")
        out["entail"] = {it.id: e[it.id]["probs"]["Yes"] for it in items if it.id in e and e[it.id]["valid_mass"] > 0}
        out["entail_mass"] = {it.id: e[it.id]["valid_mass"] for it in items if it.id in e}
    if "entail_sent" in have:
        es = store.load("entail_sent")
        by_item: dict[str, list[float]] = {}
        for key, row in es.items():
            by_item.setdefault(key.rsplit("#", 1)[0], []).append(row["probs"]["Yes"])
        out["entail_sent"] = {it.id: min(by_item[it.id]) for it in items if it.id in by_item}
    return out


_WORD = re.compile(r"[A-Za-z0-9]+")


def lexical(items: Sequence[Item]) -> dict[str, float]:
    """Minus the share of the summary's words (lower-cased) that the document does not contain."""
    out = {}
    for it in items:
        doc = {w.lower() for w in _WORD.findall(it.doc)}
        words = [w.lower() for w in _WORD.findall(it.summary)]
        out[it.id] = -sum(w not in doc for w in words) / max(1, len(words))
    return out


def all_scorers(store: Store, items: Sequence[Item]) -> dict[str, dict[str, float]]:
    """Every scorer the store's readings allow, plus the lexical baseline."""
    have = {p.stem for p in store.root.glob("*.jsonl")}
    scores = token_scorers(store, items, have)
    if "lead" in have:
        scores |= baseline_scorers(store, items, scores, "lead", "lead")
    if "reference" in have:
        scores |= baseline_scorers(store, items, scores, "reference", "ref")
    scores |= entail_scorers(store, items, have)
    scores["lexical"] = lexical(items)
    return scores


def examples(store: Store, items: Sequence[Item], per_domain: int = 2) -> list[dict]:
    """The first inconsistent summaries of each domain with what the `consistency_tokens` record blames.

    The reading is the built-in metric's own settings, applied to the saved readings: the lowest
    units (their text, the word they lie in, their value) beside the edit that made the summary
    inconsistent.
    """
    from localjudge.metrics import builtin_metric

    m = builtin_metric("consistency_tokens")
    kw = dict(unit=m.unit, focus=m.focus, quantile=m.quantile, below=m.below)
    tokens, given, nodoc = store.load("tokens"), store.load("given"), store.load("nodoc")
    out = []
    for domain in sorted({it.domain for it in items}):
        bad = [it for it in items if it.domain == domain and it.label == 0 and it.id in nodoc]
        for it in bad[:per_domain]:
            v = np.array(given[it.id]["lp"])
            if m.pmi is not None:
                v = v - np.array(nodoc[it.id]["lp"])
            r = read_tokens(v, tokens[it.id]["surfaces"], m.aggregation, **kw)
            out.append(
                {
                    "id": it.id,
                    "domain": domain,
                    "summary": it.summary,
                    "original": it.original,
                    "edits": list(it.edits),
                    "worst": [(u.text.strip(), u.word.strip(), round(u.value, 2)) for u in r.worst],
                    "worst_sentence": r.worst_sentence.text.strip() if r.worst_sentence else None,
                }
            )
    return out
