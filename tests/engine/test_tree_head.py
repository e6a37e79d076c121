"""The tree reader: output-layer rows only where the bound needs them, and the bound holds.

Pure tests drive `read_tree` with a hand-built head (one logit row per item and node) and compare
with the exact tables; model tests check the decoder/output-layer split on tiny random models,
including Gemma's soft-capping and a model (Granite) whose logits the split cannot reproduce.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import VOCAB

from localjudge import Judge
from localjudge.engine.options import EngineOptions
from localjudge.engine.tree_head import read_tree, split_model
from localjudge.scoring.distribution import outcome_mass, score_distribution
from localjudge.scoring.trie import build_score_tree
from localjudge.testing.tiny_models import tiny_config, tiny_gemma3, tiny_info, tiny_llama

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def _ends(tree, v: int) -> np.ndarray:
    """(V,) True where a token ends the outcome; columns past VOCAB are filler words."""
    ends = np.ones(v, dtype=bool)
    ends[tree.continue_ids] = False
    return ends


def _read(tree, logits: np.ndarray, tolerance: float):
    """`read_tree` over hidden states that pick row (b, n) of `logits` (B, N, V) as the head output."""
    b, n, v = logits.shape
    table = torch.from_numpy(logits.reshape(b * n, v)).float()  # (B·N, V)
    hidden = torch.eye(b * n).reshape(b, n, b * n)  # one-hot: hidden[b, n] selects row b·N + n
    return read_tree(hidden, lambda h: h @ table, tree, torch.from_numpy(_ends(tree, v)), tolerance)


def _tree_logprobs(tree, logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact tables, in float64 numpy, from (B, N, V) next-token logits at every tree node."""
    logp = logits - np.logaddexp.reduce(logits, axis=-1, keepdims=True)  # (B, N, V) log-softmax
    edge = np.zeros(logits.shape[:2])
    edge[:, 1:] = logp[:, tree.parents[1:], tree.token_ids[1:]]
    end = np.logaddexp.reduce(np.where(_ends(tree, logits.shape[-1]), logp, -np.inf), axis=-1)  # (B, N)
    return edge, end


def _with_filler(logits: np.ndarray, filler: int, seed: int) -> np.ndarray:
    """Appends `filler` word columns: with many of them, P(end) is read as 1 - P(continue)."""
    extra = np.random.default_rng(seed).normal(size=(*logits.shape[:2], filler)) - 2.0
    return np.concatenate([logits, extra.astype(np.float32)], axis=-1)


def _peaked_logits(tree, batch: int, seed: int, temp: float) -> np.ndarray:
    """Random logits with a few tokens far ahead, so many tree paths are improbable."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(batch, tree.n_nodes, len(VOCAB))) * temp
    return logits.astype(np.float32).astype(np.float64)  # what the float32 head computes


@pytest.mark.parametrize("filler", [0, 300])  # masked log-sum-exp; 1 - P(continue)
def test_tolerance_zero_is_exact(filler):
    tree = build_score_tree(VOCAB, 0, 10)
    logits = _with_filler(_peaked_logits(tree, 3, seed=1, temp=8.0), filler, seed=2)
    rows = _read(tree, logits, 0.0)
    edge, end = _tree_logprobs(tree, logits)
    np.testing.assert_allclose(rows.edge, edge, atol=1e-5)
    np.testing.assert_allclose(rows.end, end, atol=2e-5)  # relative precision of P(end), either way
    assert rows.rows == 3 * tree.n_nodes and (rows.unexpanded == 0).all()


def test_improbable_nodes_are_left_unread():
    tree = build_score_tree(VOCAB, 1, 5)
    space = tree.texts.index(" ")
    after_space = [n for n in range(tree.n_nodes) if tree.parents[n] == space]
    logits = np.zeros((2, tree.n_nodes, len(VOCAB)))
    logits[:, 0, VOCAB.index(" ")] = 30.0  # the root all but certainly says " "...
    logits[:, space, [VOCAB.index(str(d)) for d in range(1, 6)]] = 30.0  # ...then a digit
    rows = _read(tree, logits, 1e-6)
    # the other first tokens ("1".."5", " 1", " 5") carry ~1e-13 each and stay unread
    assert rows.rows == 2 * (2 + len(after_space))
    assert (rows.unexpanded > 0).all() and (rows.unexpanded < 1e-11).all()
    exact = outcome_mass(tree, *_tree_logprobs(tree, logits))
    np.testing.assert_allclose(outcome_mass(tree, rows.edge, rows.end), exact, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    temp=st.floats(0.5, 12),
    tolerance=st.sampled_from([1e-6, 1e-3, 0.05, 0.3]),
    scale=st.sampled_from([(1, 5), (0, 10), (1, 10)]),
    filler=st.sampled_from([0, 300]),
)
def test_bound_holds(seed, temp, tolerance, scale, filler):
    low, high = scale
    tree = build_score_tree(VOCAB, low, high)
    logits = _with_filler(_peaked_logits(tree, 4, seed, temp), filler, seed)
    rows = _read(tree, logits, tolerance)
    exact = outcome_mass(tree, *_tree_logprobs(tree, logits))  # (B, V)
    found = outcome_mass(tree, rows.edge, rows.end)
    valid = found.sum(1)
    assert (rows.unexpanded <= tolerance * valid + 1e-12).all()
    fp32 = 1e-5 * exact.sum(1, keepdims=True)  # the head computes in float32
    assert (found <= exact + fp32).all()  # leaving nodes out only ever lowers a mass
    assert ((exact - found).sum(1) <= rows.unexpanded + fp32[:, 0]).all()
    for e, f, u in zip(exact, found, rows.unexpanded):
        if f.sum() < 1e-3:
            continue
        a, b = score_distribution(e, low, high, 0.0), score_distribution(f, low, high, 0.0)
        assert abs(a.expected - b.expected) <= (high - low) * (u / f.sum()) + 1e-4


def test_a_missed_estimate_is_expanded_in_full():
    """Mass on a first token that leads nowhere valid: the first cut is too loose, the check catches it."""
    tree = build_score_tree(VOCAB, 1, 5)
    logits = np.zeros((1, tree.n_nodes, len(VOCAB)))
    logits[0, 0, VOCAB.index(" ")] = 12.0  # root: " " almost surely...
    space = tree.texts.index(" ")
    logits[0, space, VOCAB.index("a")] = 25.0  # ...then a word: valid mass ~1e-10, on the unspaced digits
    tolerance = 1e-3
    rows = _read(tree, logits, tolerance)
    found = outcome_mass(tree, rows.edge, rows.end)
    assert rows.rows == tree.n_nodes  # every node read in the end
    assert rows.unexpanded[0] <= tolerance * found.sum()
    exact = outcome_mass(tree, *_tree_logprobs(tree, logits))
    np.testing.assert_allclose(found / found.sum(), exact / exact.sum(), atol=tolerance)


# -- the split on real architectures ----------------------------------------------------------------


def _judge(model, tokenizer, tolerance: float) -> Judge:
    info = tiny_info(512)
    options = EngineOptions(device="cpu", dtype="float32", token_budget=4096, tree_tolerance=tolerance)
    return Judge.from_model(model, tokenizer, info, options)


PROMPTS = ["the answer is good. Score:", "Rating 7/10 and the response is fluent. Score: ", "yes"]


def _granite(tokenizer):
    from transformers import GraniteConfig, GraniteForCausalLM

    torch.manual_seed(0)
    return GraniteForCausalLM(tiny_config(GraniteConfig, tokenizer, logits_scaling=4.0)).eval()


@pytest.mark.parametrize("build", ["llama", "gemma3", "gemma3-softcap", "granite"])
def test_split_reading_equals_the_plain_forward(tiny_tokenizer, build):
    if build == "granite":
        model = _granite(tiny_tokenizer)
    elif build == "llama":
        model = tiny_llama(tiny_tokenizer)
    else:
        model = tiny_gemma3(tiny_tokenizer)
        model.config.final_logit_softcapping = 3.0 if build == "gemma3-softcap" else None
    split = split_model(model, tiny_tokenizer("Score: 5")["input_ids"])
    assert (split is None) == (build == "granite")  # Granite divides its logits: no split
    plain = _judge(model, tiny_tokenizer, 0.0)
    plain.backend.runner = plain.backend.runner.plain()  # the plain forward, every node's row
    want = plain.score_texts(PROMPTS, 0, 10)
    for tolerance in (0.0, 1e-6):
        got = _judge(model, tiny_tokenizer, tolerance).score_texts(PROMPTS, 0, 10)
        for a, b in zip(want, got):
            assert a.valid_mass == pytest.approx(b.valid_mass, abs=1e-5)
            for k in a.probs:
                assert a.probs[k] == pytest.approx(b.probs[k], abs=1e-5), (tolerance, k)


def test_a_loose_tolerance_skips_rows_within_its_bound(tiny_tokenizer):
    model = tiny_llama(tiny_tokenizer)
    exact, loose = _judge(model, tiny_tokenizer, 0.0), _judge(model, tiny_tokenizer, 0.05)
    want, got = exact.score_texts(PROMPTS, 0, 10), loose.score_texts(PROMPTS, 0, 10)
    assert loose.backend.stats.head_rows < exact.backend.stats.head_rows
    for a, b in zip(want, got):
        if a.scored:
            assert abs(a.expected - b.expected) <= 10 * 0.05 / (1 - 0.05)
            assert sum(abs(a.probs[k] - b.probs[k]) for k in a.probs) <= 2 * 0.05 / (1 - 0.05)
