"""`token_logprobs(..., top=k)`: the token's log P bitwise as without `top`, and the k most likely tokens of the full
fp32 softmax at each position, as a plain one-item forward gives them (the OpenAI endpoints' top_logprobs)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from localjudge import Judge
from localjudge.engine.options import EngineOptions
from localjudge.testing.tiny_models import tiny_info, tiny_llama

pytestmark = pytest.mark.usefixtures("torch_one_thread")

TEXTS = ["the answer is good and fluent", "Score: 7 and 10 and the answer", "yes"]


@pytest.fixture(scope="module")
def judge(tiny_tokenizer):
    options = EngineOptions(device="cpu", dtype="float32", token_budget=4096, grid=16)
    return Judge.from_model(tiny_llama(tiny_tokenizer), tiny_tokenizer, tiny_info(1024), options)


@pytest.mark.parametrize("k", [1, 5])
def test_top_tokens_are_the_full_softmaxs_and_the_token_reading_is_unchanged(judge, k):
    backend = judge.backend
    ids = [backend.encode(t) for t in TEXTS]
    prompts, conts = [i[:1] for i in ids], [i[1:] for i in ids]
    plain = backend.token_logprobs(prompts, conts)
    read = backend.token_logprobs(prompts, conts, top=k)
    for row_ids, p, r in zip(ids, plain, read):
        assert r.shape == (len(row_ids) - 1, 1 + 2 * k)
        assert np.array_equal(r[:, 0], p)  # bitwise: the same head, the same reduction
        with torch.inference_mode():
            logits = backend.model(torch.tensor([row_ids])).logits[0, :-1].float()  # (n - 1, V)
        full = torch.log_softmax(logits, dim=-1).double()
        want_lp, want_ids = full.topk(k, dim=-1)
        assert r[:, 1 + k :].astype(int).tolist() == want_ids.tolist()
        assert np.allclose(r[:, 1 : 1 + k], want_lp.numpy(), atol=1e-5)
        assert np.all(np.diff(r[:, 1 : 1 + k], axis=1) <= 0)  # most likely first
        # the token read is among the top when its log P reaches the k-th best
        for row, target in zip(r, row_ids[1:]):
            if row[0] >= row[k]:
                assert target in row[1 + k :].astype(int)
