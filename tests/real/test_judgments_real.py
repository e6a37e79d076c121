"""Token-level readings and entailment on the real default judge (SmolLM2-135M): a changed number holds
the token the reading blames, and the yes/no answer is read with enough mass to be scored."""

from __future__ import annotations

import pytest

from localjudge.io.cases import TestCase
from localjudge.metrics import builtin_metric
from localjudge.runs.evaluate import evaluate

pytestmark = pytest.mark.slow

DOC = (
    "The company is increasing its quarterly dividend to $0.13 per share. It also plans to reduce its net debt "
    "below $25 billion by the end of 2024, the chief financial officer said on the call."
)
KEPT = TestCase(id="kept", input=DOC, actual_output="The company is raising its dividend to $0.13 per share.")
EDITED = TestCase(id="edited", input=DOC, actual_output="The company is raising its dividend to $0.19 per share.")


def test_the_changed_number_is_the_lowest_word(smollm_judge):
    res = evaluate([KEPT, EDITED], [builtin_metric("consistency_tokens")], smollm_judge, progress=False)
    kept, edited = res.records
    assert edited.raw_score < kept.raw_score
    worst = edited.detail.tokens.worst[0]
    # the lowest token among names and numbers is the changed digit, and the record names its word
    assert worst.text == "9" and "0.19" in worst.word and worst.value == edited.raw_score < 0
    assert edited.detail.tokens.worst_sentence.text.strip() == EDITED.actual_output


def test_entailment_is_read_from_the_real_judge(smollm_judge):
    (rec,) = evaluate([EDITED], [builtin_metric("consistency_entailment")], smollm_judge, progress=False).records
    assert rec.score is not None and 0 < rec.score < 1 and rec.valid_mass >= 0.1
    assert set(rec.distribution) == {"Yes", "No"}
