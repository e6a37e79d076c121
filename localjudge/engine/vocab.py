"""Surface text of every token id, as it appears when the token follows other text.

Decoding a token on its own is unreliable: SentencePiece decoders drop the leading space of the
first token ("▁1" -> "1"), byte-fallback tokens ("<0x31>") need fusing. Decoding the token after a
fixed anchor token and removing the anchor's text gives the text the token adds mid-sequence,
whatever the tokenizer family.

Decoding the whole vocabulary takes seconds (0.9 s for SmolLM2's 49k tokens, several for Gemma's
262k), so the surfaces are remembered per tokenizer object and vocabulary size: judges rebuilt
over one loaded tokenizer (other engine options, another dtype of the same model) decode once.
"""

from __future__ import annotations

import weakref
from typing import Any

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
