"""Likelihood metrics: spec, prompts, PMI, records, and the CLI, with the scripted fake judge.

The fake's language model (`localjudge.testing.copy_lm`) gives a character -0.5 when the prompt
contains it with the character before it, else -3.0: text copied from the context is likely, so
faithful and unfaithful answers are told apart by PMI exactly as a real judge would tell them.
"""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.errors import ConfigError, ContextLengthError
from localjudge.io.cases import TestCase
from localjudge.kinds.likelihood import prompts as L
from localjudge.metrics import builtin_metric, builtin_names
from localjudge.metrics.spec import LikelihoodMetric, metric_from_dict
from localjudge.runs.evaluate import evaluate
from localjudge.runs.results_file import read_results
from localjudge.testing import copy_lm, fake_judge

PASSAGE = "The Eiffel Tower was finished in 1889 and is 330 metres tall."
FAITHFUL = TestCase(
    id="ok",
    input="When was the Eiffel Tower finished?",
    retrieval_context=[PASSAGE],
    actual_output="It was finished in 1889.",
)
UNFAITHFUL = FAITHFUL.model_copy(update={"id": "bad", "actual_output": "Work stopped during a war, in 1925."})


def _judge(**kw):
    return fake_judge(lambda p: {"3": 1.0}, **kw)


# -- the spec -----------------------------------------------------------------------------------


def test_builtins_are_likelihood_metrics():
    names = set(builtin_names())
    assert {"likelihood", "faithfulness_pmi"} <= names
    instructions = set()
    for dim, word in [
        ("coherence", "coherent"),
        ("consistency", "only facts"),
        ("fluency", "fluent"),
        ("relevance", "important"),
    ]:
        m = builtin_metric(f"{dim}_likelihood")
        assert m.kind == "likelihood" and word in m.instruction and m.fields == ["input"]
        instructions.add(m.instruction)
    assert len(instructions) == 4
    pmi = builtin_metric("faithfulness_pmi")
    assert pmi.pmi is not None and pmi.pmi.without == ["retrieval_context"]


@pytest.mark.parametrize(
    "bad, why",
    [
        ({"pmi": {"without": ["context"]}}, "pmi.without"),
        ({"fields": ["input", "actual_output"]}, "target"),
        ({"fields": ["input", "input"]}, "repeated"),
        ({"aggregation": "median"}, "aggregation"),
        ({"required": ["expected_output"]}, "required"),
        ({"threshold": 2}, "threshold"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_spec_errors(bad, why):
    data = {"kind": "likelihood", "name": "m", "instruction": "Write.", "fields": ["input"], **bad}
    with pytest.raises(ConfigError, match=why):
        metric_from_dict(data, "m.yaml")


# -- prompts ------------------------------------------------------------------------------------


def test_plain_layout_and_pmi_contrast():
    m = builtin_metric("faithfulness_pmi")
    judge = _judge()
    prompt = L.condition_prompt(judge, m, FAITHFUL)
    assert prompt == (
        f"Retrieved passages:\n[1] {PASSAGE}\n\nQuestion:\nWhen was the Eiffel Tower finished?\n\n"
        "Answer the question using only the retrieved passages.\nAnswer:"
    )
    assert L.contrast_prompt(judge, m, FAITHFUL) == (
        "Question:\nWhen was the Eiffel Tower finished?\n\nAnswer the question.\nAnswer:"
    )
    assert L.continuation(prompt, "  It was.\n") == " It was."


def test_empty_heading_and_chat_format():
    m = LikelihoodMetric(
        kind="likelihood",
        name="tldr",
        instruction="TL;DR:",
        fields=["input"],
        field_labels={"input": ""},
        target_label="",
    )
    case = TestCase(id="1", input="Rain fell.", actual_output="It rained.")
    assert L.condition_prompt(_judge(), m, case) == "Rain fell.\n\nTL;DR:"
    chat = m.model_copy(update={"format": "chat"})
    prompt = L.condition_prompt(_judge(), chat, case)
    assert prompt == "<user>\nRain fell.\n\nTL;DR:\n<assistant>\n"
    assert L.continuation(prompt, "It rained.") == "It rained."  # a new line begins: no space
    plain_judge = fake_judge(lambda p: {}, chat_template=False)
    assert L.condition_prompt(plain_judge, chat, case) == "Rain fell.\n\nTL;DR:\n\n"


# -- records ------------------------------------------------------------------------------------


def test_records_mean_and_pmi_terms():
    judge = _judge()
    recs = evaluate(
        [FAITHFUL, UNFAITHFUL],
        [builtin_metric("faithfulness_pmi"), builtin_metric("likelihood")],
        judge,
        progress=False,
    ).records
    pmi_ok, ll_ok, pmi_bad, ll_bad = recs
    m = builtin_metric("faithfulness_pmi")
    prompt = L.condition_prompt(judge, m, FAITHFUL)
    cont = L.continuation(prompt, FAITHFUL.actual_output)
    given = copy_lm(prompt, cont)
    without = copy_lm(L.contrast_prompt(judge, m, FAITHFUL), cont)
    d = pmi_ok.detail
    assert pmi_ok.kind == "likelihood" and d.n_tokens == len(cont)
    assert d.given_source.mean == pytest.approx(sum(given) / len(given))
    assert d.without_source.sum == pytest.approx(sum(without))
    assert pmi_ok.raw_score == pytest.approx(d.given_source.mean - d.without_source.mean)
    assert pmi_ok.score == pytest.approx(1 / (1 + math.exp(-pmi_ok.raw_score)))
    assert d.pmi_min == pytest.approx(min(a - b for a, b in zip(given, without)))
    assert ll_ok.raw_score == pytest.approx(ll_ok.detail.given_source.mean) and ll_ok.raw_score <= 0
    assert ll_ok.score == pytest.approx(math.exp(ll_ok.raw_score))
    assert ll_ok.detail.without_source is None and ll_ok.detail.pmi_min is None
    # the answer copied from the passage is the likelier one, and more so because of the passage
    assert pmi_ok.raw_score > pmi_bad.raw_score and ll_ok.raw_score > ll_bad.raw_score
    assert pmi_ok.passed is None and pmi_ok.threshold is None and pmi_ok.distribution is None
    assert pmi_ok.template_version == L.LIKELIHOOD_TEMPLATE_VERSION
    assert pmi_ok.metric_spec["pmi"] == {"without": ["retrieval_context"], "instruction": "Answer the question."}


def test_sum_aggregation_threshold_and_unscored():
    m = builtin_metric("likelihood", aggregation="sum", threshold=0.5)
    cases = [
        FAITHFUL,
        FAITHFUL.model_copy(update={"id": "blank", "actual_output": "  \n "}),
        FAITHFUL.model_copy(update={"id": "noq", "input": None}),
    ]
    ok, blank, noq = evaluate(cases, [m], _judge(), progress=False).records
    assert ok.raw_score == pytest.approx(ok.detail.given_source.sum)
    assert ok.passed is (ok.score >= 0.5)
    assert blank.score is None and "blank" in blank.unscored_reason
    assert noq.score is None and "input" in noq.unscored_reason


def test_batch_of_many_cases_equals_one_at_a_time():
    cases = [
        FAITHFUL.model_copy(update={"id": str(i), "actual_output": f"It was finished in {1880 + i}."})
        for i in range(12)
    ]
    m = builtin_metric("faithfulness_pmi")
    together = evaluate(cases, [m], _judge(), progress=False, chunk_size=12).records
    apart = [evaluate([c], [m], _judge(), progress=False).records[0] for c in cases]
    assert [r.raw_score for r in together] == pytest.approx([r.raw_score for r in apart], abs=1e-12)


def test_context_limit_and_truncate():
    long = FAITHFUL.model_copy(update={"retrieval_context": [PASSAGE * 40, PASSAGE]})
    judge = _judge()
    judge.info = judge.info.model_copy(update={"context_length": 600})
    with pytest.raises(ContextLengthError, match="--truncate"):
        evaluate([long], [builtin_metric("faithfulness_pmi")], judge, progress=False)
    (rec,) = evaluate([long], [builtin_metric("faithfulness_pmi")], judge, progress=False, truncate=True).records
    assert rec.score is not None and rec.truncated.startswith("retrieval_context cut from")
    assert rec.prompt_tokens <= 600


# -- the command line ---------------------------------------------------------------------------


@pytest.fixture
def judges(localjudge_scripted):
    made = []

    def load(asked):
        made.append(_judge())
        return made[-1]

    localjudge_scripted.add_any(load)
    return made


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "cases.jsonl"
    rows = [
        FAITHFUL.model_dump(exclude_none=True, exclude={"extra"}) | {"human": 1},
        UNFAITHFUL.model_dump(exclude_none=True, exclude={"extra"}) | {"human": 0},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_cli_eval_resume_and_provenance(judges, data, tmp_path):
    out = tmp_path / "r.jsonl"
    args = [
        "eval",
        str(data),
        "--metric",
        "likelihood",
        "--metric",
        "faithfulness_pmi",
        "--out",
        str(out),
        "--no-progress",
    ]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    assert "likelihood" in first.stdout and "faithfulness_pmi" in first.stdout
    recs = read_results(out)
    assert [(r.case_id, r.metric) for r in recs] == [  # input order: cases × metrics
        ("ok", "likelihood"),
        ("ok", "faithfulness_pmi"),
        ("bad", "likelihood"),
        ("bad", "faithfulness_pmi"),
    ]
    assert all(r.judge["name"] == "fake" and r.extra["human"] in (0, 1) for r in recs)
    # a resumed run judges nothing again and keeps the file as it is
    before = out.read_bytes()
    again = CliRunner().invoke(main, args + ["--resume"])
    assert again.exit_code == 0, again.output
    assert out.read_bytes() == before and judges[-1].backend.calls == []
    # a changed definition is refused when a resumed run has cases left to judge
    part = tmp_path / "part.jsonl"
    assert CliRunner().invoke(main, [*args[:4], "--out", str(part), "--limit", "1"]).exit_code == 0
    spec = tmp_path / "ll.yaml"
    spec.write_text("kind: likelihood\nname: likelihood\ninstruction: Say something.\nfields: [input]\n")
    changed = CliRunner().invoke(
        main, ["eval", str(data), "--metric", str(spec), "--out", str(part), "--resume", "--no-progress"]
    )
    assert changed.exit_code == 2 and "defined differently" in changed.output


def test_cli_metrics_lists_likelihood_kinds():
    result = CliRunner().invoke(main, ["metrics"])
    line = next(x for x in result.stdout.splitlines() if x.startswith("faithfulness_pmi"))
    assert "PMI (mean)" in line and "retrieval_context, input -> actual_output" in line


def test_reading_notes_say_what_scores_cannot_tell():
    from localjudge.runs.summary import reading_notes

    flat = reading_notes("geval", [0.55, 0.57, 0.61], 0.95, True)
    assert len(flat) == 1 and "0.55-0.61 (6% of the 0-1 scale) over 3 cases" in flat[0]
    assert reading_notes("geval", [0.1, 0.5, 0.9], 0.95, True) == []
    assert reading_notes("geval", [0.5, 0.5], 0.95, True) == []  # two cases say nothing of a spread
    assert "valid scores" in reading_notes("geval", [0.1, 0.9, 0.5], 0.2, True)[0]
    assert "not pass/fail judgments" in reading_notes("likelihood", [0.3, 0.4], None, False)[0]
    assert reading_notes("likelihood", [0.3, 0.4], None, True) == []
