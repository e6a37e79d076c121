"""A tiny Llama written as a real GGUF file (the `gguf` package's writer), for fast loading tests.

transformers loads it through the same GGUF path as the embedded judges: metadata parsed into a
config, a byte-level BPE tokenizer rebuilt from the token list and merges, tensors dequantised
(the MLP weights are stored as Q8_0 blocks, the rest as F32).
"""

from __future__ import annotations

import json
from pathlib import Path

CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)
_BLOCK = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ffn_norm",
}
_TOP = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight"}


def write_tiny_gguf(path: Path, tokenizer, model) -> Path:
    """Writes `model` (a `tiny_llama`) with `tokenizer` (the tiny BPE) as a llama GGUF at `path`."""
    import gguf
    import numpy as np

    c = model.config
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("tiny-llama")
    w.add_context_length(c.max_position_embeddings)
    w.add_embedding_length(c.hidden_size)
    w.add_block_count(c.num_hidden_layers)
    w.add_feed_forward_length(c.intermediate_size)
    w.add_head_count(c.num_attention_heads)
    w.add_head_count_kv(c.num_key_value_heads)
    w.add_layer_norm_rms_eps(c.rms_norm_eps)
    w.add_rope_dimension_count(c.hidden_size // c.num_attention_heads)
    w.add_vocab_size(c.vocab_size)
    spec = json.loads(tokenizer.backend_tokenizer.to_str())
    tokens = [t for t, _ in sorted(spec["model"]["vocab"].items(), key=lambda kv: kv[1])]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    special = set(tokenizer.all_special_tokens)
    w.add_token_types([gguf.TokenType.CONTROL if t in special else gguf.TokenType.NORMAL for t in tokens])
    w.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]])
    w.add_bos_token_id(tokenizer.eos_token_id)
    w.add_eos_token_id(tokenizer.eos_token_id)
    w.add_pad_token_id(tokenizer.pad_token_id)
    w.add_chat_template(CHAT_TEMPLATE)
    for name, tensor in model.state_dict().items():
        data = tensor.detach().float().numpy()
        if name == "lm_head.weight":
            w.add_tensor("output.weight", data)
            continue
        if name in _TOP:
            w.add_tensor(_TOP[name], data)
            continue
        _, _, layer, *rest = name.split(".")
        module = ".".join(rest[:-1])
        heads = {"self_attn.q_proj": c.num_attention_heads, "self_attn.k_proj": c.num_key_value_heads}.get(module)
        if heads:  # llama.cpp stores q and k rotary-permuted; transformers undoes it on load
            data = data.reshape(heads, 2, data.shape[0] // heads // 2, -1).swapaxes(1, 2).reshape(data.shape)
        target = f"blk.{layer}.{_BLOCK[module]}.weight"
        if module.startswith("mlp."):
            q8 = gguf.GGMLQuantizationType.Q8_0
            w.add_tensor(target, gguf.quants.quantize(np.ascontiguousarray(data), q8), raw_dtype=q8)
        else:
            w.add_tensor(target, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
