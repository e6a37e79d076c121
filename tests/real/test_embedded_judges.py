"""End-to-end truth on the two embedded judges (real weights, CPU, fp32) against brute force.

SmolLM2 splits digits and has a separate space token; Gemma 3 has two ids for every digit (the
digit and its byte-fallback "<0x3N>") and two space tokens, so its 0..10 tree has ~75 nodes and
every score ≥ 10 has several token paths. The reference runs one unbatched forward per path.
"""

from __future__ import annotations

import pytest
from reference import brute_force_scores, continues_word, decoded_vocab, label_variants

from localjudge.engine.vocab import spelled
from localjudge.scoring.distribution import DEFAULT_TREE_TOLERANCE

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("torch_one_thread")]

QUESTION = "Question: What is the capital of France?\nAnswer: Paris.\n"
SMOLLM_PLAIN = [
    QUESTION + "Rate the answer from 0 to 10.\nScore:",
    QUESTION + "Rate the answer from 0 to 10.\nScore: ",  # trailing space: only unspaced spellings follow
]
GEMMA_PROMPTS = [
    QUESTION + "Rating (0-10):",
    QUESTION + "Rating (0-10): ",
    "Score out of 10:",
]
LABEL_PROMPT = "Which answer is correct, A or B?\nA: Paris\nB: Lyon\nThe correct answer is"


def smollm_prompts(judge) -> list[str]:
    chat = judge.render(
        "You are a strict grader.", QUESTION + "Rate the answer from 0 to 10. Reply with a number.", "Score: "
    )
    return [*SMOLLM_PLAIN, chat]


@pytest.fixture(scope="module")
def smollm(smollm_judge):
    return smollm_judge, decoded_vocab(smollm_judge.backend.tokenizer)


@pytest.fixture(scope="module")
def gemma(gemma_judge):
    return gemma_judge, decoded_vocab(gemma_judge.backend.tokenizer)


@pytest.fixture(scope="module")
def smollm_batch(smollm_judge):
    """The prompts scored together in one batch (shared: a forward on CPU is not free)."""
    return smollm_judge.score_texts(smollm_prompts(smollm_judge), 0, 10)


@pytest.fixture(scope="module")
def gemma_batch(gemma_judge):
    return gemma_judge.score_texts(GEMMA_PROMPTS, 0, 10)


def _check_against_brute_force(judge, vocab, texts, dists, low=0, high=10):
    model, tok = judge.backend.model, judge.backend.tokenizer
    for text, d in zip(texts, dists):
        assert len(tok(text)["input_ids"]) < 60
        ref = brute_force_scores(model, tok, text, [str(v) for v in range(low, high + 1)], vocab, reuse_prompt=True)
        mass = sum(ref.values())
        assert mass > 0.01, text  # the prompt does elicit a score: the comparison means something
        assert d.valid_mass == pytest.approx(mass, rel=1e-3), text
        for v in range(low, high + 1):
            assert d.probs[v] == pytest.approx(ref[str(v)] / mass, abs=1e-4), (text, v)


def _check_batch_invariance(judge, texts, together, low=0, high=10):
    for text, b in zip(texts, together):
        a = judge.score_texts([text], low, high)[0]
        assert a.valid_mass == pytest.approx(b.valid_mass, abs=1e-5)
        for v in a.probs:
            assert a.probs[v] == pytest.approx(b.probs[v], abs=1e-5), (text, v)


def _check_labels(judge, vocab, text, labels=("A", "B")):
    d = judge.score_labels([text], list(labels))[0]
    ref = brute_force_scores(
        judge.backend.model,
        judge.backend.tokenizer,
        text,
        list(labels),
        vocab,
        is_continuation=continues_word,
        variants=label_variants,
        reuse_prompt=True,
    )
    mass = sum(ref.values())
    assert mass > 0.01
    assert d.valid_mass == pytest.approx(mass, rel=1e-3)
    for lab in labels:
        assert d.probs[lab] == pytest.approx(ref[lab] / mass, abs=1e-4), lab


# -- SmolLM2-135M-Instruct ---------------------------------------------------------------------------


def test_smollm_renders_its_chat_template(smollm):
    judge, _ = smollm
    assert judge.info.chat_template
    text = smollm_prompts(judge)[2]
    assert "<|im_start|>assistant" in text and text.endswith("Score: ")
    tok = judge.backend.tokenizer
    ids = tok(text)["input_ids"]
    assert ids[:2] != [tok.bos_token_id] * 2  # the template's BOS and the tokenizer's: one only


def test_smollm_tree_has_split_ten(smollm):
    judge, _ = smollm
    tree = judge.score_tree(0, 10)
    assert "10" in tree.texts and " 10" in tree.texts
    assert max(d for t, d in zip(tree.texts, tree.depths) if t == "10") == 2  # "1","0"


def test_smollm_scores_match_brute_force(smollm, smollm_batch):
    judge, vocab = smollm
    _check_against_brute_force(judge, vocab, smollm_prompts(judge), smollm_batch)


def test_smollm_batch_invariance(smollm, smollm_batch):
    judge, _ = smollm
    _check_batch_invariance(judge, smollm_prompts(judge), smollm_batch)


def test_smollm_labels_match_brute_force(smollm):
    judge, vocab = smollm
    _check_labels(judge, vocab, LABEL_PROMPT)


# -- Gemma 3 270M (base) -----------------------------------------------------------------------------


def test_gemma_tree_counts_duplicate_digit_tokens(gemma):
    judge, vocab = gemma
    tree = judge.score_tree(0, 10)
    ones = {int(t) for t, s in zip(tree.token_ids, tree.texts) if s == "1"}
    assert len(ones) >= 2 and all(vocab[t] == "1" for t in ones)  # "1" and "<0x31>"
    assert sum(1 for s in tree.texts if s == "10") >= 4  # 2 ids for "1" x 2 ids for "0"


def test_gemma_scores_match_brute_force(gemma, gemma_batch):
    judge, vocab = gemma
    assert not judge.info.chat_template
    _check_against_brute_force(judge, vocab, GEMMA_PROMPTS, gemma_batch)


def test_gemma_batch_invariance(gemma, gemma_batch):
    judge, _ = gemma
    _check_batch_invariance(judge, GEMMA_PROMPTS, gemma_batch)


def test_gemma_labels_match_brute_force(gemma):
    judge, vocab = gemma
    _check_labels(judge, vocab, LABEL_PROMPT)


def test_gemma_skips_improbable_tree_nodes_within_the_bound(gemma, gemma_batch):
    """The byte-fallback digits carry ~1e-17: the default tolerance leaves them unread."""
    judge, _ = gemma
    backend = judge.backend
    rows_before = backend.stats.head_rows
    judge.score_texts(GEMMA_PROMPTS, 0, 10)
    pruned_rows = backend.stats.head_rows - rows_before
    every_node = judge.with_options(tree_tolerance=0.0)  # the same weights; its backend counts on from here
    exact = every_node.score_texts(GEMMA_PROMPTS, 0, 10)
    assert judge.options.tree_tolerance == DEFAULT_TREE_TOLERANCE  # the judge itself is unchanged
    tree = judge.score_tree(0, 10)
    assert every_node.backend.stats.head_rows - rows_before - pruned_rows == len(GEMMA_PROMPTS) * tree.n_nodes
    assert pruned_rows < len(GEMMA_PROMPTS) * tree.n_nodes / 2
    for a, b in zip(exact, gemma_batch):
        assert a.valid_mass == pytest.approx(b.valid_mass, rel=1e-6)
        assert a.expected == pytest.approx(b.expected, abs=10 * 1e-6 + 1e-9, nan_ok=True)
        for v in a.probs:
            assert a.probs[v] == pytest.approx(b.probs[v], abs=1e-6), v


def _check_shared_generation(judge):
    # prompts sharing a long prefix, as a generate-and-parse judge sends them
    head = (
        "Read the question and the answer, then rate the answer's correctness and clarity "
        "from 0 to 10, where 0 is wrong and 10 is perfect.\n"
    )
    texts = [head + QUESTION.replace("Paris", a) + "Rating:" for a in ("Paris", "Lyon", "It is Paris, of course")]
    assert judge.generate(texts, 6, share_prefix=True) == judge.generate(texts, 6)


def test_smollm_shared_prefix_generation_matches_generate(smollm):
    _check_shared_generation(smollm[0])


def test_gemma_shared_prefix_generation_matches_generate(gemma):
    _check_shared_generation(gemma[0])


# -- likelihood of given continuations ----------------------------------------------------------

ARTICLE = (
    "The city council voted on Tuesday to build a new bridge over the river. The bridge will "
    "cost 40 million dollars and open in 2027, the mayor said. "
) * 2
LL_PROMPTS = [ARTICLE + "\n\nTL;DR:"] * 3 + ["TL;DR:", "Question: Where is Paris?\nAnswer: "]
LL_CONTS = [
    " The council will build a bridge.",
    " A bridge costing 40 million dollars opens in 2027.",
    " The mayor resigned on Tuesday.",
    " The council will build a bridge.",
    "In France.",
]


def _brute_force_ll(judge, prompt, continuation):
    import torch

    from localjudge.scoring.likelihood import split_boundary

    prompt, continuation = split_boundary(prompt, continuation)
    p, c = judge.backend.encode(prompt), judge.backend.encode_continuation(continuation)
    with torch.inference_mode():
        logits = judge.backend.model(input_ids=torch.tensor([p + c]), use_cache=False).logits[0].double()
    logp = torch.log_softmax(logits[len(p) - 1 : -1], dim=-1)
    return logp[torch.arange(len(c)), torch.tensor(c)].tolist()


@pytest.mark.parametrize("name", ["smollm", "gemma"])
def test_loglikelihood_matches_brute_force(name, request):
    from localjudge.scoring.likelihood import split_boundary

    judge = request.getfixturevalue(name)[0]
    got = judge.loglikelihood(LL_PROMPTS, LL_CONTS)
    for p, c, g in zip(LL_PROMPTS, LL_CONTS, got):
        ref = _brute_force_ll(judge, p, c)
        assert spelled(judge.backend.tokenizer, g.token_ids) == split_boundary(p, c)[1]
        assert list(g.logprobs) == pytest.approx(ref, abs=1e-4), c
    # the faithful summaries are likelier than the invented one, given the article
    assert min(got[0].mean, got[1].mean) > got[2].mean
    single = [judge.loglikelihood([p], [c])[0] for p, c in zip(LL_PROMPTS, LL_CONTS)]
    for a, b in zip(got, single):
        # fp32 logits of size ~30 carry ~1e-5 of batch-composition noise: relative per token
        assert list(a.logprobs) == pytest.approx(list(b.logprobs), rel=1e-5, abs=1e-5)
        assert a.mean == pytest.approx(b.mean, abs=1e-5)
