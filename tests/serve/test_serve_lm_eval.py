"""lm-eval-harness's `local-completions` model reading log-likelihoods from the server (over the fake judge): what it
sends for a loglikelihood request (token ids of context + continuation, echo, max_tokens 1, logprobs 1) comes back
as exactly `Judge.loglikelihood` of the same texts, and its greedy flag is the full distribution's. The whole task
path (a task on a local dataset, the real judge) is in tests/real/test_serve_real.py."""

from __future__ import annotations

import pytest
from serving import running

from localjudge.testing import fake_judge

pytest.importorskip("lm_eval")

PAIRS = [
    ("The cat sat on the mat. The cat", " sat on the mat."),
    ("The cat sat on the mat. The cat", " flew to the moon."),
    ("Question: what is 2+2? Answer:", " 4"),
    ("abc", " abcabc"),
]


def causal_lm(prompt: str, continuation: str) -> list[float]:
    """A fake causal LM: a character is likely (-0.5) when it and the one before it already occurred as a pair in
    the text before it, else unlikely (-3.0). Like a real LM, and unlike `copy_lm`, it reads only the text before
    each character, wherever the prompt ends: the server reads a prompt's tokens after its first one."""
    text, out = prompt, []
    for ch in continuation:
        out.append(-0.5 if text and text[-1] + ch in text else -3.0)
        text += ch
    return out


def test_local_completions_loglikelihoods_are_the_judges():
    from lm_eval.api.instance import Instance
    from lm_eval.models.openai_completions import LocalCompletionsAPI

    judge = fake_judge(lambda p: {"3": 0.9}, lm=causal_lm)
    with running(judge) as server:
        lm = LocalCompletionsAPI(
            base_url=server.url + "/v1/completions",
            model="fake",
            tokenizer_backend="remote",
            tokenized_requests=True,
            max_retries=1,
        )
        requests = [
            Instance(request_type="loglikelihood", doc={}, arguments=pair, idx=k) for k, pair in enumerate(PAIRS)
        ]
        got = lm.loglikelihood(requests, disable_tqdm=True)
    want = judge.loglikelihood([p for p, _ in PAIRS], [c for _, c in PAIRS])
    assert [ll for ll, _ in got] == pytest.approx([w.sum for w in want], abs=1e-6)
    # the fake puts the rest of each position's mass on one other token: a copied continuation is greedy
    assert [greedy for _, greedy in got] == [all(x > -0.69 for x in w.logprobs) for w in want]
    assert [greedy for _, greedy in got] == [True, False, False, False]  # both kinds occur
