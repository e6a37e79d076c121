"""Tiny random-weight models for tests: a 2-layer Llama, a sliding-window Gemma 3 and a Qwen2 with
biases in q/k/v, steered to score.

They pair with `build_tiny_tokenizer` (`localjudge.testing.tiny_tokenizer`): no download, a
second to build, and real transformers code paths (packed rows, sliding windows, trees of
multi-token numerals). Needs `torch` and `transformers`.
"""

from __future__ import annotations

import re

from localjudge.judges.judge import JudgeInfo


def tiny_info(context_length: int = 1024):
    """The `JudgeInfo` of a tiny random-initialised test model: fp32 on CPU, no chat template."""
    return JudgeInfo(
        name="tiny",
        family="tiny",
        source="test",
        provenance="random",
        dtype="float32",
        device="cpu",
        chat_template=False,
        context_length=context_length,
    )


def tiny_config(config_class, tokenizer, **fields):
    """A config of `config_class` for a tiny test model: the tokenizer's vocabulary, 2 layers of width 64
    (MLP 128), 4 heads on 2 kv heads, token 0 for pad/bos/eos, untied output layer; `fields` override or add.

    `attn_implementation`, a `PretrainedConfig` keyword, goes through `fields` too.
    """
    defaults = dict(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        pad_token_id=0,
        bos_token_id=0,
        eos_token_id=0,
        tie_word_embeddings=False,
    )
    return config_class(**(defaults | fields))


def tiny_llama(
    tokenizer, *, extra_vocab: int = 0, seed: int = 0, attn: str = "sdpa", hidden: int = 64, intermediate: int = 128
):
    """A random-weight 2-layer Llama (hidden 64, 4 heads, 2 kv heads), fp32, eval mode.

    `extra_vocab` pads the embedding past the tokenizer's size, as many real checkpoints do;
    `hidden` and `intermediate` widen the layers (weights of a given size in bytes).
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = tiny_config(
        LlamaConfig,
        tokenizer,
        vocab_size=len(tokenizer) + extra_vocab,
        hidden_size=hidden,
        intermediate_size=intermediate,
        max_position_embeddings=4096,
        attn_implementation=attn,
    )
    return _steer(LlamaForCausalLM(config).eval(), tokenizer)


def tiny_gemma3(tokenizer, *, window: int = 8, seed: int = 0, attn: str = "sdpa"):
    """A random-weight Gemma 3 text model whose layers mix sliding-window (`window`) and full attention."""
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(seed)
    config = tiny_config(
        Gemma3TextConfig,
        tokenizer,
        num_hidden_layers=3,
        head_dim=16,
        max_position_embeddings=1024,
        sliding_window=window,
        layer_types=["sliding_attention", "full_attention", "sliding_attention"],
        attn_implementation=attn,
    )
    return _steer(Gemma3ForCausalLM(config).eval(), tokenizer)


def tiny_qwen2(tokenizer, *, seed: int = 0, attn: str = "sdpa"):
    """A random-weight 2-layer Qwen2: biases in q/k/v (set to random values: an initialised bias is 0)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = tiny_config(Qwen2Config, tokenizer, max_position_embeddings=4096, attn_implementation=attn)
    model = Qwen2ForCausalLM(config).eval()
    with torch.no_grad():
        for layer in model.model.layers:
            for proj in (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj):
                proj.bias.normal_(0.0, 0.5)
    return _steer(model, tokenizer)


_STEERED = re.compile(r" ?(\d|10|100|[ABab.,/!])?")


def _steer(model, tokenizer):
    """Makes a random model put real mass on scores, labels and terminators, context-dependently.

    A default-init model is near-uniform over ~600 tokens: every score would get ~1/600 of the
    mass and every item would be unscored. Sharpening the head (×10) makes the distributions
    depend visibly on the context; a constant embedding feature read by the head raises digits,
    A/B and a few punctuation tokens (terminators, so numerals also end) for every context.
    """
    import torch

    surfaces = [tokenizer.decode([i]) for i in range(len(tokenizer))]
    steered = [i for i, s in enumerate(surfaces) if s and _STEERED.fullmatch(s)]
    with torch.no_grad():
        model.lm_head.weight.mul_(10.0)
        model.model.embed_tokens.weight[:, 0] = 1.0  # (V,) a feature every position carries
        model.lm_head.weight[steered, 0] += 1.5
    return model
