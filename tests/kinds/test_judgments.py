"""Metric kinds read from probabilities with the scripted fake judge: token-level likelihood readings and their records,
entailment read as P(yes), and pairwise preference from likelihood, through `evaluate` and the CLI.

The fake's language model (`copy_lm`) finds text likely when the prompt contains it, so a summary
word the article does not contain is the surprising one, as a hallucinated name is for a real judge.
"""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.errors import ConfigError
from localjudge.io.cases import TestCase
from localjudge.kinds.entailment import entailment_prompt
from localjudge.metrics import builtin_metric
from localjudge.metrics.spec import metric_from_dict
from localjudge.runs.evaluate import evaluate
from localjudge.runs.results_file import read_results
from localjudge.testing import fake_judge

ARTICLE = "The council approved the new bridge on Monday. Building starts in 2026 and costs 40 million euros."
FAITHFUL = TestCase(id="ok", input=ARTICLE, actual_output="The council approved the new bridge on Monday.")
SWAPPED = TestCase(id="bad", input=ARTICLE, actual_output="The council approved the new bridge on Friday.")
TOKENS = {"kind": "likelihood", "name": "tok", "instruction": "Summarise it.", "fields": ["input"]}


def word_lm(prompt: str, continuation: str) -> list[float]:
    """Each character -0.5 when the prompt has its word (as a whole word), else -3.0.

    The space before a word goes with it, as a tokenizer's leading space does.
    """
    known = set(re.findall(r"\w+", prompt))
    out: list[float] = []
    for k, word in enumerate(continuation.split(" ")):
        lp = -0.5 if word.strip(".,") in known else -3.0
        out += [lp] * (len(word) + (k > 0))
    return out


def _judge(policy=None):
    return fake_judge(policy or (lambda p: {"3": 1.0}), lm=word_lm)


# -- token-level likelihood ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad, why",
    [
        ({"aggregation": "quantile"}, "quantile"),
        ({"quantile": 0.1}, "quantile"),
        ({"aggregation": "quantile", "quantile": 1.5}, "quantile"),
        ({"aggregation": "count_below"}, "below"),
        ({"aggregation": "count_below", "below": 2.0}, "below"),
        ({"aggregation": "sentence_min", "unit": "word"}, "sentence_min"),
        ({"unit": "sentence"}, "unit"),
        ({"focus": "names"}, "focus"),
    ],
)
def test_token_settings_are_validated(bad, why):
    with pytest.raises(ConfigError, match=why):
        metric_from_dict({**TOKENS, **bad}, "m.yaml")


def test_record_names_the_word_that_drove_the_score_down():
    metric = metric_from_dict({**TOKENS, "aggregation": "min", "unit": "word", "pmi": {"without": ["input"]}})
    ok, bad = evaluate([FAITHFUL, SWAPPED], [metric], _judge(), progress=False).records
    assert bad.score < ok.score
    tokens = bad.detail.tokens
    assert tokens.values == "pmi" and tokens.unit == "word" and tokens.units == 8
    assert tokens.worst[0].text == " Friday." and tokens.worst[0].value == bad.raw_score
    assert tokens.worst_sentence.text.strip() == SWAPPED.actual_output
    assert bad.metric_spec["aggregation"] == "min" and bad.metric_spec["unit"] == "word"


def test_count_below_and_salient_focus_scores():
    count = metric_from_dict({**TOKENS, "aggregation": "count_below", "below": -2.0})
    ok, bad = evaluate([FAITHFUL, SWAPPED], [count], _judge(), progress=False).records
    assert ok.raw_score > bad.raw_score and ok.score == 1 / (1 - ok.raw_score)  # 1 with nothing below
    salient = metric_from_dict({**TOKENS, "aggregation": "min", "unit": "word", "focus": "salient"})
    plain = TestCase(id="plain", input=ARTICLE, actual_output="the council approved it.")
    rec = evaluate([plain], [salient], _judge(), progress=False).records[0]
    assert rec.score is None and "no salient word" in rec.unscored_reason and rec.detail.tokens.units == 0


def test_existing_likelihood_records_are_byte_identical():
    # digests of these records as the code before token-level readings wrote them (commit 28660f0)
    case = TestCase(
        id="c",
        input="When was it finished?",
        retrieval_context=["The tower was finished in 1889."],
        actual_output="It was finished in 1925.",
    )
    before = {
        "likelihood": "2d99d9574d255bdf",
        "faithfulness_pmi": "d0d9594ab32c4ee3",
        "consistency_likelihood": "06b89236944c4dac",
    }
    for name, digest in before.items():
        (r,) = evaluate([case], [builtin_metric(name)], fake_judge(lambda p: {"3": 1.0}), progress=False).records
        d = r.model_dump(mode="json")
        d.pop("localjudge_version")
        assert hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16] == digest, name
        assert "tokens" not in d["likelihood"] and "unit" not in d["metric_spec"] and "entailment" not in d


# -- entailment ----------------------------------------------------------------------------------


def _entails(prompt: str) -> dict[str, float]:
    """Yes when the summary's last word (before the question) is in the source shown first."""
    source, summary = re.search(r":\n(.*?)\n\nSummary:\n(.*?)\n\n", prompt, re.S).groups()
    return {" Yes": 0.7, " No": 0.2} if summary.rstrip(".").split()[-1] in source else {" Yes": 0.1, " No": 0.8}


def test_entailment_prompt_puts_the_source_first_and_asks_last():
    m = builtin_metric("consistency_entailment")
    p = entailment_prompt(_judge(), m, FAITHFUL, FAITHFUL.actual_output)
    assert p.index("Article:\n" + ARTICLE) < p.index("Summary:\n") < p.index(m.question)
    assert p.endswith("Answer Yes or No.\n<assistant>\nAnswer:")


def test_entailment_per_response_and_per_sentence():
    m = builtin_metric("consistency_entailment")
    per_sentence = metric_from_dict({**m.model_dump(), "name": "per_sentence", "unit": "sentence"})
    mixed = TestCase(id="mixed", input=ARTICLE, actual_output="Building starts in 2026. It costs 90 dollars.")
    res = evaluate([FAITHFUL, SWAPPED, mixed], [m, per_sentence], _judge(_entails), progress=False)
    assert res.get("ok", m.name).score == pytest.approx(0.7 / 0.9)
    assert res.get("bad", m.name).score == pytest.approx(0.1 / 0.9)
    whole = res.get("mixed", m.name)  # "dollars" is not in the article
    split = res.get("mixed", "per_sentence")
    assert [s.text for s in split.detail.sentences] == ["Building starts in 2026.", "It costs 90 dollars."]
    assert [round(s.p_yes, 3) for s in split.detail.sentences] == [0.778, 0.111]
    assert split.score == pytest.approx(0.1 / 0.9) and whole.detail.unit == "response"
    assert res.summaries[0].min_valid_mass == 0.1  # a distribution is read: the valid-mass threshold applies


def test_entailment_unscored_names_the_sentence():
    per_sentence = metric_from_dict({**builtin_metric("consistency_entailment").model_dump(), "unit": "sentence"})
    case = TestCase(id="x", input=ARTICLE, actual_output="Building starts in 2026. It costs 90 dollars.")

    def policy(p):
        return {" Yes": 0.5, " No": 0.4} if "2026." in p.split("Summary:\n")[1] else {" Yes": 0.01}

    (rec,) = evaluate([case], [per_sentence], _judge(policy), progress=False).records
    assert rec.score is None and "(sentence 2 of 2)" in rec.unscored_reason
    assert rec.detail.sentences[0].p_yes == pytest.approx(0.5 / 0.9) and rec.valid_mass == pytest.approx(0.01)


@pytest.mark.parametrize(
    "bad, why",
    [
        ({"labels": ["Yes", "yes"]}, "labels"),
        ({"fields": ["input", "actual_output"]}, "target"),
        ({"fields": []}, "fields"),
    ],
)
def test_entailment_spec_errors(bad, why):
    base = {"kind": "entailment", "name": "e", "question": "Supported?", "fields": ["input"]}
    with pytest.raises(ConfigError, match=why):
        metric_from_dict({**base, **bad})


# -- pairwise likelihood -------------------------------------------------------------------------


def _pair(k: str, first: str, second: str) -> TestCase:
    return TestCase(id=k, input="Name the bridge's opening year: 2026.", extra={"output_1": first, "output_2": second})


def test_pairwise_likelihood_has_no_presentation_order():
    metrics = [builtin_metric("pairwise_likelihood")]
    contrastive = metric_from_dict(
        {**metrics[0].model_dump(), "name": "pairwise_pmi", "pmi": {"without": ["input"], "instruction": "Write."}}
    )
    cases = [_pair("a", "It opens in 2026.", "It opens in 1999."), _pair("b", "It opens in 1999.", "It opens in 2026.")]
    res = evaluate(cases, [*metrics, contrastive], _judge(), progress=False)
    for name in ("pairwise_likelihood", "pairwise_pmi"):
        a, b = res.get("a", name), res.get("b", name)
        assert a.score > 0.5 and b.score == 1 - a.score and a.raw_score == -b.raw_score
        assert a.mode == "output_1" and b.mode == "output_2" and set(a.detail.root) == {"output_1", "output_2"}
    summary = res.summaries[0]
    assert summary.detail.win_rate == 0.5 and summary.kind == "pairwise_likelihood"


def test_cli_eval_runs_the_new_kinds(localjudge_scripted, tmp_path):
    localjudge_scripted.add_any(lambda asked: _judge(_entails))
    data = tmp_path / "d.jsonl"
    rows = [c.model_dump(exclude_none=True, exclude={"extra"}) for c in (FAITHFUL, SWAPPED)]
    data.write_text("".join(json.dumps(r | {"output_1": "x", "output_2": "y"}) + "\n" for r in rows))
    out = tmp_path / "r.jsonl"
    run = CliRunner().invoke(
        main,
        ["eval", str(data), "--metric", "consistency_entailment", "--metric", "consistency_tokens", "--metric",
         "pairwise_likelihood", "--out", str(out), "--no-progress", "--field-label", "input=Report"],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    recs = {(r.case_id, r.metric): r for r in read_results(out)}
    assert recs[("bad", "consistency_tokens")].detail.tokens.worst
    assert recs[("ok", "consistency_entailment")].score > recs[("bad", "consistency_entailment")].score
    assert recs[("ok", "consistency_entailment")].metric_spec["field_labels"] == {"input": "Report"}
    assert "output 1 wins" in run.output
    listed = CliRunner().invoke(main, ["metrics"])
    assert "consistency_entailment" in listed.output and "P(Yes) per response" in listed.output
