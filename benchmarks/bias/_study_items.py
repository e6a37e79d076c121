"""What the self-preference study judges: its two tasks, their items and the responses no model writes.

- summaries: the first N SummEval dev articles (file order). Every model summarises each with one
  instruction (`SUMMARY_INSTRUCTION`); beside them stand the article's reference (the CNN/DailyMail
  highlights) and two SummEval systems with expert consistency scores (`SYSTEMS`), the human anchor.
- answers: N prompts of `prompts.jsonl`, taken round-robin over its five categories (p01, p09,
  p17, ... first); beside the models' answers stands the prompt's reference answer.

Only the systems' summaries carry expert scores (`HUMAN_FIELD`); SummEval has none for the reference
or for our models' summaries, so only system-vs-system pairs have a human preference.
"""

from __future__ import annotations

import json
from pathlib import Path

from localjudge.io.cases import TestCase, load_cases
from localjudge.runs.generation import ResponseRecord
from localjudge.version import __version__

SUMMARY_INSTRUCTION = "Summarize the following news article in two or three sentences."
SYSTEMS = {
    "M20": "GPT-2 zero-shot (SummEval M20), expert consistency 3.18 on the dev set: the low anchor",
    "M22": "BART (SummEval M22), expert consistency 4.90 on the dev set: the high anchor",
}
"""The SummEval systems judged beside the models; on the first 16 articles M22 is rated more consistent
than M20 on 13 and tied on 3 (expert means), so most of their pairs have a human preference."""
HUMAN_FIELD = "human_consistency"
"""Extra field of a system summary with its SummEval expert consistency (mean of 3 ratings, 1–5)."""
REFERENCE = "reference"
"""Generator name (and family) of the references: CNN/DailyMail highlights, or prompts.jsonl's answers."""


def summary_prompt(article: str) -> str:
    """The one prompt every model summarises with (chat models in their template, the base model as text)."""
    return f"{SUMMARY_INSTRUCTION}\n\nArticle:\n{article}"


def _summeval_rows(path: Path, n_articles: int) -> tuple[list[str], dict[str, dict[str, dict]]]:
    """The first `n_articles` doc ids in file order, and each one's rows by system id."""
    rows = json.loads(path.read_text(encoding="utf-8"))
    docs: list[str] = []
    by_doc: dict[str, dict[str, dict]] = {}
    for row in rows:
        doc = str(row["doc_id"])
        if doc not in by_doc:
            docs.append(doc)
            by_doc[doc] = {}
        by_doc[doc][str(row["system_id"])] = row
    return docs[:n_articles], by_doc


def summary_items(path: Path, n_articles: int) -> list[TestCase]:
    """One generation prompt per article: id = doc id, the article kept in `extra` for the judges."""
    docs, by_doc = _summeval_rows(path, n_articles)
    out = []
    for doc in docs:
        article = next(iter(by_doc[doc].values()))["source"]
        out.append(TestCase(id=doc, input=summary_prompt(article), extra={"article": article}))
    return out


def _written(case: TestCase, generator: str, text: str, info: dict, extra: dict | None = None) -> ResponseRecord:
    """A response no model of this study generated, its generator its own family.

    prompt_style, max_new_tokens and batch_size do not apply (recorded as "plain", 0, 0).
    """
    return ResponseRecord(
        id=case.id,
        input=case.input or "",
        reference=None,
        generator=generator,
        generator_family=generator,
        response=text.strip(),
        prompt_style="plain",
        max_new_tokens=0,
        batch_size=0,
        generator_info={"source": "not generated in this study", **info},
        localjudge_version=__version__,
        extra={**case.extra, **(extra or {})},
    )


def other_summaries(path: Path, cases: list[TestCase]) -> list[ResponseRecord]:
    """The reference and the `SYSTEMS` summaries of each article, the systems with their expert score."""
    _, by_doc = _summeval_rows(path, 10**9)
    out = []
    for case in cases:
        rows = by_doc[case.id]
        any_row = next(iter(rows.values()))
        out.append(_written(case, REFERENCE, any_row["reference"], {"origin": "CNN/DailyMail highlights (SummEval)"}))
        for system, what in SYSTEMS.items():
            row = rows[system]
            human = {HUMAN_FIELD: float(row["scores"]["consistency"])}
            out.append(_written(case, f"summeval-{system}", row["system_output"], {"origin": what}, human))
    return out


def answer_items(path: Path, n_prompts: int) -> list[TestCase]:
    """`n_prompts` prompts round-robin over the categories, in file order within each."""
    cases = load_cases(path)
    by_category: dict[str, list[TestCase]] = {}
    for c in cases:
        by_category.setdefault(str(c.extra.get("category")), []).append(c)
    order = []
    for k in range(max(len(v) for v in by_category.values())):
        order += [v[k] for v in by_category.values() if k < len(v)]
    return order[:n_prompts]


def reference_answers(cases: list[TestCase]) -> list[ResponseRecord]:
    """Each prompt's reference answer as a response of the generator `REFERENCE`."""
    out = []
    for c in cases:
        extra = {k: v for k, v in c.extra.items() if k != "reference"}
        text = c.expected_output or str(c.extra["reference"])
        case = c.model_copy(update={"extra": extra})
        out.append(_written(case, REFERENCE, text, {"origin": "benchmarks/bias/prompts.jsonl reference"}))
    return [r.model_copy(update={"reference": r.response}) for r in out]
