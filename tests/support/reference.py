"""Brute-force reference for the score semantics: one forward per token path, no tree masks.

Independent of localjudge's trie and engine: it enumerates token paths by recursion over the
vocabulary's decoded strings and runs the unpadded prompt + path through the model each time.
With `reuse_prompt=True` the prompt is run once and its KV cache (transformers' own generation
path, which localjudge never uses) is extended by each path, so real models stay fast on CPU; all
paths of one depth then share a forward, with equal lengths and no padding. `brute_force` is the
likelihood reference: one unpadded forward per (prompt, continuation), after localjudge's boundary rule.
"""

from __future__ import annotations

import copy
import inspect

import torch

from localjudge.scoring.likelihood import split_boundary

VOCAB = [str(d) for d in range(10)] + ["10", "100", " ", " 1", " 10", " 5", "a", ".", "\n", "7b", "12"]
"""A vocabulary of digits, multi-digit numerals, spaced numerals and other tokens (property tests of the trie)."""


def decoded_vocab(tokenizer) -> list[str]:
    """Each token's text when it follows the word 'a' (so SentencePiece keeps its space)."""
    a = tokenizer.encode("a", add_special_tokens=False)[-1]
    head = tokenizer.decode([a])
    return [text[len(head) :] for text in tokenizer.batch_decode([[a, i] for i in range(len(tokenizer))])]


def next_probs(model, ids: list[int]) -> torch.Tensor:
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([ids]), use_cache=False, logits_to_keep=1).logits[0, -1]
    return torch.softmax(logits.double(), dim=-1)


class _PromptCache:
    """Next-token probabilities after prompt + path, for many equal-length paths at once."""

    def __init__(self, model, prompt: list[int]):
        self.model = model
        # transformers ≥ 5.2x names the argument `cache`; earlier versions `past_key_values`
        self.kw = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        with torch.inference_mode():
            out = model(input_ids=torch.tensor([prompt]), use_cache=True, logits_to_keep=1)
        self.cache = out.get("cache", None) or out.past_key_values
        self.root = torch.softmax(out.logits[0, -1].double(), dim=-1)

    def __call__(self, paths: list[list[int]]) -> list[torch.Tensor]:
        if not paths[0]:
            return [self.root for _ in paths]
        cache = copy.deepcopy(self.cache)
        cache.batch_repeat_interleave(len(paths))
        with torch.inference_mode():
            logits = self.model(
                input_ids=torch.tensor(paths), use_cache=True, logits_to_keep=1, **{self.kw: cache}
            ).logits[:, -1]
        return list(torch.softmax(logits.double(), dim=-1))


def brute_force_scores(
    model,
    tokenizer,
    text: str,
    values: list[str],
    vocab: list[str],
    is_continuation=lambda s: s[:1].isdigit() and s[:1] in "0123456789",
    variants=lambda v: [v, " " + v],
    reuse_prompt: bool = False,
) -> dict[str, float]:
    """Unnormalised P(value) for each value, summed over every spelling and token path."""
    spellings = {s: v for v in values for s in variants(v)}
    prefixes = {s[:i] for s in spellings for i in range(1, len(s) + 1)}
    inside = {s[i:j] for s in spellings for i in range(len(s)) for j in range(i + 1, len(s) + 1)}
    # only tokens whose text occurs inside some spelling can be on a path (skips ~all of the vocab)
    pieces = [(tid, t) for tid, t in enumerate(vocab) if t in inside]
    cont = torch.tensor([bool(t) and is_continuation(t) for t in vocab])
    prompt = tokenizer(text)["input_ids"]
    if reuse_prompt:
        level_probs = _PromptCache(model, prompt)
    else:

        def level_probs(paths):
            return [next_probs(model, prompt + path) for path in paths]

    out = {v: 0.0 for v in values}

    level = [([], "", 1.0)]  # (token ids after the prompt, their text, path probability)
    while level:
        following = []
        for (path_ids, spelled, p), probs in zip(level, level_probs([ids for ids, _, _ in level])):
            if spelled in spellings:
                # ids past the tokenizer (a padded embedding) have no text: they never continue
                out[spellings[spelled]] += p * float(1 - probs[: len(cont)][cont].sum())
            for tid, piece in pieces:
                if spelled + piece in prefixes:
                    following.append((path_ids + [tid], spelled + piece, p * float(probs[tid])))
        level = following
    return out


def label_variants(label: str) -> list[str]:
    """A label as given, lower, upper and capitalised, each with and without one leading space."""
    cases = {label, label.lower(), label.upper(), label.capitalize()}
    return [s for c in sorted(cases) for s in (c, " " + c)]


def continues_word(text: str) -> bool:
    """Whether a token continues a word: its text begins with a letter, digit or underscore."""
    return text[:1].isalnum() or text[:1] == "_"


def brute_force(model, tokenizer, prompt: str, continuation: str) -> list[float]:
    """Log-probabilities of the continuation's tokens from one unpadded forward of the pair alone."""
    prompt, continuation = split_boundary(prompt, continuation)
    p = tokenizer(prompt)["input_ids"]
    c = tokenizer(continuation, add_special_tokens=False)["input_ids"] if continuation else []
    if not c:
        return []
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([p + c]), use_cache=False).logits[0].double()
    logp = torch.log_softmax(logits[len(p) - 1 : -1], dim=-1)
    return logp[torch.arange(len(c)), torch.tensor(c)].tolist()
