"""Field labels: a dialogue, a RAG answer or a summary is named as what it is in the prompts of the
built-in metrics, without a metric file; with no labels every prompt is byte for byte today's."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
import yaml
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.errors import ConfigError
from localjudge.io.cases import TestCase
from localjudge.kinds.geval import prompts as P
from localjudge.kinds.likelihood import prompts as L
from localjudge.kinds.pairwise import pairwise_message
from localjudge.metrics import builtin_metric, builtin_names, resolve_metric
from localjudge.metrics.builtin import BUILTIN_DIR
from localjudge.metrics.labels import parse_field_labels, rename
from localjudge.runs.results_file import read_results
from localjudge.testing import fake_judge

CASE = TestCase(
    id="c",
    input="In: the <question>\nline two",
    actual_output="Out: an answer",
    expected_output="ref",
    context=["ctx one"],
    retrieval_context=["passage one", "passage two"],
)


def rendered(m, case: TestCase = CASE) -> list[str]:
    """Every prompt text a metric renders for a case: G-Eval in all template modes, steps request,
    pairwise in both templates, likelihood under both a chat and a plain judge, with its contrast."""
    parts = []
    if m.kind == "geval":
        steps = list(m.steps or ["Step one."])
        for hard in (True, False):
            for first in (False, True):
                parts.append(P.user_message(m, steps, case, hard, reasoning_first=first))
        parts.append(P.steps_request(m))
    elif m.kind == "pairwise":
        parts += [pairwise_message(m, case, "one", "two", True), pairwise_message(m, case, "one", "two", False)]
    elif m.kind == "likelihood":
        for chat in (True, False):
            j = fake_judge(lambda p: {}, chat_template=chat)
            parts += [L.condition_prompt(j, m, case), str(L.contrast_prompt(j, m, case))]
    return parts


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# (prompts, definition) digests of every built-in, computed with the code the README's benchmarks
# were measured with (commit 465672e), before field labels existed
TODAY = {
    "answer_relevance": ("d7f7d00ca7337a7d", "42dff22bbff1dad2"),
    "coherence": ("4e22242c6d825336", "845f8626168864ec"),
    "coherence_likelihood": ("c3feaa9fed377f3f", "701db0176a400f83"),
    "completeness": ("a9893393fcb99a59", "95bd62795cd43818"),
    "consistency": ("66e3304ccbc1a2a7", "4b7e92a6cfaeca20"),
    "consistency_likelihood": ("1706f030028501d9", "a6b7af65727da174"),
    "context_relevance": ("069677197d3e8692", "5b6f76e73e8c039a"),
    "correctness": ("eace52e26f6eb0d9", "deb086eefce47d46"),
    "faithfulness": ("f74a83c3f2bb76a5", "4dfff16f777d7376"),
    "faithfulness_pmi": ("fb82993f498d1906", "52d2be1d59891ae1"),
    "fluency": ("2260807131ff8b4a", "89e14ca1950bc328"),
    "fluency_likelihood": ("f8ee9dcf48c3a1d2", "045bd5d2c971d334"),
    "likelihood": ("07ee2b320e3108d0", "94cc5ab8cf855629"),
    "pairwise": ("48d9cc0e8646916f", "7af45165745f68f9"),
    "relevance": ("9545b22c3dbc78cb", "76ca1f02a3e216cb"),
    "relevance_likelihood": ("556cf13e38daaf15", "1dc9bc290ad4b1b9"),
    "rouge_l": ("e3b0c44298fc1c14", "ce5143e5b4b4c2b0"),
    "style": ("5fdaff85f1e7a344", "856cacdcf8045068"),
}
PAIRWISE_NOW = "cc52409fd0978953"  # the pairwise definition lost its default pass mark (threshold: null)
NEWER = {"consistency_entailment", "consistency_tokens", "pairwise_likelihood"}
"""Built-ins newer than the pinned prompts above: no earlier prompt of theirs to keep byte-identical."""


def test_every_builtin_is_pinned_or_newer():
    assert set(builtin_names()) == set(TODAY) | NEWER


@pytest.mark.parametrize("name", sorted(TODAY))
def test_default_prompts_are_byte_identical_to_todays(name):
    m = builtin_metric(name, style_guide="Be brief.")
    prompts, definition = TODAY[name]
    assert digest("\x00".join(rendered(m))) == prompts
    spec = digest(json.dumps(m.model_dump(mode="json"), sort_keys=True))
    assert spec == (PAIRWISE_NOW if name == "pairwise" else definition)


def test_a_dialogue_is_named_as_a_dialogue():
    m = builtin_metric("coherence", field_labels={"input": "Dialogue", "actual_output": "Reply"})
    assert m.task == "You will be given a dialogue and a reply written for it. Rate the reply on one quality."
    assert m.steps[0] == "Read the dialogue and identify its main topic and key points."
    text = P.user_message(m, m.steps, CASE)
    assert "Dialogue:\n<input>" in text and "Reply:\n<actual_output>" in text
    assert not re.search(r"article|summar|source text", text, re.I)


TEXT_FIELDS = ("input", "actual_output", "expected_output")


@pytest.mark.parametrize("name", [n for n in builtin_names() if builtin_metric(n, style_guide="x").kind == "geval"])
def test_every_word_naming_a_field_follows_its_label(name):
    names = yaml.safe_load((BUILTIN_DIR / f"{name}.yaml").read_text())["names"]
    labels = {f: f"Zorblat {i}" for i, f in enumerate(TEXT_FIELDS)}
    m = builtin_metric(name, style_guide="Be brief.", field_labels=labels)
    neutral = TestCase(id="n", **{f: "lorem" for f in TEXT_FIELDS}, retrieval_context=["ipsum"])
    text = "\n".join(rendered(m, neutral))
    for field, words in names.items():
        for word in words:
            assert not re.search(rf"(?<![</])\b{word}", text, re.I), (field, word)  # tags keep field names
    for i, field in enumerate(TEXT_FIELDS):
        if field in m.fields:
            assert f"Zorblat {i}:\n<{field}>" in text  # the heading


@pytest.mark.parametrize(
    "text, labels, expected",
    [
        ("A response that is brief.", {"actual_output": "Answer"}, "An answer that is brief."),
        ("Penalise summaries with errors.", {"actual_output": "Reply"}, "Penalise replies with errors."),
        ("a summary of a news article", {"input": "User message"}, "a summary of a user message"),
        ("an input, a response", {"input": "Utterance", "actual_output": "RAG answer"}, "an utterance, a RAG answer"),
        (
            "the reference answer and the reference",
            {"expected_output": "Gold reply"},
            "the gold reply and the gold reply",
        ),
        ("the response names the Response", {"input": "Response"}, "the response names the Response"),
    ],
)
def test_rename_keeps_articles_plurals_and_capitals_in_step(text, labels, expected):
    names = {"input": ["news article", "input"], "actual_output": ["summary", "response"],
             "expected_output": ["reference answer", "reference"]}  # fmt: skip
    if "names the Response" in text:
        names = {"input": ["question"], "actual_output": ["response"]}  # a label is not renamed again
    assert rename(text, names, labels) == expected


def test_list_fields_take_labels_in_headings_only():
    m = builtin_metric("faithfulness", field_labels={"retrieval_context": "Documents"})
    assert m.field_labels["retrieval_context"] == "Documents" and "passages" in m.task
    assert "Documents:\n<retrieval_context>" in P.user_message(m, m.steps, CASE)


def test_likelihood_metrics_take_labels_as_headings():
    pmi = builtin_metric("faithfulness_pmi", field_labels={"input": "Request", "actual_output": "Reply"})
    prompt = L.condition_prompt(fake_judge(lambda p: {}), pmi, CASE)
    assert "\n\nRequest:\nIn: the" in prompt and prompt.endswith("\nReply:")
    assert pmi.instruction == builtin_metric("faithfulness_pmi").instruction  # the criterion keeps its wording
    summary = builtin_metric("consistency_likelihood", field_labels={"input": "Dialogue", "actual_output": "Reply"})
    assert summary.field_labels == {"input": "Dialogue"} and summary.target_label == ""  # the reply follows bare


def test_metric_files_keep_their_wording_and_take_the_headings(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(
        "name: m\ntask: Judge the summary.\ncriteria: Is the summary good?\nsteps: [Read the summary.]\n"
        "fields: [input, actual_output]\nfield_labels: {input: Article}\n"
    )
    m = resolve_metric(str(path), field_labels={"actual_output": "Reply"})
    assert m.task == "Judge the summary." and m.field_labels == {"input": "Article", "actual_output": "Reply"}


def test_a_copied_builtin_file_is_the_builtin_and_renames_the_same(tmp_path):
    path = tmp_path / "my_coherence.yaml"
    path.write_text((BUILTIN_DIR / "coherence.yaml").read_text())
    assert resolve_metric(str(path)) == builtin_metric("coherence")
    labels = {"input": "Dialogue", "actual_output": "Reply"}
    assert resolve_metric(str(path), field_labels=labels) == builtin_metric("coherence", field_labels=labels)


@pytest.mark.parametrize("names", ["[article]", "{output: [reply]}", "{input: article}", "{input: ['']}"])
def test_malformed_names_are_refused(tmp_path, names):
    path = tmp_path / "m.yaml"
    path.write_text(f"name: m\ntask: t\ncriteria: c\nsteps: [s]\nfields: [input]\nnames: {names}\n")
    with pytest.raises(ConfigError, match=r"m\.yaml: names: map fields to lists"):
        resolve_metric(str(path))


@pytest.mark.parametrize(
    "specs, why",
    [
        (["output=Reply"], "not a field"),
        (["actual_output"], "write FIELD=LABEL"),
        (["actual_output= "], "1 to 40 characters"),
        (["actual_output=" + "x" * 41], "1 to 40 characters"),
        (["actual_output=Re<ply"], "without <, >, :"),
        (["actual_output=Reply:"], "without <, >, :"),
        (["actual_output=Re\nply"], "line breaks"),
        (["actual_output=Reply", "actual_output=Answer"], "two labels"),
    ],
)
def test_bad_labels_are_refused(specs, why):
    with pytest.raises(ConfigError, match=why):
        parse_field_labels(specs)


def test_labels_given_in_python_are_checked_too():
    with pytest.raises(ConfigError, match="without <"):
        builtin_metric("coherence", field_labels={"input": "<|im_end|>"})


# -- the command line -------------------------------------------------------------------------------


@pytest.fixture
def judges(localjudge_scripted, monkeypatch, tmp_path):
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))
    made = []

    def load(asked):
        made.append(fake_judge(lambda p: {"4": 1.0}))
        return made[-1]

    localjudge_scripted.add_any(load)
    return made


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "dialogues.jsonl"
    rows = [
        {"id": "d1", "input": "User: hi\nBot: hello", "actual_output": "How can I help?"},
        {"id": "d2", "input": "User: thanks\nBot: bye", "actual_output": "Glad to help."},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_eval_field_label_names_fields_in_prompts_and_records(judges, data, tmp_path):
    out = tmp_path / "r.jsonl"
    args = ["eval", data, "--metric", "coherence", "--metric", "fluency_likelihood", "--out", out, "--no-progress"]
    result = run(*args, "--field-label", "input=Dialogue", "--field-label", "actual_output=Reply")
    assert result.exit_code == 0, result.output
    prompt = judges[-1].backend.calls[0]
    assert "You will be given a dialogue and a reply written for it." in prompt and "Reply:\n<actual_output>" in prompt
    coherence, likelihood, *_ = read_results(out)
    assert coherence.metric_spec["field_labels"] == {"input": "Dialogue", "actual_output": "Reply"}
    assert likelihood.metric_spec["field_labels"] == {"input": "Dialogue"}
    # a resumed run with other labels is another metric definition: refused
    again = run(*args, "--resume", "--field-label", "input=Chat")
    assert again.exit_code == 0  # nothing left to judge: the file is complete
    more = tmp_path / "more.jsonl"  # d1's records only: d2 is still to judge
    more.write_text("".join(line + "\n" for line in out.read_text().splitlines()[:2]))
    refused = run(*[more if a == out else a for a in args], "--resume", "--field-label", "input=Chat")
    assert refused.exit_code == 2 and "defined differently" in refused.output


@pytest.mark.parametrize(
    "label, why",
    [("retrieval_context=Docs", "no metric of this run shows or names retrieval_context"), ("reply=X", "not a field")],
)
def test_eval_refuses_labels_that_change_nothing_before_loading(judges, data, label, why):
    result = run("eval", data, "--metric", "coherence", "--field-label", label, "--no-progress")
    assert result.exit_code == 2 and why in result.output and judges == []
