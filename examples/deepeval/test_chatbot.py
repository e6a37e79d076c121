"""A DeepEval test file, written as DeepEval's docs write one, scored by localjudge's embedded judge.

Run it with DeepEval's runner or with pytest (no API key, no network):

    deepeval test run examples/deepeval/test_chatbot.py
    pytest examples/deepeval/test_chatbot.py

The one change from DeepEval's quickstart: GEval comes from localjudge.integrations.deepeval and
takes a local judge instead of an API model. The embedded 135M judge checks the wiring, not your
chatbot: it does not separate right from wrong answers well; name a larger judge for verdicts.
"""

from deepeval import assert_test
from deepeval.test_case import LLMTestCase, SingleTurnParams

from localjudge.integrations.deepeval import GEval, LocalJudgeMetric

JUDGE = "smollm2-135m"  # loaded once, shared by every metric that names it

correctness = GEval(
    name="Correctness",
    evaluation_steps=[
        "Check whether the facts in 'actual output' contradict any facts in 'expected output'.",
        "Heavily penalize a contradiction of the expected output.",
        "Vague language, or contradicting OPINIONS, are OK.",
    ],
    evaluation_params=[SingleTurnParams.INPUT, SingleTurnParams.ACTUAL_OUTPUT, SingleTurnParams.EXPECTED_OUTPUT],
    threshold=0.5,
    judge=JUDGE,
)

# a likelihood metric: how much likelier the retrieved passages make the answer (PMI)
faithfulness = LocalJudgeMetric("faithfulness_pmi", judge=JUDGE, threshold=0.5)


def test_correctness():
    test_case = LLMTestCase(
        input="What is the capital of France?",
        actual_output="The capital of France is Paris.",
        expected_output="Paris is the capital of France.",
    )
    assert_test(test_case, [correctness])


def test_faithfulness():
    test_case = LLMTestCase(
        input="How tall is the Eiffel Tower?",
        actual_output="The Eiffel Tower is 330 metres tall.",
        retrieval_context=[
            "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. It is 330 metres tall."
        ],
    )
    assert_test(test_case, [faithfulness])
