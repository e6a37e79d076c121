"""Surface text of every token id, as it appears when the token follows other text.

Decoding a token on its own is unreliable: SentencePiece decoders drop the leading space of the
first token ("▁1" -> "1"), byte-fallback tokens ("<0x31>") need fusing. Decoding the token after a
fixed anchor token and removing the anchor's text gives the text the token adds mid-sequence,
whatever the tokenizer family. The same anchoring spells a continuation's tokens
(`continuation_ids`, `spelled`).

Decoding the whole vocabulary takes seconds (0.9 s for SmolLM2's 49k tokens, several for Gemma's
262k), so the surfaces are remembered per tokenizer object and vocabulary size: judges rebuilt
over one loaded tokenizer (other engine options, another dtype of the same model) decode once.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from localjudge.errors import DataError, clip

_KNOWN: weakref.WeakKeyDictionary[Any, tuple[int, tuple[str, ...]]] = weakref.WeakKeyDictionary()


def token_surfaces(tokenizer: Any) -> list[str]:
    """Text each token id contributes when it follows other text, indexed by token id."""
    n = len(tokenizer)
    try:
        known = _KNOWN.get(tokenizer)
    except TypeError:  # not weakly referenceable: decoded every time
        known = None
    if known is not None and known[0] == n:
        return list(known[1])
    out = _decode_surfaces(tokenizer, n)
    try:
        _KNOWN[tokenizer] = (n, tuple(out))
    except TypeError:
        pass
    return out


def _decode_surfaces(tokenizer: Any, n: int) -> list[str]:
    anchor = _anchor_id(tokenizer)
    kw = {"skip_special_tokens": False, "clean_up_tokenization_spaces": False}
    anchor_text = tokenizer.decode([anchor], **kw)
    pairs = tokenizer.batch_decode([[anchor, i] for i in range(n)], **kw)
    out = []
    for i, text in enumerate(pairs):
        if text.startswith(anchor_text):
            out.append(text[len(anchor_text) :])
        else:  # a decoder that rewrote the anchor: fall back to the token alone
            out.append(tokenizer.decode([i], **kw))
    return out


def _anchor_id(tokenizer: Any) -> int:
    """A plain word token that decodes to itself."""
    for word in ("a", "x", "the"):
        ids = tokenizer.encode(word, add_special_tokens=False)
        if len(ids) == 1:
            return ids[0]
    return tokenizer.encode("a", add_special_tokens=False)[-1]


def continuation_ids(tokenizer: Any, text: str) -> list[int]:
    """Token ids of `text` tokenised on its own, no special tokens, spelling exactly `text`.

    A tokenizer that puts a space in front of text on its own (SentencePiece's dummy prefix:
    "It" -> "▁It") is given the text after an anchor ("\n", then "a") whose tokens are dropped.

    Raises:
        DataError: no anchor gives tokens that spell the text (start it with a space).
    """
    if not text:
        return []
    ids = list(tokenizer(text, add_special_tokens=False)["input_ids"])
    if spelled(tokenizer, ids) != " " + text:
        return ids
    for anchor_text in ("\n", "a"):
        anchor = list(tokenizer(anchor_text, add_special_tokens=False)["input_ids"])
        joined = list(tokenizer(anchor_text + text, add_special_tokens=False)["input_ids"])
        if joined[: len(anchor)] == anchor and spelled(tokenizer, joined[len(anchor) :]) == text:
            return joined[len(anchor) :]
    raise DataError(
        f"cannot tokenise the continuation {clip(text, 40)} apart from its prompt without adding a "
        "space; start it with a space"
    )


def spelled(tokenizer: Any, ids: Sequence[int]) -> str:
    """The text token ids add when they follow other text."""
    kw = {"skip_special_tokens": False, "clean_up_tokenization_spaces": False}
    anchor = tokenizer("a", add_special_tokens=False)["input_ids"][-1:]
    head = tokenizer.decode(anchor, **kw)
    text = tokenizer.decode(anchor + list(ids), **kw)
    return text[len(head) :] if text.startswith(head) else text
