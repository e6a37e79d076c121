"""The scripted fake judge on text it has no token for."""

from __future__ import annotations

import pytest

from localjudge.testing import fake_judge


def test_likelihood_of_non_ascii_text_has_one_log_probability_per_character():
    # regression: the fake's catch-all token decoded to "<other>" (7 characters), so the fake lm got a
    # longer continuation than the judge's tokens and `eval` of the bundled RAG demo failed on "–"
    judge = fake_judge(lambda prompt: {"4": 1.0})
    (reading,) = judge.loglikelihood(["Résumé: the bridge opened in 1932 – in March."], [" It opened – in 1932."])
    assert len(reading.logprobs) == len(" It opened – in 1932.")
    assert reading.mean == pytest.approx(sum(reading.logprobs) / len(reading.logprobs))
