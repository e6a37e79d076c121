"""Token counts of likelihood records say what they count: the condition prompt, the target and the
PMI contrast prompt, each on its own; unscored likelihood records keep them; older files still resume.

The fake tokenizer has one token per character, so every count is a length of text."""

from __future__ import annotations

import json
import math

import pytest

from localjudge.io.cases import TestCase
from localjudge.io.jsonl import dump_line
from localjudge.kinds.likelihood import prompts as L
from localjudge.metrics import builtin_metric
from localjudge.runs.evaluate import evaluate
from localjudge.runs.results_file import read_results
from localjudge.scoring.likelihood import split_boundary
from localjudge.testing import copy_lm, fake_judge

CASE = TestCase(
    id="ok",
    input="When was the Eiffel Tower finished?",
    retrieval_context=["The Eiffel Tower was finished in 1889 and is 330 metres tall."],
    actual_output="It was finished in 1889.",
)
PMI = builtin_metric("faithfulness_pmi")


def judge(**kw):
    return fake_judge(lambda p: {}, **kw)


@pytest.mark.parametrize("chat", [True, False])
def test_condition_target_and_contrast_are_counted_apart(chat):
    j = judge(chat_template=chat)
    (r,) = evaluate([CASE], [PMI], j, progress=False).records
    prompt = L.condition_prompt(j, PMI, CASE)
    head, scored = split_boundary(prompt, L.continuation(prompt, CASE.actual_output))
    contrast = split_boundary(L.contrast_prompt(j, PMI, CASE), scored)[0]
    d = r.detail
    assert d.n_tokens == len(scored) == len(" It was finished in 1889.")
    assert d.condition_tokens == len(head) and d.contrast_tokens == len(contrast)
    assert d.contrast_tokens < d.condition_tokens  # the contrast leaves the passages out
    assert r.prompt_tokens == d.condition_tokens  # the prompt alone, not the text it scores


def test_without_pmi_there_is_no_contrast_count():
    (r,) = evaluate([CASE], [builtin_metric("consistency_likelihood")], judge(), progress=False).records
    assert r.detail.contrast_tokens is None and r.detail.condition_tokens == r.prompt_tokens > 0


def test_blank_target_keeps_what_was_counted():
    blank = CASE.model_copy(update={"actual_output": "  \n"})
    (r,) = evaluate([blank], [PMI], judge(), progress=False).records
    assert r.score is None and "blank" in r.unscored_reason
    d = r.detail
    assert d.given_source is None and d.without_source is None
    assert d.condition_tokens == r.prompt_tokens > 0 and d.contrast_tokens > 0


def test_non_finite_reading_keeps_the_counts_and_the_finite_stats():
    def lm(prompt, cont):  # an impossible first token under the contrast prompt only
        out = copy_lm(prompt, cont)
        return [-math.inf, *out[1:]] if "Retrieved passages" not in prompt else out

    (r,) = evaluate([CASE], [PMI], judge(lm=lm), progress=False).records
    assert r.score is None and "not finite" in r.unscored_reason
    d = r.detail
    assert d.given_source.mean is not None and d.without_source.mean is None and d.without_source.min is None
    assert d.n_tokens > 0 and d.condition_tokens > 0 and math.isfinite(d.pmi_min)  # the +inf token is no minimum
    json.loads(dump_line(r))  # strict JSON: no infinities in the file


def test_records_written_before_the_counts_existed_still_resume(tmp_path):
    out = tmp_path / "r.jsonl"
    second = CASE.model_copy(update={"id": "two", "actual_output": "In 1889."})
    evaluate([CASE], [PMI], judge(), out=out, progress=False)
    old = json.loads(out.read_text())
    for key in ("condition_tokens", "contrast_tokens"):
        del old["likelihood"][key]
    old["prompt_tokens"] += old["likelihood"]["n_tokens"]  # older records counted the target in
    out.write_text(json.dumps(old) + "\n")
    (rec,) = read_results(out)
    assert rec.detail.condition_tokens is None and rec.detail.contrast_tokens is None
    again = judge()
    result = evaluate([CASE, second], [PMI], again, out=out, resume=True, progress=False)
    assert len(again.backend.calls) == 2  # only the new case, under both conditions
    assert result.records[0].detail.condition_tokens is None and result.records[1].detail.condition_tokens
