"""The faithfulness benchmarks' items and the conditions each judge reads them under.

Data sets (`shared/data/README.md`):

- `summedits`: SummEdits' five dev domains, `{id, doc, summary, label}` with label 1 = consistent;
  a document's summaries (its consistent ones and their edited copies) form a group;
- `summeval`: the 800 SummEval dev summaries with the experts' consistency score (1–5, mean of 3).

Conditions (each one engine pass per judge, saved by `_readings.py`):

- `given`: the summary after the `consistency_likelihood` prompt (the document, then the instruction);
- `nodoc`: the same instruction without the document (the PMI contrast the metric's `pmi` gives);
- `shuffled`: the same prompt with *another* document of the same set (the next document of the
  domain, cyclically): a contrast that keeps a document's length, genre and layout but not its facts;
- `lead`, `lead_nodoc`: per document, its own first sentences read as if they were a summary, with and
  without the document: a per-document baseline for thresholds that must hold across documents;
- `reference`: SummEval only, the reference summary read the same way (a per-document baseline);
- `entail`: P(Yes) of the `consistency_entailment` metric, per summary;
- `entail_sent`: the same question per sentence of the summary (ids `<id>#<k>`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from benchmarks.lib.common import SHARED_DATA, SUMMEVAL_DATA
from benchmarks.lib.readings import LabelItem, LLItem

SUMMEDITS_DOMAINS = ("ectsum", "qmsumm", "sales_call", "sales_email", "scitldr")
LEAD_SENTENCES = 2
LL_CONDITIONS = ("given", "nodoc", "shuffled")
DOC_CONDITIONS = ("lead", "lead_nodoc", "reference")
LABEL_CONDITIONS = ("entail", "entail_sent")


@dataclass(frozen=True)
class Item:
    """One summary of one document, and its label."""

    id: str
    doc_id: str
    domain: str
    doc: str
    summary: str
    label: float  # SummEdits: 1 consistent / 0 not; SummEval: experts' mean consistency 1..5
    reference: str | None = None
    original: str | None = None  # SummEdits: the summary before its edits
    edits: tuple[str, ...] = ()  # SummEdits: the kinds of edit made


def load_items(dataset: str, domains: tuple[str, ...] = SUMMEDITS_DOMAINS, docs: int | None = None) -> list[Item]:
    """The items of a data set; `docs` keeps the first documents of each domain (a quick run)."""
    out: list[Item] = []
    if dataset == "summedits":
        for domain in domains:
            rows = json.loads((SHARED_DATA / "summedits" / f"summedits_{domain}.json").read_text())
            doc_ids: dict[str, str] = {}
            for r in rows:
                doc_id = doc_ids.setdefault(r["doc"], f"{domain}/{len(doc_ids)}")
                out.append(
                    Item(
                        r["id"],
                        doc_id,
                        domain,
                        r["doc"],
                        r["summary"],
                        float(r["label"]),
                        original=r["original_summary"],
                        edits=tuple(r["edit_types"]),
                    )
                )
    elif dataset == "summeval":
        for r in json.loads(Path(SUMMEVAL_DATA).read_text()):
            out.append(
                Item(
                    f"{r['doc_id']}/{r['system_id']}",
                    str(r["doc_id"]),
                    "cnndm",
                    r["source"],
                    r["system_output"],
                    float(r["scores"]["consistency"]),
                    r.get("reference") or None,
                )
            )
    else:
        raise SystemExit(f"unknown data set {dataset}; use summedits or summeval")
    if docs:
        keep: dict[str, list[str]] = {}
        for it in out:
            ids = keep.setdefault(it.domain, [])
            if it.doc_id not in ids and len(ids) < docs:
                ids.append(it.doc_id)
        out = [it for it in out if it.doc_id in keep[it.domain]]
    return out


def documents(items: list[Item]) -> dict[str, Item]:
    """The first item of each document, in order of appearance."""
    out: dict[str, Item] = {}
    for it in items:
        out.setdefault(it.doc_id, it)
    return out


def other_document(items: list[Item]) -> dict[str, str]:
    """doc_id -> the text of the next document of its domain (cyclically): the shuffled source."""
    by_domain: dict[str, list[Item]] = {}
    for it in documents(items).values():
        by_domain.setdefault(it.domain, []).append(it)
    out = {}
    for docs in by_domain.values():
        for k, d in enumerate(docs):
            out[d.doc_id] = docs[(k + 1) % len(docs)].doc
    return out


def lead(doc: str, n: int = LEAD_SENTENCES) -> str:
    """The document's first `n` sentences (its first lines for a transcript without sentence ends)."""
    from localjudge.scoring.spans import split_sentences

    return " ".join(split_sentences(doc)[:n])


def ll_items(judge, condition: str, items: list[Item]) -> list[LLItem]:
    """The prompts and texts of one likelihood condition."""
    from localjudge.io.cases import TestCase
    from localjudge.kinds.likelihood import prompts as L
    from localjudge.metrics import builtin_metric
    from localjudge.metrics.spec import PMIContrast

    metric = builtin_metric("consistency_likelihood").model_copy(update={"pmi": PMIContrast(without=["input"])})

    def item(id_: str, group: str, doc: str, text: str, without_doc: bool) -> LLItem:
        case = TestCase(id=id_, input=doc, actual_output=text)
        prompt = L.contrast_prompt(judge, metric, case) if without_doc else L.condition_prompt(judge, metric, case)
        assert prompt is not None
        return LLItem(id_, group, prompt, L.continuation(prompt, text))

    if condition in ("given", "nodoc"):
        return [item(it.id, it.doc_id, it.doc, it.summary, condition == "nodoc") for it in items]
    if condition == "shuffled":
        other = other_document(items)
        return [item(it.id, it.doc_id, other[it.doc_id], it.summary, False) for it in items]
    docs = documents(items).values()
    if condition in ("lead", "lead_nodoc"):
        return [item(d.doc_id, d.doc_id, d.doc, lead(d.doc), condition == "lead_nodoc") for d in docs]
    if condition == "reference":
        return [item(d.doc_id, d.doc_id, d.doc, d.reference, False) for d in docs if d.reference]
    raise SystemExit(f"unknown likelihood condition {condition}")


def label_items(judge, condition: str, items: list[Item]) -> list[LabelItem]:
    """The prompts of an entailment condition, per summary or per sentence."""
    from localjudge.io.cases import TestCase
    from localjudge.kinds.entailment import entailment_prompt
    from localjudge.metrics import builtin_metric
    from localjudge.scoring.spans import split_sentences

    metric = builtin_metric("consistency_entailment")
    out = []
    for it in items:
        case = TestCase(id=it.id, input=it.doc, actual_output=it.summary)
        if condition == "entail":
            out.append(LabelItem(it.id, it.doc_id, entailment_prompt(judge, metric, case, it.summary)))
        else:
            for k, sent in enumerate(split_sentences(it.summary)):
                out.append(LabelItem(f"{it.id}#{k}", it.doc_id, entailment_prompt(judge, metric, case, sent)))
    return out
