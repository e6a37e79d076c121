"""Shared-prefix KV reuse gives the same scores as scoring every prompt in full.

Tiny random Llama and Gemma 3 text models (the Gemma mixes sliding-window layers of window 8 with
full attention, so windows cross the prefix/suffix boundary), prompts that share a long common
prefix, clusters sharing longer prefixes, duplicates, and prompts shorter than the prefix
threshold. Reuse on and off must agree to 1e-5 (fp32).
"""

from __future__ import annotations

import pytest
import torch

from localjudge import Judge, JudgeInfo
from localjudge.engine.options import EngineOptions
from localjudge.engine.prefix import MIN_PREFIX, common_prefix_len, plan_prefix_batches
from localjudge.testing.tiny_models import tiny_gemma3, tiny_info, tiny_llama

TOL = 1e-5

HEAD = "the answer is good and the response is fluent and helpful. " * 3
ARTICLES = [
    "quality bad yes maybe no rating 7 and 10. " * 2,
    "Total 100 and the answer is bad. " * 2,
    "helpful response fluent Yes No A B. " * 2,
]
SUMMARIES = ["Score: the answer is good", "the response is bad", "yes maybe", "Rating 3/10 and 7"]


def _texts() -> list[str]:
    """Rows sharing HEAD; per article a cluster sharing HEAD + article; short odd-one-outs."""
    texts = [f"{HEAD}{a}{s}. Score:" for a in ARTICLES for s in SUMMARIES]
    texts += ["Score:", "no", f"{HEAD}Score:", f"{HEAD}{ARTICLES[0]}{SUMMARIES[0]}. Score:"]  # + a duplicate
    return texts


def _info() -> JudgeInfo:
    return tiny_info(1024)


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module", params=["llama", "gemma3", "llama-eager", "gemma3-eager"])
def model(request, tiny_tokenizer):
    name, _, attn = request.param.partition("-")
    build = tiny_llama if name == "llama" else tiny_gemma3
    return build(tiny_tokenizer, attn=attn or "sdpa")


def _scores(model, tokenizer, texts, reuse: bool, budget: int, labels: bool = False):
    options = EngineOptions(device="cpu", dtype="float32", token_budget=budget, reuse_prefix=reuse)
    judge = Judge.from_model(model, tokenizer, _info(), options)
    if labels:
        return judge.score_labels(texts, ["A", "B"]), judge.backend.stats.last_plan
    return judge.score_texts(texts, 0, 10), judge.backend.stats.last_plan


def test_fixture_shares_prefixes(tiny_tokenizer):
    ids = [tiny_tokenizer(t)["input_ids"] for t in _texts()]
    assert common_prefix_len(ids[:12]) > 2 * MIN_PREFIX  # long shared head
    assert common_prefix_len(ids[:4]) > common_prefix_len(ids[:12]) + MIN_PREFIX  # a cluster
    assert min(len(r) for r in ids) < MIN_PREFIX  # rows shorter than the threshold


@pytest.mark.parametrize("budget", [4096, 300, 120])
def test_reuse_matches_full_scoring(model, tiny_tokenizer, budget):
    texts = _texts()
    full, _ = _scores(model, tiny_tokenizer, texts, reuse=False, budget=budget)
    reused, plan = _scores(model, tiny_tokenizer, texts, reuse=True, budget=budget)
    assert sorted(i for b in plan.batches for i in b) == list(range(len(texts)))
    for a, b in zip(full, reused):
        assert a.valid_mass == pytest.approx(b.valid_mass, abs=TOL)
        for v in a.probs:
            assert a.probs[v] == pytest.approx(b.probs[v], abs=TOL)


def test_reuse_matches_for_labels(model, tiny_tokenizer):
    texts = _texts()
    full, _ = _scores(model, tiny_tokenizer, texts, reuse=False, budget=4096, labels=True)
    reused, _ = _scores(model, tiny_tokenizer, texts, reuse=True, budget=4096, labels=True)
    for a, b in zip(full, reused):
        assert a.valid_mass == pytest.approx(b.valid_mass, abs=TOL)


def test_plan_clusters_rows_sharing_longer_prefixes(tiny_tokenizer):
    texts = _texts()
    ids = [tiny_tokenizer(t)["input_ids"] for t in texts]
    plan = plan_prefix_batches(ids, token_budget=100_000, extra=3, max_batch=64)
    clusters = [set(b) for b in plan.batches]
    # each article's summaries (and the duplicate of the first) share one batch
    for a in range(len(ARTICLES)):
        assert any(set(range(4 * a, 4 * a + 4)) <= c for c in clusters)
    assert plan.padded_tokens < sum(len(r) + 3 for r in ids)  # the prefixes are counted once


def test_plan_keeps_one_article_in_one_batch(tiny_tokenizer):
    # every row shares HEAD + one article: one batch and one prefill, not one per summary opening
    texts = [f"{HEAD}{ARTICLES[0]}{s}{tail}. Score:" for s in SUMMARIES for tail in ("", " and more")]
    ids = [tiny_tokenizer(t)["input_ids"] for t in texts]
    plan = plan_prefix_batches(ids, token_budget=100_000, extra=3, max_batch=64)
    assert len(plan.batches) == 1
    shared = common_prefix_len(ids)
    assert plan.padded_tokens == shared + (max(map(len, ids)) - shared + 3) * len(ids)


def test_plan_is_no_costlier_than_packing_by_length(tiny_tokenizer):
    from localjudge.engine.batching import plan_batches

    ids = [tiny_tokenizer(t)["input_ids"] for t in _texts()]
    for budget in (4096, 300, 120):
        reuse = plan_prefix_batches(ids, token_budget=budget, extra=3, max_batch=64)
        plain = plan_batches([len(r) + 3 for r in ids], budget, max_batch=64)
        assert sorted(i for b in reuse.batches for i in b) == list(range(len(ids)))
        assert reuse.padded_tokens <= plain.padded_tokens
        assert reuse.real_tokens <= reuse.padded_tokens


@pytest.mark.parametrize("budget", [4096, 120])
def test_shared_prefix_generation_matches_transformers_generate(model, tiny_tokenizer, budget):
    import copy

    model = copy.deepcopy(model)
    with torch.no_grad():
        model.lm_head.weight[:, 0] = 0.0  # unsteered: greedy text varies with the context
        model.model.embed_tokens.weight[:, 0] = torch.randn(model.model.embed_tokens.weight.shape[0])
    texts = _texts()
    judge = Judge.from_model(
        model, tiny_tokenizer, _info(), EngineOptions(device="cpu", dtype="float32", token_budget=budget)
    )
    plain = judge.generate(texts, 8)
    shared = judge.generate(texts, 8, share_prefix=True)
    assert shared == plain
    assert len(set(plain)) > 1  # the rows do not all continue alike
