"""What `gpu.py` runs: random-weight judges of real shapes, G-Eval and likelihood workloads, floors.

Models come from `gpu_configs.json` (the registry judges' config.json values) with random weights,
initialised on the device in bf16 (fp32 on a CPU, whose bf16 matmuls are slow); `--tiny` keeps
each architecture's features (grouped KV, rope type, soft-capping, sliding windows) at toy sizes.
The tokenizer is the tiny trained BPE; the model's larger vocabulary is padded logit rows, so the
output layer costs what the real one does. Prompts are word sequences (about one token a word)
shaped like the real workloads.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import torch

from localjudge import EngineOptions, Judge, JudgeInfo
from localjudge.engine.batching import plan_batches
from localjudge.testing import build_tiny_tokenizer

HERE = Path(__file__).resolve().parent
CONFIGS = {k: v for k, v in json.loads((HERE / "gpu_configs.json").read_text()).items() if not k.startswith("_")}
TINY = dict(
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    vocab_size=4096,
)
WORDS = "the answer is good bad score rating quality fluent helpful response yes no maybe".split()


def build_model(name: str, tiny: bool, device: str, dtype: torch.dtype):
    """A random-weight model of the registry judge `name`, built on `device` in `dtype`, eval mode."""
    from transformers import AutoConfig, AutoModelForCausalLM

    spec = {k: v for k, v in CONFIGS[name].items() if not k.startswith("_")}
    model_type = spec.pop("model_type")
    if tiny:
        spec.update(TINY)
        if "query_pre_attn_scalar" in spec:
            spec["query_pre_attn_scalar"] = TINY["head_dim"]
        if "sliding_window" in spec:
            spec["sliding_window"] = 32  # shorter than the tiny prompts, so windows matter
        for key in ("bos_token_id", "eos_token_id", "pad_token_id"):
            spec.pop(key, None)  # the real ids lie outside the toy vocabulary
    config = AutoConfig.for_model(model_type, **spec)
    before = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # initialise in bf16 directly: a 9B model in fp32 is 36 GB
    try:
        with torch.device(device):
            model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    finally:
        torch.set_default_dtype(before)
    return model.eval()


def cast(base, name: str, tiny: bool, device: str, dtype: torch.dtype):
    """The same weights as `base` in `dtype`: a model of the same shape built in `dtype`, `base`'s weights copied in."""
    model = build_model(name, tiny, device, dtype)
    model.load_state_dict(base.state_dict())
    return model


def tokenizer():
    return build_tiny_tokenizer()


def make_judge(name: str, model, tok, device: str, budget: int, reuse: bool, extra: dict) -> Judge:
    """The public way to wrap a model: `Judge.from_model` with resolved `EngineOptions` (+ `extra` fields)."""
    dtype = str(model.dtype).removeprefix("torch.")
    options = EngineOptions(device=device, dtype=dtype, token_budget=budget, reuse_prefix=reuse, **extra)
    info = JudgeInfo(
        name=name,
        family=CONFIGS[name]["model_type"],
        source="random weights",
        provenance=f"config:{CONFIGS[name].get('_repo', name)}",
        dtype=dtype,
        device=device,
        chat_template=False,
        context_length=8192,
    )
    return Judge.from_model(model, tok, info, options)


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, k=n))


def geval_prompts(n: int, tiny: bool, seed: int = 0) -> list[str]:
    """n prompts: three shared instruction prefixes (metrics), per-item cases, then 'Score:'."""
    rng = random.Random(seed)
    k = 10 if tiny else 1
    prefixes = [f"Metric {m}. " + _words(rng, 300 // k) for m in range(3)]
    return [f"{prefixes[i % 3]}\n\nCase:\n{_words(rng, rng.randint(150, 450) // k)}\n\nScore:" for i in range(n)]


def likelihood_pairs(articles: int, per: int, tiny: bool, seed: int = 1) -> tuple[list[str], list[str]]:
    """SummEval-shaped pairs: each article (~400 words) followed by `per` summaries (40-80 words)."""
    rng = random.Random(seed)
    k = 10 if tiny else 1
    prompts, conts = [], []
    for _ in range(articles):
        article = f"Article:\n{_words(rng, 400 // k)}\n\nTL;DR:"
        for _ in range(per):
            prompts.append(article)
            conts.append(" " + _words(rng, rng.randint(40, 80) // k))
    return prompts, conts


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def floor_scoring(model, ids: list[list[int]], tree_tokens: list[int], budget: int, pad: int, device: str) -> None:
    """Prompts + the score tree's tokens, left-padded, token-budget batches, a plain 2D mask, one logit row."""
    t = len(tree_tokens)
    for batch in plan_batches([len(r) + t for r in ids], budget).batches:
        rows = [ids[i] for i in batch]
        width = max(map(len, rows))
        x = torch.full((len(rows), width + t), pad, dtype=torch.long)
        attn = torch.zeros_like(x)
        for b, r in enumerate(rows):
            x[b, width - len(r) : width] = torch.tensor(r)
            attn[b, width - len(r) :] = 1
        x[:, width:] = torch.tensor(tree_tokens)
        with torch.inference_mode():
            model(input_ids=x.to(device), attention_mask=attn.to(device), logits_to_keep=1, use_cache=False)


def floor_likelihood(model, rows: list[list[int]], budget: int, pad: int, device: str) -> None:
    """Prompt + continuation tokens, right-padded, token-budget batches, a plain 2D mask, one logit row."""
    for batch in plan_batches([len(r) for r in rows], budget).batches:
        width = max(len(rows[i]) for i in batch)
        x = torch.full((len(batch), width), pad, dtype=torch.long)
        attn = torch.zeros_like(x)
        for b, i in enumerate(batch):
            x[b, : len(rows[i])] = torch.tensor(rows[i])
            attn[b, : len(rows[i])] = 1
        with torch.inference_mode():
            model(input_ids=x.to(device), attention_mask=attn.to(device), logits_to_keep=1, use_cache=False)


def body_params(model) -> int:
    """Weights outside the embedding and the output layer (the per-token matmuls)."""
    return sum(p.numel() for n, p in model.named_parameters() if "embed" not in n and "lm_head" not in n)
