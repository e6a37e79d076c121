"""The inspect_ai scorer in a real inspect eval (mockllm as the model), with the scripted fake judge."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("inspect_ai")  # the `inspect` extra, Python 3.11+

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate

from localjudge.errors import LocalJudgeError
from localjudge.integrations.inspect_ai import localjudge_scorer
from localjudge.testing import fake_judge


def answer(text: str) -> ModelOutput:
    """mockllm's reply, with its token usage given: else mockllm counts tokens with an encoding it downloads."""
    output = ModelOutput.from_content("mockllm/model", text)
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def run_eval(samples, scorer, outputs, log_dir):
    """One inspect eval of `samples`, the mockllm model answering `outputs` in turn; the eval log."""
    model = get_model("mockllm/model", custom_outputs=[answer(text) for text in outputs])
    (log,) = inspect_eval(
        Task(dataset=samples, solver=generate(), scorer=scorer), model=model, log_dir=str(log_dir), display="none"
    )
    assert log.status == "success", log.error
    return log


def by_answer(prompt: str) -> dict[str, float]:
    """An answer of Lyon scores 1, any other 5; a prompt about 'garbled' gets no valid score."""
    if "garbled" in prompt:
        return {"x": 1.0}
    return {"1": 1.0} if "Lyon" in prompt else {"5": 1.0}


def test_scores_carry_the_metric_judge_distribution_and_valid_mass(tmp_path):
    samples = [
        Sample(id="right", input="Capital of France?", target="Paris"),
        Sample(id="wrong", input="Capital of France?", target="Paris"),
    ]
    scorer = localjudge_scorer("correctness", judge=fake_judge(by_answer, name="fake-judge"))
    log = run_eval(samples, scorer, ["Paris.", "Lyon."], tmp_path)
    scores = {s.output.completion: s.scores["localjudge_scorer"] for s in log.samples}  # samples may run in any order
    assert scores["Paris."].value == pytest.approx(1.0) and scores["Lyon."].value == pytest.approx(0.0)
    assert scores["Lyon."].answer == "Lyon."
    meta = scores["Paris."].metadata
    assert (meta["metric"], meta["kind"], meta["judge"]) == ("correctness", "geval", "fake-judge")
    assert meta["distribution"] == {"1": 0.0, "2": 0.0, "3": 0.0, "4": 0.0, "5": 1.0}
    assert meta["valid_mass"] == pytest.approx(1.0) and meta["passed"] is True
    assert scores["Paris."].explanation.startswith("expected score 5.00 on 1..5")
    assert log.results.scores[0].metrics["mean"].value == pytest.approx(0.5)


def test_an_unreadable_score_is_inspects_unscored_value_skipped_by_the_mean(tmp_path):
    samples = [
        Sample(id="right", input="Capital of France?", target="Paris"),
        Sample(id="garbled", input="garbled question", target="Paris"),
        Sample(id="no-target", input="Capital of France?"),  # correctness reads expected_output
    ]
    scorer = localjudge_scorer("correctness", judge=fake_judge(by_answer))
    log = run_eval(samples, scorer, ["Paris.", "Paris.", "Paris."], tmp_path)
    scores = {s.id: s.scores["localjudge_scorer"] for s in log.samples}
    garbled, untargeted = scores["garbled"], scores["no-target"]
    assert math.isnan(garbled.value) and garbled.reason == "grader_failed"
    assert "min_valid_mass" in garbled.metadata["unscored_reason"] and garbled.metadata["valid_mass"] == 0.0
    assert math.isnan(untargeted.value) and untargeted.reason == "scoring_failed"
    assert "expected_output" in untargeted.explanation
    assert log.results.scores[0].metrics["mean"].value == pytest.approx(1.0)  # the unscored two left out


def test_passages_come_from_the_samples_metadata(tmp_path):
    seen: list[str] = []
    judge = fake_judge(lambda prompt: seen.append(prompt) or {"4": 1.0})
    sample = Sample(input="When?", target="1932", metadata={"retrieved_contexts": ["The bridge opened in 1932."]})
    run_eval([sample], localjudge_scorer("faithfulness", judge=judge), ["In 1932."], tmp_path)
    assert any("The bridge opened in 1932." in p for p in seen)


def test_a_pairwise_metric_is_refused():
    with pytest.raises(LocalJudgeError, match="compares two outputs"):
        localjudge_scorer("pairwise", judge=fake_judge(by_answer))
