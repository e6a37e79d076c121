"""The inspect_ai scorer in a real inspect eval: mockllm answers, the embedded SmolLM2 judge scores."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("inspect_ai")  # the `inspect` extra, Python 3.11+

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate

from localjudge.integrations.inspect_ai import localjudge_scorer

pytestmark = pytest.mark.slow

ANSWERS = {"paris": "Paris is the capital of France.", "lyon": "Lyon is the capital of France.", "rome": "Rome."}


def _answer(text: str) -> ModelOutput:
    output = ModelOutput.from_content("mockllm/model", text)
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no token counting (a download)
    return output


def test_a_real_inspect_eval_scored_by_the_embedded_judge(smollm_judge, tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))
    samples = [
        Sample(id="paris", input="What is the capital of France?", target="Paris"),
        Sample(id="lyon", input="What is the capital of France?", target="Paris"),
        Sample(id="rome", input="What is the capital of Italy?", target="Rome"),
    ]
    model = get_model("mockllm/model", custom_outputs=[_answer(ANSWERS[s.id]) for s in samples])
    task = Task(dataset=samples, solver=generate(), scorer=localjudge_scorer("correctness", judge=smollm_judge))
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none", max_samples=1)
    assert log.status == "success", log.error
    scored = []
    for sample in log.samples:
        score = sample.scores["localjudge_scorer"]
        meta = score.metadata
        assert (meta["metric"], meta["judge"], meta["kind"]) == ("correctness", "smollm2-135m", "geval")
        assert set(meta["distribution"]) == {"1", "2", "3", "4", "5"}
        assert 0.0 < meta["valid_mass"] <= 1.0
        assert meta["judge_record"]["provenance"]  # the hash of the judge's weights
        if math.isnan(score.value):  # inspect's unscored value, with the reason
            assert score.reason == "grader_failed" and "min_valid_mass" in meta["unscored_reason"]
        else:
            assert math.isclose(sum(meta["distribution"].values()), 1.0, abs_tol=1e-6)
            assert 0.0 <= score.value <= 1.0 and score.answer == ANSWERS[sample.id]
            scored.append(score.value)
    mean = log.results.scores[0].metrics["mean"].value
    assert scored and mean == pytest.approx(sum(scored) / len(scored))  # unscored samples left out
