"""The DeepEval adapter against the real deepeval package, on the scripted fake judge: no network, no keys."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from deepeval import assert_test, evaluate
from deepeval.errors import MissingTestCaseParamsError
from deepeval.evaluate.configs import AsyncConfig, DisplayConfig, ErrorConfig
from deepeval.metrics import BaseMetric
from deepeval.metrics.g_eval import Rubric
from deepeval.metrics.utils import copy_metrics
from deepeval.test_case import LLMTestCase, MLLMImage, SingleTurnParams
from deepeval.test_case.llm_test_case import RetrievedContextData

from localjudge import LocalJudgeError, TestCase
from localjudge.errors import ConfigError
from localjudge.integrations.deepeval import GEval, LocalJudgeMetric, MissingFieldsError, shared_judge, to_test_case
from localjudge.metrics import LikelihoodMetric
from localjudge.testing import fake_judge

QUIET = DisplayConfig(show_indicator=False, print_results=False, inspect_after_run=False)
RIGHT = LLMTestCase(input="Capital of France?", actual_output="Paris", expected_output="Paris")
WRONG = LLMTestCase(input="Capital of France?", actual_output="Lyon", expected_output="Paris")


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    """DeepEval writes its test-run files to ./.deepeval, localjudge its steps to the cache: both in tmp_path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))


def by_answer(prompt: str) -> dict[str, float]:
    """Scores 5 when the response is Paris, 1 when it is Lyon (the fake tokenizer spells the prompt out)."""
    return {"4": 0.5, "5": 0.5} if "| Paris\n</actual_output>" in prompt else {"1": 0.9, "2": 0.1}


def test_is_a_deepeval_metric_named_after_the_localjudge_metric():
    metric = LocalJudgeMetric("correctness", judge=fake_judge(by_answer))
    assert isinstance(metric, BaseMetric)
    assert metric.__name__ == "correctness"
    assert metric.threshold == 0.5 and metric.evaluation_model == "fake (localjudge)"


def test_score_is_the_probability_weighted_score_normalised():
    # 0.8 of the mass on valid scores, 2 and 4 at 1:3: expected 3.5 on 1..5, normalised (3.5 - 1) / 4
    metric = LocalJudgeMetric("correctness", judge=fake_judge(lambda prompt: {"2": 0.2, "4": 0.6}))
    assert metric.measure(RIGHT) == pytest.approx(0.625)
    b = metric.score_breakdown
    assert b["expected"] == pytest.approx(3.5) and b["scale"] == [1, 5]
    assert b["valid_mass"] == pytest.approx(0.8)
    assert b["distribution"] == pytest.approx({"1": 0, "2": 0.25, "3": 0, "4": 0.75, "5": 0})
    assert metric.reason.startswith("expected score 3.50 on 1..5, score (3.50 - 1) / 4 = 0.625")
    assert metric.is_successful() is True and metric.error is None
    assert metric.record is not None and metric.record.score == metric.score


def test_assert_test_passes_and_fails_on_the_score():
    metric = LocalJudgeMetric("correctness", judge=fake_judge(by_answer))
    assert_test(RIGHT, [metric])
    with pytest.raises(AssertionError, match=r"correctness \(score: 0\.025.*expected score 1\.10 on 1\.\.5"):
        assert_test(WRONG, [metric])


def test_evaluate_reports_score_reason_and_distribution_per_case():
    metric = LocalJudgeMetric("correctness", judge=fake_judge(by_answer))
    result = evaluate([RIGHT, WRONG], [metric], display_config=QUIET)
    right, wrong = sorted(result.test_results, key=lambda t: -t.metrics_data[0].score)
    assert (right.success, wrong.success) == (True, False)
    assert right.metrics_data[0].score == pytest.approx(0.875)
    assert right.metrics_data[0].reason.startswith("expected score 4.50 on 1..5")
    assert "Distribution: 1: 0.0000, 2: 0.0000, 3: 0.0000, 4: 0.5000, 5: 0.5000" in right.metrics_data[0].verbose_logs


def test_every_llm_test_case_field_reaches_the_prompt():
    judge = fake_judge(lambda prompt: {"7": 1.0})
    params = list(SingleTurnParams)[:5]
    metric = GEval(
        "Grounded", criteria="Is it grounded?", evaluation_steps=["Read."], evaluation_params=params, judge=judge
    )
    case = LLMTestCase(
        input="the question",
        actual_output="the answer",
        expected_output="the reference",
        context=["a fact"],
        retrieval_context=["passage one", RetrievedContextData(context="passage two", source="doc.pdf")],
    )
    assert metric.measure(case) == pytest.approx(0.7)  # 7 on DeepEval's 0..10
    prompt = judge.backend.calls[-1]
    for heading, field, text in [
        ("Input", "input", "the question"),
        ("Actual Output", "actual_output", "the answer"),
        ("Expected Output", "expected_output", "the reference"),
        ("Context", "context", "[1] a fact"),
        ("Retrieval Context", "retrieval_context", "[1] passage one\n| \n| [2] doc.pdf: passage two"),
    ]:
        assert f"{heading}:\n<{field}>\n| {text}\n</{field}>" in prompt, field


def test_to_test_case_maps_the_fields_and_the_name():
    case = LLMTestCase(input="q", actual_output="a", expected_output="e", context=["c"], name="case-7")
    assert to_test_case(case) == TestCase(id="case-7", input="q", actual_output="a", expected_output="e", context=["c"])


def test_multimodal_case_is_refused():
    image = MLLMImage(url="https://example.com/cat.png")  # a reference only: nothing is fetched
    case = LLMTestCase(input=f"Describe {image}", actual_output="a cat")
    with pytest.raises(ConfigError, match="multimodal; localjudge judges text only"):
        LocalJudgeMetric("likelihood", judge=fake_judge(by_answer)).measure(case)


def test_unscored_case_fails_with_its_reason_never_passes():
    # 5% of the mass on valid scores, below min_valid_mass 0.1: no score to read
    judge = fake_judge(lambda prompt: by_answer(prompt) if "| Lyon" in prompt else {"5": 0.05})
    metric = LocalJudgeMetric("correctness", judge=judge)
    assert metric.measure(RIGHT) is None
    assert metric.score is None and metric.is_successful() is False
    assert metric.error is not None and metric.error.startswith("unscored: ") and "valid" in metric.error
    assert metric.score_breakdown["unscored_reason"] == metric.error.removeprefix("unscored: ")
    with pytest.raises(AssertionError, match="error: unscored: "):
        assert_test(RIGHT, [metric])
    result = evaluate([RIGHT, WRONG], [metric], display_config=QUIET, error_config=ErrorConfig(ignore_errors=False))
    unscored = [t for t in result.test_results if t.metrics_data[0].error]
    assert len(unscored) == 1 and unscored[0].success is False and unscored[0].metrics_data[0].score is None


def test_missing_field_is_deepevals_missing_params_error():
    metric = LocalJudgeMetric("correctness", judge=fake_judge(by_answer))
    case = LLMTestCase(input="Capital of France?", actual_output="Paris")
    with pytest.raises(MissingFieldsError, match="needs expected_output") as caught:
        metric.measure(case)
    assert isinstance(caught.value, MissingTestCaseParamsError) and isinstance(caught.value, LocalJudgeError)
    # so DeepEval's skip_on_missing_params (`deepeval test run -s`) skips the case instead of failing it
    result = evaluate(
        [case, RIGHT], [metric], display_config=QUIET, error_config=ErrorConfig(skip_on_missing_params=True)
    )
    assert [t.success for t in result.test_results if t.metrics_data] == [True]


def test_likelihood_metric_scores_exp_of_the_mean_log_probability():
    # the fake's language model finds a response likely when it copies the input
    metric = LocalJudgeMetric("likelihood", judge=fake_judge(lambda prompt: {}))
    copied = LLMTestCase(input="the cat sat on the mat", actual_output="the cat sat")
    made_up = LLMTestCase(input="the cat sat on the mat", actual_output="zebras run")
    high, low = metric.measure(copied), metric.measure(made_up)
    assert high is not None and low is not None and high > low
    b = metric.score_breakdown
    assert low == pytest.approx(math.exp(b["raw_score"])) and b["likelihood"]["n_tokens"] == len(" zebras run")
    assert metric.reason.startswith("mean log-probability per token of the actual_output (11 tokens)")
    assert metric.threshold is None and metric.is_successful() is None  # it ranks; no pass mark of its own
    with pytest.raises(ValueError, match="threshold"):
        assert_test(copied, [metric])
    marked = LocalJudgeMetric("likelihood", judge=metric.judge, threshold=(high + low) / 2)
    assert_test(copied, [marked])
    with pytest.raises(AssertionError):
        assert_test(made_up, [marked])


def test_pmi_likelihood_metric_reads_as_a_difference():
    judge = fake_judge(lambda prompt: {})
    metric = LocalJudgeMetric("faithfulness_pmi", judge=judge, threshold=0.5)
    case = LLMTestCase(input="When?", actual_output="in 1889", retrieval_context=["It was built in 1889."])
    assert metric.measure(case) is not None and metric.score > 0.5  # the passage makes the answer likelier
    assert metric.score == pytest.approx(1 / (1 + math.exp(-metric.score_breakdown["raw_score"])))
    assert metric.reason.startswith("PMI ") and "given the source" in metric.reason
    assert isinstance(metric.metric, LikelihoodMetric) and metric.metric.threshold == 0.5


def test_deepeval_copies_share_the_judge_and_the_metric():
    metric = LocalJudgeMetric("correctness", judge=fake_judge(by_answer), threshold=0.8)
    (copy,) = copy_metrics([metric])
    assert copy is not metric and copy.judge is metric.judge
    assert copy.metric == metric.metric and copy.threshold == 0.8


def test_a_judge_name_is_loaded_once_per_process(localjudge_scripted):
    loads = []

    def load(asked):
        loads.append((asked.name, asked.device, asked.dtype))
        return fake_judge(by_answer, name=asked.name)

    localjudge_scripted.add_any(load)
    shared_judge.cache_clear()
    try:
        a = LocalJudgeMetric("correctness", judge="my-judge")
        b = GEval("Clarity", criteria="Is it clear?", evaluation_steps=["Read."], judge="my-judge")
        evaluate([RIGHT, WRONG], [a, b], display_config=QUIET, async_config=AsyncConfig(run_async=False))
    finally:
        shared_judge.cache_clear()
    assert a.judge is b.judge and loads == [("my-judge", None, None)]


def test_geval_rubric_sets_the_scale_and_reaches_the_prompt():
    judge = fake_judge(lambda prompt: {"3": 1.0})
    rubric = [
        Rubric(score_range=(1, 2), expected_outcome="Mostly wrong."),
        Rubric(score_range=(3, 4), expected_outcome="Right."),
    ]
    metric = GEval("Correct", criteria="Is it right?", evaluation_steps=["Compare."], rubric=rubric, judge=judge)
    assert (metric.metric.low, metric.metric.high) == (1, 4)
    assert metric.measure(RIGHT) == pytest.approx(2 / 3)  # 3 on 1..4
    assert "- 1-2: Mostly wrong.\n- 3-4: Right." in judge.backend.calls[-1]


def test_geval_without_steps_generates_them_once():
    written = []

    def generator(prompt: str) -> str:
        written.append(prompt)
        return " Compare the answer with the reference.\n2. Score it."

    judge = fake_judge(by_answer, generator)
    metric = GEval(
        "Correct", criteria="Is the answer right?", evaluation_params=["input", "actual_output"], judge=judge
    )
    metric.measure(RIGHT)
    assert metric.score_breakdown["steps_source"] == "generated"
    (copy,) = copy_metrics([metric])
    copy.measure(WRONG)
    assert len(written) == 1 and copy.score_breakdown["steps_source"] == "cache"
    assert copy.score_breakdown["steps"] == ["Compare the answer with the reference.", "Score it."]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "give criteria, evaluation_steps or both"),
        ({"criteria": "x", "evaluation_params": [SingleTurnParams.TOOLS_CALLED]}, "has no localjudge field"),
        ({"criteria": "x", "rubric": ["good"]}, "is not a DeepEval Rubric"),
    ],
)
def test_geval_refuses_what_it_cannot_port(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        GEval("m", judge=fake_judge(by_answer), **kwargs)


def test_geval_takes_deepevals_arguments_in_deepevals_order():
    import inspect as pyinspect

    from deepeval.metrics import GEval as DeepEvalGEval

    theirs = [p for p in pyinspect.signature(DeepEvalGEval.__init__).parameters if p != "self"]
    ours = list(pyinspect.signature(GEval).parameters)
    shared = [p for p in theirs if p in ours]
    assert shared == ours[: len(shared)], "the positional order is DeepEval's"
    assert {"strict_mode", "async_mode", "verbose_mode", "top_logprobs", "model"} <= set(shared)
    judge = fake_judge(lambda prompt: {"8": 1.0})
    # DeepEval's positional call: name, evaluation_params, criteria, evaluation_steps
    metric = GEval("Clear", [SingleTurnParams.ACTUAL_OUTPUT], "Is it clear?", ["Read it."], judge=judge)
    assert metric.metric.fields == ["actual_output"] and metric.metric.criteria == "Is it clear?"
    assert metric.metric.steps == ["Read it."]


def test_geval_keywords_of_deepeval_that_it_honours(capsys):
    judge = fake_judge(lambda prompt: {"8": 1.0})
    metric = GEval(
        "Clear", criteria="Is it clear?", evaluation_steps=["Read."], judge=judge,
        top_logprobs=5, async_mode=False, verbose_mode=True,
    )  # fmt: skip
    assert metric.async_mode is False and metric.verbose_mode is True
    assert metric.measure(RIGHT) == pytest.approx(0.8)  # the whole distribution, top_logprobs or not
    assert "Distribution:" in capsys.readouterr().out  # verbose_mode prints the case's log
    (copy,) = copy_metrics([metric])  # DeepEval's per-case copy keeps them
    assert copy.async_mode is False and copy.verbose_mode is True


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"model": "gpt-4o"}, r"model='gpt-4o' is DeepEval's API model.*pass judge=NAME"),
        ({"strict_mode": True}, r"strict_mode=True passes only the top score.*set threshold="),
    ],
)
def test_geval_refuses_deepeval_keywords_it_cannot_honour_saying_why(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        GEval("m", criteria="x", judge=fake_judge(by_answer), **kwargs)


def test_pairwise_metric_is_refused_with_the_way_out():
    with pytest.raises(ConfigError, match=r"pairwise.*localjudge eval"):
        LocalJudgeMetric("pairwise", judge=fake_judge(by_answer))


RUN = """
from localjudge.integrations.deepeval import LocalJudgeMetric
from localjudge.testing import fake_judge
from deepeval import assert_test, evaluate, telemetry
from deepeval.evaluate.configs import DisplayConfig
from deepeval.test_case import LLMTestCase
metric = LocalJudgeMetric("correctness", judge=fake_judge(lambda prompt: {"5": 1.0}))
case = LLMTestCase(input="q", actual_output="a", expected_output="a")
evaluate([case], [metric], display_config=DisplayConfig(print_results=False, show_indicator=False))
assert_test(case, [metric])
telemetry.flush()
"""


@pytest.mark.parametrize(("setting", "offline"), [(None, True), ("0", False)])
def test_no_network_unless_the_user_turns_telemetry_on(tmp_path, offline_env, setting, offline):
    # a fresh interpreter: importing the adapter first must opt out before deepeval loads; a user's
    # explicit DEEPEVAL_TELEMETRY_OPT_OUT=0 is respected (and shows that the check sees attempts)
    env = offline_env if setting is None else {**offline_env, "DEEPEVAL_TELEMETRY_OPT_OUT": setting}
    out = subprocess.run(
        [sys.executable, "-c", RUN], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    attempts = (tmp_path / "attempts.txt").read_text()
    assert (attempts == "") is offline, attempts
    assert (tmp_path / "deepeval-home" / ".deepeval_telemetry.txt").exists() is not offline


DOCS_STYLE = """
from deepeval import assert_test
from deepeval.test_case import LLMTestCase

from localjudge.integrations.deepeval import LocalJudgeMetric
from localjudge.testing import fake_judge

correctness = LocalJudgeMetric("correctness", judge=fake_judge(lambda prompt: {"4": 0.5, "5": 0.5}))


def test_answer():
    assert_test(LLMTestCase(input="2+2?", actual_output="4", expected_output="4"), [correctness])
"""


def test_docs_style_file_in_a_fresh_pytest_stays_offline(tmp_path, offline_env):
    # deepeval is imported first here, by its pytest plugin, with telemetry still on: the adapter's
    # opt-out, imported later with the test file, must still come before anything is sent
    (tmp_path / "test_answers.py").write_text(DOCS_STYLE, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "test_answers.py"],
        env=offline_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, (out.stdout + out.stderr)[-2000:]
    assert "1 passed" in out.stdout and "Running teardown with pytest sessionfinish" in out.stdout  # its plugin ran
    assert (tmp_path / "attempts.txt").read_text() == ""
