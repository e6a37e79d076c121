"""The heads localjudge ships load by name on the embedded judge they read, and answer through their heads.

`smollm2-135m-summeval` (installed with the default judges by `make install`: its heads ship in
localjudge/tuned/) reads SummEval's four dimensions from smollm2-135m's hidden states. Its figures
on articles it never saw are in benchmarks/quality/heads/; here: it loads by name, its records name
its heads, it reads the bundled SummEval demo's summaries bitwise whatever the batch, and a metric
it was not fit for runs on its base judge.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from localjudge.io.cases import load_cases
from localjudge.judges.heads import read_head_manifest
from localjudge.judges.loading import load_judge
from localjudge.metrics import builtin_metric
from localjudge.runs.evaluate import evaluate

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("torch_one_thread")]

DEMO = Path(__file__).resolve().parents[2] / "localjudge" / "examples" / "summeval_demo.jsonl"
FOLDER = Path(__file__).resolve().parents[2] / "localjudge" / "tuned" / "smollm2-135m-summeval"
DIMENSIONS = ("coherence", "consistency", "fluency", "relevance")


@pytest.fixture(scope="module")
def judge():
    return load_judge("smollm2-135m-summeval", progress=False)


def test_the_summeval_heads_load_by_name_and_answer_their_four_metrics(judge):
    manifest = read_head_manifest(FOLDER)
    assert judge.info.name == "smollm2-135m-summeval" and set(judge.readings) == set(DIMENSIONS)
    assert manifest.base == "smollm2-135m" and judge.info.provenance == manifest.base_provenance
    cases = load_cases(DEMO)[:8]  # half of one article's summaries
    metrics = [builtin_metric(d) for d in DIMENSIONS] + [builtin_metric("consistency_likelihood")]
    result = evaluate(cases, metrics, judge, progress=False)
    kinds = {r.metric: r.kind for r in result.records}
    assert kinds == {**dict.fromkeys(DIMENSIONS, "head"), "consistency_likelihood": "likelihood"}
    for r in result.records:
        if r.kind == "head":
            assert r.detail.head_sha256 == manifest.head_sha256 and 0 <= r.score <= 1
    fluency = [r.raw_score for r in result.records if r.metric == "fluency"]
    assert all(1 <= x <= 3 for x in fluency) and np.ptp(fluency) > 0  # fluency's scale is 1-3


def test_the_heads_read_the_same_bits_in_any_batch(judge):
    cases = load_cases(DEMO)[:8]
    metric = builtin_metric("consistency")
    together = evaluate(cases, [metric], judge.with_options(token_budget=4096), progress=False, chunk_size=8)
    alone = evaluate(cases[5:7][::-1], [metric], judge.with_options(token_budget=512), progress=False, chunk_size=1)
    a = {r.case_id: r.raw_score for r in together.records}
    assert all(a[r.case_id] == r.raw_score for r in alone.records)


def _pairs(cases):
    """Pairs of the demo's summaries of one article, as the pairwise metric reads them."""
    return [
        a.model_copy(update={"id": f"{a.id}|{b.id}", "extra": {**a.extra, "output_1": a.actual_output,
                                                               "output_2": b.actual_output}})
        for a, b in zip(cases[::2], cases[1::2])
    ]  # fmt: skip


@pytest.mark.parametrize("name", ["qwen2.5-coder-0.5b-summeval", "smollm2-135m-summedits", "smollm2-135m-mtbench"])
def test_every_other_shipped_head_judge_loads_by_name_and_reads_through_its_heads(name):
    """The 0.5B's heads read after `make judges-qwen` (`make test` installs that judge); the others over the 135M."""
    manifest = read_head_manifest(FOLDER.parent / name)
    judge = load_judge(name, progress=False)
    assert judge.info.name == name and judge.info.provenance == manifest.base_provenance
    cases = load_cases(DEMO)[:2]
    metrics = [builtin_metric(h.metric) for h in manifest.heads]
    if name.endswith("mtbench"):
        cases = _pairs(cases)
    records = evaluate(cases, metrics, judge, progress=False).records
    assert len(records) == len(cases) * len(metrics)
    for r in records:
        assert r.kind == "head" and r.detail.head_sha256 == manifest.head_sha256 and 0 <= r.score <= 1
    if name.endswith("mtbench"):  # no position: the swapped pair reads 1 - P
        swapped = [c.model_copy(update={"extra": {**c.extra, "output_1": c.extra["output_2"],
                                                  "output_2": c.extra["output_1"]}}) for c in cases]  # fmt: skip
        back = evaluate(swapped, metrics, judge, progress=False).records
        assert all(abs(r.raw_score + s.raw_score - 1) < 1e-12 for r, s in zip(records, back))
