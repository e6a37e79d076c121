"""`generate_logprobs`: the engine's cached greedy decoding reading each step's top tokens (the OpenAI endpoints'
logprobs). Each step's top k are the full softmax's of a fresh forward over the prompt and the tokens so far (a
float64 reference), bitwise what `token_logprobs` reads there and the same bits in any batch; the tokens are
`generate`'s; echo, stop strings, EOS and the context limit end or read as the server promises."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from localjudge import Judge
from localjudge.engine.backend import GenerationRequest
from localjudge.engine.options import EngineOptions
from localjudge.engine.packing import Packing, plan_forward, plan_fresh_step
from localjudge.errors import ContextLengthError
from localjudge.testing import fake_judge
from localjudge.testing.tiny_models import tiny_info, tiny_llama

pytestmark = pytest.mark.usefixtures("torch_one_thread")

TEXTS = ["the answer is good and fluent", "Score: 7 and 10 and the answer is", "yes", "the answer is good and so"]
K = 4


@pytest.fixture(scope="module")
def judge(tiny_tokenizer):
    options = EngineOptions(device="cpu", dtype="float32", token_budget=4096, grid=16)
    return Judge.from_model(tiny_llama(tiny_tokenizer), tiny_tokenizer, tiny_info(1024), options)


def requests(judge, steps=12, **kw):
    return [GenerationRequest(judge.backend.encode(t), steps, **kw) for t in TEXTS]


def test_each_steps_top_tokens_are_a_fresh_forwards_full_softmax(judge, tiny_tokenizer):
    reference = tiny_llama(tiny_tokenizer).double()  # the same weights (seeded), in float64
    for asked, got in zip(requests(judge), judge.backend.generate_logprobs(requests(judge), K)):
        assert len(got.tokens) == 12 and got.readings.shape == (12, 1 + 2 * K) and got.finish_reason == "length"
        for step, row in enumerate(got.readings):
            context = list(asked.ids) + got.tokens[:step]
            with torch.inference_mode():
                logits = reference(torch.tensor([context])).logits[0, -1]  # (V,) float64
            want_lp, want_ids = torch.log_softmax(logits, -1).topk(K)
            assert row[1 + K :].astype(int).tolist() == want_ids.tolist()
            assert np.allclose(row[1 : 1 + K], want_lp.numpy(), atol=1e-5)
            assert got.tokens[step] == want_ids[0] and row[0] == row[1]  # greedy: the first of the top


def test_each_step_is_bitwise_a_fresh_read_and_the_same_in_any_batch(judge):
    backend = judge.backend
    assert backend.bitwise  # the claim holds where the engine claims bitwise results
    together = backend.generate_logprobs(requests(judge), K)
    alone = [backend.generate_logprobs([r], K)[0] for r in requests(judge)]
    for asked, got, one in zip(requests(judge), together, alone):
        assert got.tokens == one.tokens and np.array_equal(got.readings, one.readings)
        ids = list(asked.ids)
        fresh = backend.token_logprobs([ids + got.tokens[:s] for s in range(12)], [[0]] * 12, top=K)
        assert np.array_equal(got.readings[:, 1:], np.stack([f[-1, 1:] for f in fresh]))


def test_the_tokens_are_generates(judge):
    got = judge.backend.generate_logprobs(requests(judge, steps=8), 1)
    texts = [judge.backend.tokenizer.decode(g.tokens, skip_special_tokens=True) for g in got]
    assert texts == judge.generate(TEXTS, max_new_tokens=8)


def test_echo_reads_the_prompt_as_token_logprobs_does(judge):
    backend = judge.backend
    for steps in (0, 3):
        got = backend.generate_logprobs(requests(judge, steps=steps, echo=True), K)
        for asked, g in zip(requests(judge), got):
            ids = list(asked.ids)
            want = backend.token_logprobs([ids[:1]], [ids[1:]], top=K)[0]
            assert np.array_equal(g.prompt, want) and len(g.tokens) == steps


def test_a_stop_string_ends_the_generation_after_the_token_that_completes_it(judge):
    free = judge.backend.generate_logprobs(requests(judge, steps=6), 1)[0]
    surface = judge.backend.token_surfaces()[free.tokens[2]]
    got = judge.backend.generate_logprobs([requests(judge, steps=6, stops=(surface,))[0]], 1)[0]
    first = next(k for k, t in enumerate(free.tokens) if surface in judge.backend.token_surfaces()[t])
    assert got.tokens == free.tokens[: first + 1] and got.finish_reason == "stop"
    assert np.array_equal(got.readings, free.readings[: first + 1])


def test_an_end_of_sequence_token_ends_it_and_is_not_returned(judge, monkeypatch):
    free = judge.backend.generate_logprobs(requests(judge, steps=6), 1)[0]
    monkeypatch.setattr(judge.backend, "_eos_ids", lambda: {free.tokens[3]})
    got = judge.backend.generate_logprobs([requests(judge, steps=6)[0]], 1)[0]
    first = free.tokens.index(free.tokens[3])
    assert got.tokens == free.tokens[:first] and got.finish_reason == "stop" and len(got.readings) == first


def test_a_generation_past_the_context_is_refused_naming_the_prompt(judge):
    ids = judge.backend.encode(TEXTS[0])
    limited = judge.backend.with_options(judge.options)
    limited.max_context = len(ids) + 2
    assert len(limited.generate_logprobs([GenerationRequest(ids, 2)], 1)[0].tokens) == 2
    with pytest.raises(ContextLengthError, match=r"prompt 0 .* run past the judge's context"):
        limited.generate_logprobs([GenerationRequest(ids, 3)], 1)


@pytest.mark.parametrize(("n", "fed"), [(3, 0), (3, 1), (5, 2), (4, 7)])
def test_a_fresh_step_gets_the_block_a_forward_over_the_row_gives_its_last_token(n, fed):
    g, s = 4, 4
    step = plan_fresh_step(Packing.of([n, 2], tail=0, shared=s, grid=g), fed).groups
    whole = plan_forward(Packing.of([n + fed + 1], tail=0, shared=s, grid=g)).groups[-1]  # the last block, alone
    mine, i = next((x, int(k)) for x in step for k in np.flatnonzero((x.queries[:, 0] == 0).numpy()))  # row 0's
    assert mine.queries.shape[1:] == whole.queries.shape[1:] and mine.keys.shape[1:] == whole.keys.shape[1:]
    assert torch.equal(mine.allowed[i], whole.allowed[0]) and torch.equal(mine.distance[i], whole.distance[0])
    assert mine.slots[mine.write // g == i].tolist() == [0]  # one real query, the step's row 0
    assert (mine.write[mine.write // g == i] % g).tolist() == whole.write[-1:].tolist()  # at the forward's row


def test_the_scripted_backend_reads_its_distribution_step_by_step():
    judge = fake_judge(lambda p: {}, lm=lambda p, c: [-0.2 if "ab" in p else -2.0] * len(c))
    ids, other = judge.backend.encode("xab"), judge.backend.encode("\ufffd")[0]
    got = judge.backend.generate_logprobs([GenerationRequest(ids, 3)], 2)[0]
    assert got.tokens == [0, 0, 0] and got.finish_reason == "length"  # a space: its log P -0.2 beats the rest
    assert got.readings[:, 0].tolist() == [-0.2] * 3 and got.prompt.shape == (0, 5)
    # echoed, the first step is read in the prompt's call (its lm sees "x" before it), as the server read it
    echoed = judge.backend.generate_logprobs([GenerationRequest(ids, 3, echo=True)], 2)[0]
    assert echoed.tokens == [other, 0, 0] and echoed.prompt.shape == (2, 5)
    stopped = judge.backend.generate_logprobs([GenerationRequest(ids[:1], 3, stops=("\ufffd",))], 1)[0]
    assert stopped.tokens == [other] and stopped.finish_reason == "stop"
