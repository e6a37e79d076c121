"""The dev data the head studies read, as test cases, and the one feature pass each data set gets.

Summaries (SummEval, SummEdits) are read as "Document:\\n{source}\\n\\nSummary: {summary}" and answers
(MT-Bench, LLMBar) as "Instruction:\\n{input}\\n\\nResponse: {answer}", so a head fit on one data set of
a kind reads the other's features as they are (`heads_transfer`). Features are cached by content
under --work (`localjudge.heads.store`): every study of one judge shares them.

    python -m benchmarks.quality.heads.data --judge smollm2-135m --sets summeval mtbench llmbar summedits
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

from benchmarks.lib.common import load_summeval
from localjudge.heads import HeadOptions
from localjudge.io.cases import TestCase

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"
WORK = Path("/tmp/localjudge-heads-bench")
DIMENSIONS = ("coherence", "consistency", "fluency", "relevance")
DOMAINS = ("ectsum", "qmsumm", "sales_call", "sales_email", "scitldr")
SUMMARY = HeadOptions(field_labels={"input": "Document"}, output_label="Summary")
ANSWER = HeadOptions(field_labels={"input": "Instruction"}, output_label="Response")


def summeval() -> list[TestCase]:
    """SummEval dev: 50 articles × 16 summaries, `doc_id` and `human_<dimension>` in extra."""
    return load_summeval(DATA / "summeval_dev.json")


def summedits(domain: str) -> list[TestCase]:
    """One SummEdits dev domain: label 1 consistent, 0 not; grouped by document (`doc_id`)."""
    rows = json.loads((DATA / "summedits" / f"summedits_{domain}.json").read_text())
    return [
        TestCase(
            id=f"{domain}/{r['id']}",
            input=r["doc"],
            actual_output=r["summary"],
            extra={
                "label": int(r["label"]),
                "domain": domain,
                "doc_id": hashlib.sha1(r["doc"].encode()).hexdigest()[:12],
            },
        )
        for r in rows
    ]


def pairs(name: str) -> list[TestCase]:
    """Human preference pairs (`mtbench_human_pairs`, `llmbar_natural`): output_1, output_2, label 1 or 2."""
    rows = json.loads((DATA / f"{name}.json").read_text())
    return [
        TestCase(
            id=f"{name}/{i}",
            input=r["input"],
            extra={"output_1": r["output_1"], "output_2": r["output_2"], "label": int(r["label"])},
        )
        for i, r in enumerate(rows)
    ]


def data_set(name: str) -> tuple[list[TestCase], HeadOptions, list[str]]:
    """A named data set's cases, the prompt options it is read with, and the output fields read."""
    if name == "summeval":
        return summeval(), SUMMARY, ["actual_output"]
    if name == "summedits":
        return [c for d in DOMAINS for c in summedits(d)], SUMMARY, ["actual_output"]
    if name in ("mtbench", "llmbar"):
        return pairs("mtbench_human_pairs" if name == "mtbench" else "llmbar_natural"), ANSWER, ["output_1", "output_2"]
    raise SystemExit(f"unknown data set {name}")


def feature_spec(judge, options: HeadOptions, sentences: bool = False):
    """The `FeatureSpec` a fit with `options` reads on `judge` (as `fit_heads` builds it)."""
    from localjudge.kinds.head.spec import FeatureSpec

    depth = judge.layer_count
    layers = sorted({max(1, min(depth, round(f * depth))) for f in options.depths})
    return FeatureSpec(
        source_fields=options.source_fields,
        field_labels=options.field_labels,
        output_label=options.output_label,
        layers=layers,
        sentences=sentences,
    )


def features(judge, name: str, work: Path = WORK, progress: bool = True, sentences: bool = False):
    """The data set's cases, spec, and each case's features per output field (computed once, then cached);
    with `sentences`, each output's sentences read alone too (`FeatureSpec.sentences`)."""
    from tqdm import tqdm

    from localjudge.heads.store import load_features
    from localjudge.kinds.head.features import continuations, prompt_of

    cases, options, fields = data_set(name)
    spec = feature_spec(judge, options, sentences)
    prompts = [prompt_of(spec, c) for c in cases]
    items = [(p, str(c.get(f))) for f in fields for p, c in zip(prompts, cases)]
    t0 = time.perf_counter()
    total = len(continuations(spec, [p for p, _ in items], [o for _, o in items]))
    with tqdm(total=total, desc=f"{name} features", disable=not progress) as bar:
        got, computed = load_features(judge, spec, items, work / "features", bar.update)
    seconds = time.perf_counter() - t0
    per_field = {f: got[k * len(cases) : (k + 1) * len(cases)] for k, f in enumerate(fields)}
    return cases, spec, per_field, {"computed": computed, "seconds": seconds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judge", default="smollm2-135m")
    ap.add_argument("--sets", nargs="+", default=["summeval", "mtbench", "llmbar", "summedits"])
    ap.add_argument("--work", type=Path, default=WORK)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--sentences", action="store_true", help="Read each output's sentences alone too.")
    args = ap.parse_args()
    from localjudge.engine.options import EngineOptions
    from localjudge.judges.loading import load_judge

    judge = load_judge(args.judge, options=EngineOptions(dtype=args.dtype), progress=False)
    for name in args.sets:
        cases, _, _, cost = features(judge, name, args.work, sentences=args.sentences)
        print(
            f"{args.judge} {name}: {len(cases)} cases, {cost['computed']} outputs computed in {cost['seconds']:.0f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
