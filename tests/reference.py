"""Brute-force reference for the score semantics: one full forward per token path, no batching.

Independent of localjudge's trie and engine: it enumerates token paths by recursion over the
vocabulary's decoded strings and runs the unpadded prompt + path through the model each time.
"""

from __future__ import annotations

import torch


def decoded_vocab(tokenizer) -> list[str]:
    """Each token's text when it follows the word 'a' (so SentencePiece keeps its space)."""
    a = tokenizer.encode("a", add_special_tokens=False)[-1]
    head = tokenizer.decode([a])
    return [tokenizer.decode([a, i])[len(head):] for i in range(len(tokenizer))]


def next_probs(model, ids: list[int]) -> torch.Tensor:
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([ids]), use_cache=False).logits[0, -1]
    return torch.softmax(logits.double(), dim=-1)


def brute_force_scores(model, tokenizer, text: str, values: list[str], vocab: list[str],
                       is_continuation=lambda s: s[:1].isdigit() and s[:1] in "0123456789",
                       variants=lambda v: [v, " " + v]) -> dict[str, float]:
    """Unnormalised P(value) for each value, summed over every spelling and token path."""
    spellings = {s: v for v in values for s in variants(v)}
    prefixes = {s[:i] for s in spellings for i in range(1, len(s) + 1)}
    cont = [bool(t) and is_continuation(t) for t in vocab]
    prompt = tokenizer(text)["input_ids"]
    out = {v: 0.0 for v in values}

    def walk(path_ids: list[int], spelled: str, p: float) -> None:
        probs = next_probs(model, prompt + path_ids)
        if spelled in spellings:
            # ids past the tokenizer (a padded embedding) have no text: they never continue
            ends = torch.tensor(cont + [False] * (len(probs) - len(cont)))
            out[spellings[spelled]] += p * float(1 - probs[ends].sum())
        for tid, piece in enumerate(vocab):
            if piece and spelled + piece in prefixes:
                walk(path_ids + [tid], spelled + piece, p * float(probs[tid]))

    walk([], "", 1.0)
    return out


def label_variants(label: str) -> list[str]:
    """A label as given, lower, upper and capitalised, each with and without one leading space."""
    cases = {label, label.lower(), label.upper(), label.capitalize()}
    return [s for c in sorted(cases) for s in (c, " " + c)]


def continues_word(text: str) -> bool:
    """Whether a token continues a word: its text begins with a letter, digit or underscore."""
    return text[:1].isalnum() or text[:1] == "_"
