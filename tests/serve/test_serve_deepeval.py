"""DeepEval's G-Eval through its local (OpenAI-compatible) model setting, against the server over the fake judge.

What it reads: the *parsed text* of a chat completion, never log-probabilities. DeepEval's `LocalModel` has no
`generate_raw_response`, so G-Eval's logprob-weighted path (`generate_rubric_score`) raises AttributeError on it and
falls back to asking for the JSON {"reason": ..., "score": ...} and parsing the score from the text. The fake
judge writes that JSON with score 7 while its distributions put no mass on 7: a 0.7 can only come from the text.
"""

from __future__ import annotations

import json

import pytest
from serving import running

from localjudge.testing import fake_judge

deepeval = pytest.importorskip("deepeval")

KEY = "deepeval-local-key"


def test_g_eval_with_local_model_reads_the_parsed_text_score():
    from deepeval.metrics import GEval
    from deepeval.models import LocalModel
    from deepeval.test_case import LLMTestCase, SingleTurnParams

    judge = fake_judge(
        lambda prompt: {"2": 0.9},  # what a logprob reading would see
        generator=lambda prompt: json.dumps({"reason": "Mostly right.", "score": 7}),
    )
    with running(judge, api_key=KEY) as server:
        model = LocalModel(model="fake", base_url=server.url + "/v1", api_key=KEY)
        metric = GEval(
            name="Correctness",
            evaluation_steps=["Compare the actual output with the expected output."],
            evaluation_params=[SingleTurnParams.ACTUAL_OUTPUT, SingleTurnParams.EXPECTED_OUTPUT],
            model=model,
            async_mode=False,
        )
        case = LLMTestCase(input="2+2?", actual_output="4", expected_output="4")
        metric.measure(case)
    assert metric.score == pytest.approx(0.7) and metric.reason == "Mostly right."
    assert [p for p in judge.backend.calls if "Compare the actual output" in p]  # it asked the judge, by chat
