"""The transformers engine on tiny random models, checked against the brute-force reference.

The tokenizer is a byte-level BPE trained on the fly on number-heavy text, so numerals reach the
model both merged ("10", " 100") and split ("1", "0", " " + "1"): exactly the cases where a
score can be misread. The reference runs one unbatched forward per token path; the engine reads
the whole tree in one batched pass with tree attention masks. They must agree to 1e-5 (fp32).
"""

from __future__ import annotations

import logging
import math

import pytest
import torch
from reference import brute_force_scores, continues_word, decoded_vocab, label_variants

from localjudge import Judge, JudgeInfo
from localjudge.engine.options import EngineOptions
from localjudge.errors import ContextLengthError
from localjudge.testing.tiny_models import tiny_gemma3, tiny_info, tiny_llama

pytestmark = pytest.mark.usefixtures("torch_one_thread")

TOL = 1e-5

PROMPTS = [
    "the answer is good. Score:",
    "Rating 7/10 and the response is fluent. Score: ",  # ends in a space token: unspaced numerals follow
    "yes",
]
# 1 to ~60 tokens, so batches mix very different lengths (lots of left padding)
MIXED = [
    "Score:",
    "the response is helpful and fluent and the answer is good yes maybe no. Rating 3/10 and 7. Score:",
    "Total",
    "quality bad. Score: ",
    " ".join(["the answer is good and fluent"] * 8) + ". Score:",
    "Rating 10/10. Score: 1",
    "no",
]


def _info(context_length: int = 512) -> JudgeInfo:
    return tiny_info(context_length)


def _judge(model, tokenizer, token_budget: int = 4096) -> Judge:
    return Judge.from_model(
        model, tokenizer, _info(), EngineOptions(device="cpu", dtype="float32", token_budget=token_budget)
    )


@pytest.fixture(scope="module")
def llama(tiny_tokenizer):
    return tiny_llama(tiny_tokenizer)


@pytest.fixture(scope="module")
def vocab(tiny_tokenizer):
    return decoded_vocab(tiny_tokenizer)


def _assert_scores_match(dists, model, tokenizer, vocab, texts, low, high, tol=TOL):
    values = [str(v) for v in range(low, high + 1)]
    for text, d in zip(texts, dists):
        ref = brute_force_scores(model, tokenizer, text, values, vocab)
        mass = sum(ref.values())
        assert d.valid_mass == pytest.approx(mass, abs=tol), text
        for v in range(low, high + 1):
            assert d.probs[v] == pytest.approx(ref[str(v)] / mass, abs=tol), (text, v)


def _assert_same(a, b, tol=TOL):
    assert a.valid_mass == pytest.approx(b.valid_mass, abs=tol)
    for k in a.probs:
        assert a.probs[k] == pytest.approx(b.probs[k], abs=tol), k


# -- the tokenizer really has the hard cases --------------------------------------------------------


def test_tokenizer_has_merged_and_split_numerals(tiny_tokenizer, llama):
    v = tiny_tokenizer.get_vocab()
    for token in ["0", "1", "10", "100", "Ġ", "Ġ1", "Ġ10", "Ġ100"]:
        assert token in v, token
    assert tiny_tokenizer.convert_ids_to_tokens(tiny_tokenizer("Score: 10")["input_ids"])[-1] == "Ġ10"
    tree = _judge(llama, tiny_tokenizer).score_tree(0, 10)
    depths = {}
    for text, depth in zip(tree.texts, tree.depths):
        depths.setdefault(text, set()).add(int(depth))
    assert depths["10"] == {1, 2}  # "10" and "1"+"0"
    assert depths[" 10"] == {1, 2, 3}  # " 10"; " "+"10", " 1"+"0"; " "+"1"+"0"


# -- exact against brute force ------------------------------------------------------------------------


@pytest.mark.parametrize(("low", "high"), [(0, 10), (1, 100)])
def test_scores_match_brute_force(tiny_tokenizer, llama, vocab, low, high):
    dists = _judge(llama, tiny_tokenizer).score_texts(PROMPTS, low, high)
    assert any(d.scored for d in dists)  # the tiny model does put mass on scores
    _assert_scores_match(dists, llama, tiny_tokenizer, vocab, PROMPTS, low, high)


@pytest.mark.parametrize("labels", [("A", "B"), ("Yes", "No")])
def test_labels_match_brute_force(tiny_tokenizer, llama, vocab, labels):
    dists = _judge(llama, tiny_tokenizer).score_labels(PROMPTS, list(labels))
    for text, d in zip(PROMPTS, dists):
        ref = brute_force_scores(
            llama, tiny_tokenizer, text, list(labels), vocab, is_continuation=continues_word, variants=label_variants
        )
        mass = sum(ref.values())
        assert mass > 0
        assert d.valid_mass == pytest.approx(mass, abs=TOL)
        for lab in labels:
            assert d.probs[lab] == pytest.approx(ref[lab] / mass, abs=TOL), (text, lab)


def test_padded_embedding_matches_brute_force(tiny_tokenizer, vocab):
    # Real checkpoints often have more logits than tokenizer entries (Qwen2.5: 152064 vs 151665);
    # the extra ids have no text, so they end a numeral and never continue it.
    model = tiny_llama(tiny_tokenizer, extra_vocab=8)
    dists = _judge(model, tiny_tokenizer).score_texts(PROMPTS[:2], 0, 10)
    _assert_scores_match(dists, model, tiny_tokenizer, vocab, PROMPTS[:2], 0, 10)


@pytest.mark.parametrize("builder", [tiny_llama, tiny_gemma3])
def test_reference_prompt_cache_agrees_with_full_forwards(tiny_tokenizer, vocab, builder):
    # the embedded-judge tests use the cached reference (full forwards are too slow on CPU there)
    model = builder(tiny_tokenizer)
    values = [str(v) for v in range(11)]
    for text in (PROMPTS[1], LONG[0]):
        full = brute_force_scores(model, tiny_tokenizer, text, values, vocab)
        cached = brute_force_scores(model, tiny_tokenizer, text, values, vocab, reuse_prompt=True)
        assert cached == pytest.approx(full, abs=1e-6)


# -- batch composition never changes a result ------------------------------------------------------


@pytest.mark.parametrize("budget", [1, 200, 700, 100_000])
def test_batch_invariance(tiny_tokenizer, llama, budget):
    alone = [_judge(llama, tiny_tokenizer).score_texts([t], 0, 10)[0] for t in MIXED]
    judge = _judge(llama, tiny_tokenizer, token_budget=budget)
    with judge.backend.observe_forwards() as calls:
        together = judge.score_texts(MIXED, 0, 10)
    sizes = [len(c.lengths) for c in calls if c.kind == "batch"]  # rows of each tree batch
    assert sum(sizes) == len(MIXED)
    if budget == 1:  # every prompt + tree exceeds the budget: one prompt per forward
        assert sizes == [1] * len(MIXED)
    if budget == 100_000:
        assert sizes == [len(MIXED)]
    for a, b in zip(alone, together):
        _assert_same(a, b)


def test_results_follow_input_order(tiny_tokenizer, llama):
    judge = _judge(llama, tiny_tokenizer, token_budget=300)
    forward = judge.score_texts(MIXED, 1, 5, min_valid_mass=0.0)
    backward = judge.score_texts(MIXED[::-1], 1, 5, min_valid_mass=0.0)
    for a, b in zip(forward, backward[::-1]):
        _assert_same(a, b)
    # the prompts give different distributions, so a permutation would be caught
    assert len({round(d.expected, 6) for d in forward}) == len(MIXED)


def test_unscored_threshold_end_to_end(tiny_tokenizer, llama):
    judge = _judge(llama, tiny_tokenizer)
    low_bar = judge.score_texts(PROMPTS, 0, 10, min_valid_mass=0.0)
    high_bar = judge.score_texts(PROMPTS, 0, 10, min_valid_mass=0.99)
    for a, b in zip(low_bar, high_bar):
        assert a.scored and 0 < a.valid_mass < 0.99
        assert not b.scored and math.isnan(b.expected) and b.mode is None and "threshold" in b.unscored_reason
        assert b.valid_mass == pytest.approx(a.valid_mass)  # the mass is still reported
    assert judge.score_texts([], 0, 10) == []


def test_long_and_empty_prompts_raise(tiny_tokenizer, llama):
    judge = Judge.from_model(
        llama, tiny_tokenizer, _info(context_length=8), EngineOptions(device="cpu", dtype="float32", token_budget=4096)
    )
    with pytest.raises(ContextLengthError, match="--truncate"):
        judge.score_texts(["Score:", "the answer is good and fluent and helpful. Score:"], 0, 10)
    with pytest.raises(ContextLengthError, match="empty"):
        judge.score_texts([""], 0, 10)


# -- sliding-window attention: per-layer-type masks --------------------------------------------------

LONG = [
    "the response is helpful and fluent and the answer is good yes maybe no. Rating 3/10. Score:",
    "quality bad and the answer is bad. Rating 9/10 and 100 and 7. Score: ",
    "Score:",  # shorter than the window, padded next to the long ones
]


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_sliding_window_matches_brute_force(tiny_tokenizer, vocab, attn):
    model = tiny_gemma3(tiny_tokenizer, window=8, attn=attn)
    assert all(len(tiny_tokenizer(t)["input_ids"]) > 16 for t in LONG[:2])
    dists = _judge(model, tiny_tokenizer).score_texts(LONG, 0, 10)
    _assert_scores_match(dists, model, tiny_tokenizer, vocab, LONG, 0, 10)
    # the window changes the answer, so a mask that ignored it would fail the check above
    wide = tiny_gemma3(tiny_tokenizer, window=1024, attn=attn)
    wide_dists = _judge(wide, tiny_tokenizer).score_texts(LONG[:1], 0, 10)
    assert max(abs(dists[0].probs[v] - wide_dists[0].probs[v]) for v in range(11)) > 1e-3


def test_sliding_window_batch_invariance(tiny_tokenizer):
    model = tiny_gemma3(tiny_tokenizer, window=8)
    alone = [_judge(model, tiny_tokenizer).score_texts([t], 0, 10)[0] for t in LONG + MIXED]
    together = _judge(model, tiny_tokenizer, token_budget=100_000).score_texts(LONG + MIXED, 0, 10)
    for a, b in zip(alone, together):
        _assert_same(a, b)


# -- out-of-memory back-off ---------------------------------------------------------------------------


def test_oom_backoff_splits_batches(caplog, tiny_tokenizer, llama):
    expected = _judge(llama, tiny_tokenizer, token_budget=100_000).score_texts(MIXED, 0, 10)
    judge = _judge(llama, tiny_tokenizer, token_budget=100_000)
    tried: list[int] = []
    ran: list[int] = []

    def small_memory(call):  # a device that holds two rows of a tree batch (prefills fit)
        if call.kind != "batch":
            return
        tried.append(len(call.lengths))
        if len(call.lengths) > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")
        ran.append(len(call.lengths))

    with caplog.at_level(logging.WARNING, logger="localjudge"), judge.backend.observe_forwards(small_memory):
        got = judge.score_texts(MIXED, 0, 10)
    assert tried[0] == len(MIXED)  # one batch planned, split down to pairs
    assert sum(ran) == len(MIXED) and len(ran) > 1
    assert any("out of memory" in r.getMessage() for r in caplog.records)
    for a, b in zip(expected, got):
        _assert_same(a, b)


def test_non_oom_errors_propagate(tiny_tokenizer, llama):
    judge = _judge(llama, tiny_tokenizer)
    tried: list[int] = []

    def broken(call):
        tried.append(len(call.lengths))
        raise RuntimeError("shape mismatch")

    with pytest.raises(RuntimeError, match="shape mismatch"), judge.backend.observe_forwards(broken):
        judge.score_texts(MIXED, 0, 10)
    assert len(tried) == 1  # not retried as a smaller batch
