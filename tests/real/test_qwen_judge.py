"""End-to-end truth on the third embedded family: Qwen2.5-Coder-0.5B-Instruct, loaded by registry name.

Qwen's byte-level BPE gives every digit a token of its own and a leading space a token of its own,
so "10" is "1","0" and " 10" is " ","1","0": the score tree must follow both paths for every
multi-digit score. Scores are checked against a brute-force enumeration of every token path (one
unbatched forward per path), likelihoods against a plain forward of the whole row, on the real
weights (fp32, CPU). Bitwise batch invariance of Qwen's architecture (biases in q/k/v, kept in fp32
under mixed precision) is checked on a tiny random Qwen2 in `tests/engine/test_bitwise.py`, every
engine path in fp32, bf16 and mixed precision in seconds; the real-weight check of the same code
(`check_bitwise`) runs on SmolLM2 and Gemma in `test_bitwise_judges.py` (a 45 s leg here, the
suite's longest test, for no path those two and the tiny Qwen2 leave out). The output layer's two
GEMM chunks are checked on Gemma's 262k-row and SmolLM2's 49k-row layers there, the same code on
either side of Qwen's 152k rows.
"""

from __future__ import annotations

import pytest
from reference import brute_force_scores, decoded_vocab

from localjudge.judges.registry import load_registry

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("torch_one_thread")]

QUESTION = "Question: What is the capital of France?\nAnswer: Paris.\n"


@pytest.fixture(scope="module")
def qwen(qwen_judge):
    return qwen_judge, decoded_vocab(qwen_judge.backend.tokenizer)


def test_loads_by_name_with_the_registry_hash_as_provenance(qwen_judge):
    src = load_registry().get("qwen2.5-coder-0.5b").source
    info = qwen_judge.info
    assert (info.name, info.family, info.provenance) == ("qwen2.5-coder-0.5b", "qwen", f"sha256:{src.sha256}")
    assert info.chat_template and info.bitwise


def test_ten_is_two_digit_tokens_on_two_paths(qwen):
    judge, vocab = qwen
    ten = [judge.backend.encode_continuation(s) for s in ("10", " 10")]
    assert [[vocab[t] for t in ids] for ids in ten] == [["1", "0"], [" ", "1", "0"]]
    tree = judge.score_tree(0, 10)
    ten = tree.values.index(10)
    ends = [n for n in range(tree.n_nodes) if tree.terminal_value[n] == ten]
    paths = sorted(tuple(vocab[int(tree.token_ids[a])] for a in tree.ancestors(n)) for n in ends)
    assert paths == [(" ", "1", "0"), ("1", "0")]  # both spellings, each two digit tokens


def _prompts(judge) -> list[str]:
    chat = judge.render(
        "You are a strict grader.", QUESTION + "Rate the answer from 0 to 10. Reply with a number.", "Score:"
    )
    return [chat, chat + " ", QUESTION + "Rate the answer from 0 to 10.\nScore:"]


def test_scores_match_brute_force(qwen):
    judge, vocab = qwen
    texts = _prompts(judge)
    dists = judge.score_texts(texts, 0, 10)
    model, tok = judge.backend.model, judge.backend.tokenizer
    for text, d in zip(texts, dists):
        ref = brute_force_scores(model, tok, text, [str(v) for v in range(11)], vocab, reuse_prompt=True)
        mass = sum(ref.values())
        assert mass > 0.01, text  # the prompt does elicit a score: the comparison means something
        assert d.valid_mass == pytest.approx(mass, rel=1e-3), text
        for v in range(11):
            assert d.probs[v] == pytest.approx(ref[str(v)] / mass, abs=1e-4), (text, v)
    # the chat prompt puts real probability on 10, which only the two-token paths spell
    assert dists[0].probs[10] > 1e-3


def test_loglikelihood_matches_a_plain_forward(qwen):
    import torch

    judge = qwen[0]
    article = "The city council voted on Tuesday to build a new bridge. It will cost 40 million dollars."
    prompts = [article + "\n\nTL;DR:"] * 2 + ["Question: Where is Paris?\nAnswer:"]
    conts = [" A 40 million dollar bridge will be built.", " The mayor resigned.", " In France."]
    got = judge.loglikelihood(prompts, conts)
    for p, c, g in zip(prompts, conts, got):
        ids = judge.backend.encode(p)
        with torch.inference_mode():
            logits = judge.backend.model(input_ids=torch.tensor([ids + list(g.token_ids)]), use_cache=False).logits
        logp = torch.log_softmax(logits[0].double()[len(ids) - 1 : -1], dim=-1)
        ref = logp[torch.arange(len(g.token_ids)), torch.tensor(g.token_ids)].tolist()
        assert list(g.logprobs) == pytest.approx(ref, abs=1e-4), c
    assert got[0].mean > got[1].mean  # the supported summary is likelier, given the article
