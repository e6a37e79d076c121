"""Prefixes kept between calls (a server's requests): the same bits, fewer tokens computed.

A judge whose backend keeps prefixes (`HFBackend.keep_prefixes`) scores rows that arrive one call
at a time: the second row of an article finds the prefix it shares with the first, later rows find
that prefix kept. Every score must be the bits of a judge that keeps nothing, in fp32 on tiny
random Llama and Gemma 3 models (sliding windows crossing the prefix).
"""

from __future__ import annotations

import numpy as np
import pytest

from localjudge import Judge
from localjudge.engine.options import EngineOptions
from localjudge.testing.tiny_models import tiny_gemma3, tiny_info, tiny_llama

HEAD = "the answer is good and the response is fluent and helpful. " * 3
ARTICLES = ["quality bad yes maybe no rating 7 and 10. " * 20, "Total 100 and the answer is bad. " * 20]
SUMMARIES = ["Score: the answer is good", "the response is bad", "yes maybe", "Rating 3/10 and 7"]


def _judge(model, tokenizer, keep: int) -> Judge:
    options = EngineOptions(device="cpu", dtype="float32", token_budget=4096, reuse_prefix=True)
    judge = Judge.from_model(model, tokenizer, tiny_info(1024), options)
    judge.backend.keep_prefixes(keep)
    return judge


@pytest.mark.parametrize("build", [tiny_llama, tiny_gemma3])
def test_kept_prefixes_change_no_bit_and_save_the_article(build, tiny_tokenizer):
    model = build(tiny_tokenizer)
    texts = [f"{HEAD}{a}{s}. Score:" for a in ARTICLES for s in SUMMARIES]
    plain, kept = _judge(model, tiny_tokenizer, 0), _judge(model, tiny_tokenizer, 4)
    want = [plain.score_texts([t], 1, 10)[0] for t in texts]
    with kept.backend.observe_forwards() as calls:
        got = [kept.score_texts([t], 1, 10)[0] for t in texts]  # one request after another
        pair = kept.score_texts(texts[1:3], 1, 10)  # a batch whose prefix is kept
    for a, b in zip(want, [*got, *pair]):
        assert a.probs == b.probs and a.valid_mass == b.valid_mass
    rows = [c for c in calls if c.kind != "prefill"]
    # each article's first row runs whole (the instructions it shares with the rows before are too
    # short to be worth a prefill); every later one after the article, prefilled at its second row
    assert [r.shared > 0 for r in rows[:8]] == [False, True, True, True, False, True, True, True]
    # each prefix prefilled once, where a row first runs after it; none for the batch (kept)
    firsts = list(dict.fromkeys(r.shared for r in rows[1:] if r.shared))
    assert [c.lengths[0] for c in calls if c.kind == "prefill"] == firsts and len(firsts) >= 2
    assert len(kept.backend.runner.prefixes.caches) == len(firsts)


def test_likelihoods_one_call_at_a_time_never_share_a_calls_placeholders(tiny_tokenizer):
    # token_logprobs marks each item's continuation with placeholder ids of its own call (-1, -2...):
    # the same prompt in the next call must not reuse them as a prefix
    model = tiny_llama(tiny_tokenizer)
    plain, kept = _judge(model, tiny_tokenizer, 0), _judge(model, tiny_tokenizer, 4)
    grid = plain.backend.runner.grid
    words = f"{HEAD}{ARTICLES[0]}".split()
    # a prompt whose real tokens (all but its last) end just before a grid line: the placeholders cross it
    prompt = next(
        p
        for k in range(len(words), 0, -1)
        if (len(p := plain.backend.encode(" ".join(words[:k]) + " Summary:")) - 1) % grid == grid - 1
    )
    conts = [plain.backend.encode_continuation(" " + s) for s in SUMMARIES]
    for c in conts:  # one request after another, each the call's item 0
        a, b = plain.backend.token_logprobs([prompt], [c])[0], kept.backend.token_logprobs([prompt], [c])[0]
        assert np.array_equal(a, b)


def test_a_judge_keeps_nothing_by_default(tiny_tokenizer):
    judge = _judge(tiny_llama(tiny_tokenizer), tiny_tokenizer, 0)
    judge.score_texts([f"{HEAD}{ARTICLES[0]}{s}. Score:" for s in SUMMARIES], 1, 10)
    assert not judge.backend.runner.prefixes.caches
