"""`Judge.loglikelihood` on tiny random models against a brute-force one-item forward.

The reference runs prompt + continuation alone, unpadded, through the model and takes the fp32
log-softmax at the positions before each continuation token: no masks, no cache, no batching of
ours. The engine right-pads batches, computes shared prefixes once and applies the output layer
only at continuation positions; the two must agree to 1e-5, whatever the batching.
"""

from __future__ import annotations

import math

import pytest
from reference import brute_force

from localjudge import Judge, JudgeInfo
from localjudge.engine.options import EngineOptions
from localjudge.engine.vocab import spelled
from localjudge.errors import ContextLengthError
from localjudge.scoring.likelihood import split_boundary
from localjudge.testing.tiny_models import tiny_gemma3, tiny_info, tiny_llama

pytestmark = pytest.mark.usefixtures("torch_one_thread")

TOL = 1e-5
HEAD = "the answer is good and the response is fluent and helpful. " * 3
ARTICLES = ["quality bad yes maybe no rating 7 and 10. " * 2, "Total 100 and the answer is bad. " * 2]
SUMMARIES = [" the answer is good", " the response is bad yes", " maybe", " Rating 3/10 and 7 and the answer"]


def _pairs() -> tuple[list[str], list[str]]:
    """Rows sharing HEAD, clusters sharing HEAD + article, identical prompts, odd short ones."""
    prompts = [f"{HEAD}{a}TL;DR:" for a in ARTICLES for _ in SUMMARIES]
    conts = [s for _ in ARTICLES for s in SUMMARIES]
    prompts += ["Score:", "no", f"{HEAD}TL;DR:", f"{HEAD}TL;DR:", "yes"]
    conts += [" 7", " the answer is good and fluent", " bad", " good", ""]  # same prompt twice; an empty continuation
    return prompts, conts


def _info(context_length: int = 1024) -> JudgeInfo:
    return tiny_info(context_length)


def _judge(model, tokenizer, budget: int = 4096, reuse: bool = True, context: int = 1024) -> Judge:
    # grid 16: these prompts share fewer than 32 tokens, which the default grid would not cache
    options = EngineOptions(device="cpu", dtype="float32", token_budget=budget, reuse_prefix=reuse, grid=16)
    judge = Judge.from_model(model, tokenizer, _info(context), options)
    return judge


@pytest.fixture(scope="module", params=["llama", "gemma3", "llama-eager", "gemma3-eager"])
def model(request, tiny_tokenizer):
    name, _, attn = request.param.partition("-")
    build = tiny_llama if name == "llama" else tiny_gemma3  # Gemma: sliding windows of 8 cross every boundary
    return build(tiny_tokenizer, attn=attn or "sdpa")


@pytest.mark.parametrize("budget", [4096, 150])
@pytest.mark.parametrize("reuse", [True, False])
def test_matches_brute_force(model, tiny_tokenizer, budget, reuse):
    prompts, conts = _pairs()
    judge = _judge(model, tiny_tokenizer, budget, reuse)
    got = judge.loglikelihood(prompts, conts)
    for p, c, g in zip(prompts, conts, got):
        ref = brute_force(model, tiny_tokenizer, p, c)
        assert g.n_tokens == len(ref)
        assert list(g.logprobs) == pytest.approx(ref, abs=TOL), (p[-30:], c)
        if ref:
            assert g.sum == pytest.approx(sum(ref), abs=TOL * len(ref))
            assert g.mean == pytest.approx(sum(ref) / len(ref), abs=TOL)
            assert g.min == pytest.approx(min(ref), abs=TOL)
    if reuse and budget == 4096:
        plan = judge.backend.stats.last_plan
        assert plan.padded_tokens < sum(len(tiny_tokenizer(p + c)["input_ids"]) for p, c in zip(prompts, conts))


def test_batch_invariance(model, tiny_tokenizer):
    prompts, conts = _pairs()
    batched = _judge(model, tiny_tokenizer).loglikelihood(prompts, conts)
    single = [_judge(model, tiny_tokenizer).loglikelihood([p], [c])[0] for p, c in zip(prompts, conts)]
    tight = _judge(model, tiny_tokenizer, budget=90).loglikelihood(prompts, conts)
    for a, b, c in zip(batched, single, tight):
        assert a.token_ids == b.token_ids == c.token_ids
        assert list(a.logprobs) == pytest.approx(list(b.logprobs), abs=TOL)
        assert list(a.logprobs) == pytest.approx(list(c.logprobs), abs=TOL)


def test_prefix_is_computed_once_per_cluster(tiny_tokenizer):
    model = tiny_llama(tiny_tokenizer)
    prompts, conts = _pairs()
    prompts, conts = prompts[:8], conts[:8]  # two articles, four summaries each
    judge = _judge(model, tiny_tokenizer)
    with judge.backend.observe_forwards() as forwards:
        judge.loglikelihood(prompts, conts)
    calls = [c.lengths[0] for c in forwards if c.kind == "prefill"]
    article = len(tiny_tokenizer(f"{HEAD}{ARTICLES[0]}TL;DR")["input_ids"])
    # one prefill per article, covering it down to the grid (16 here) that cached prefixes keep to
    assert len(calls) == 2 and min(calls) >= (article - 2) // 16 * 16


def test_output_layer_only_at_continuation_tokens(tiny_tokenizer):
    judge = _judge(tiny_llama(tiny_tokenizer), tiny_tokenizer)
    prompts, conts = _pairs()
    got = judge.loglikelihood(prompts, conts)
    assert judge.backend.stats.head_rows == sum(g.n_tokens for g in got)


def test_boundary_rule_moves_trailing_spaces(tiny_tokenizer):
    judge = _judge(tiny_llama(tiny_tokenizer), tiny_tokenizer)
    a, b = judge.loglikelihood(["the answer is ", "the answer is"], ["good", " good"])
    assert a.token_ids == b.token_ids
    assert a.logprobs == pytest.approx(b.logprobs, abs=1e-12)
    assert tiny_tokenizer.decode(list(a.token_ids)) == " good"
    # newlines stay with the prompt
    assert split_boundary("Summary:\n", "x") == ("Summary:\n", "x")


def test_same_tokens_after_any_prompt(tiny_tokenizer):
    """PMI subtracts two sums over the very same tokens: the continuation is tokenised alone."""
    judge = _judge(tiny_llama(tiny_tokenizer), tiny_tokenizer)
    cont = " 100 and the answer"
    with_src, without = judge.loglikelihood(["Total", "Rating 7/10 and yes"], [cont, cont])
    assert with_src.token_ids == without.token_ids == tuple(tiny_tokenizer(cont, add_special_tokens=False)["input_ids"])


def test_empty_continuation_and_errors(tiny_tokenizer):
    judge = _judge(tiny_llama(tiny_tokenizer), tiny_tokenizer, context=40)
    (empty,) = judge.loglikelihood(["yes"], [""])
    assert empty.n_tokens == 0 and empty.sum == 0 and math.isnan(empty.mean) and math.isnan(empty.min)
    with pytest.raises(ContextLengthError, match="empty"):
        judge.loglikelihood([""], [" good"])
    with pytest.raises(ContextLengthError, match="--truncate"):
        judge.loglikelihood(["yes"], [" the answer is good" * 20])


def test_dummy_prefix_tokenizer_spells_the_continuation():
    """A SentencePiece-style tokenizer that prepends '▁' to text on its own must not add a space."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>", "<s>"])
    tok.train_from_iterator(["the answer is good", "Good answer", "the response is bad"] * 50, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<unk>")
    assert tokenizer.decode(
        tokenizer("good", add_special_tokens=False)["input_ids"]
    ) != "good" or tokenizer.convert_ids_to_tokens(tokenizer("good", add_special_tokens=False)["input_ids"])[
        0
    ].startswith("▁")
    judge = _judge(tiny_llama(tokenizer), tokenizer)
    backend = judge.backend
    for text in ["good", " good", "answer is good", " the answer"]:
        ids = backend.encode_continuation(text)
        assert spelled(backend.tokenizer, ids) == text, text
    unspaced, spaced = backend.encode_continuation("good"), backend.encode_continuation(" good")
    assert unspaced != spaced


@pytest.mark.parametrize("build", ["granite", "gemma3-softcap"])
def test_models_that_rescale_their_logits(tiny_tokenizer, build):
    """Gemma's soft-capping is applied to the split head; Granite's scaling keeps the plain forward."""
    from test_tree_head import _granite

    if build == "granite":
        model = _granite(tiny_tokenizer)
    else:
        model = tiny_gemma3(tiny_tokenizer)
        model.config.final_logit_softcapping = 3.0
    prompts, conts = _pairs()
    judge = _judge(model, tiny_tokenizer, budget=300)
    got = judge.loglikelihood(prompts, conts)
    assert (judge.backend.runner.decoder is None) == (build == "granite")
    for p, c, g in zip(prompts, conts, got):
        assert list(g.logprobs) == pytest.approx(brute_force(model, tiny_tokenizer, p, c), abs=TOL)
