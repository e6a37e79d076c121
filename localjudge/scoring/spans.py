"""Words and sentences of a scored text, found on its tokens: which tokens make up which claim.

Pure functions over the text each token adds (`Backend.token_surfaces`), so a reading can point
at the words and the sentence that made a score low. The rules are simple and documented rather
than linguistic:

- a **word** is a maximal run of tokens without whitespace between them ("NS-CL," is one word,
  " 7" after " at" is another);
- a **sentence** ends after ".", "!" or "?" (closing quotes and brackets included) followed by
  whitespace and a capital, a digit or an opening quote, except after a few abbreviations and
  single-letter initials ("Mr.", "U.S.", "J."); a line break always ends one;
- a **salient** word names or counts something: it holds a digit, or a capital letter anywhere
  but at the start of a sentence's first word (a name, an acronym: "Paris", "NS-CL", "iPhone").

Examples:
    >>> sentence_bounds("It rained. Mr. Smith left at 5 p.m. on Monday.")
    [(0, 10), (11, 46)]
    >>> [w.text for w in words(["The", " cat", " sat", " at", " ", "7", "."])]
    ['The', ' cat', ' sat', ' at', ' 7.']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise
from typing import NamedTuple

ABBREVIATIONS = frozenset({"mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "no", "e.g", "i.e", "u.s", "u.k"})
_END = re.compile(r"[.!?][\"'”’)\]]*(?=\s+[\"'“‘(\[]?[A-Z0-9])")


class Span(NamedTuple):
    """Tokens start..stop (exclusive) of a text, and the text they spell."""

    start: int
    stop: int
    text: str


def sentence_bounds(text: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of each sentence, surrounding whitespace left out."""
    cuts = [0]
    for m in _END.finditer(text):
        word = text[: m.start()].split()[-1:] or [""]
        stem = word[0].lower().lstrip("\"'“‘([")
        if stem in ABBREVIATIONS or re.fullmatch(r"[a-z]", stem):
            continue
        cuts.append(m.end())
    cuts += [m.end() for m in re.finditer(r"\n+", text)]
    cuts = sorted(set(cuts)) + [len(text)]
    out = []
    for a, b in pairwise(cuts):
        seg = text[a:b]
        lead = len(seg) - len(seg.lstrip())
        if seg.strip():
            out.append((a + lead, a + len(seg.rstrip())))
    return out


def split_sentences(text: str) -> list[str]:
    """The sentences of a text (`sentence_bounds`).

    Examples:
        >>> split_sentences("Profit rose 5%. It fell in Q3.")
        ['Profit rose 5%.', 'It fell in Q3.']
    """
    return [text[a:b] for a, b in sentence_bounds(text)]


def _offsets(surfaces: Sequence[str]) -> list[int]:
    """Character offset at which each token starts in the joined text, and the total length last."""
    out = [0]
    for s in surfaces:
        out.append(out[-1] + len(s))
    return out


def words(surfaces: Sequence[str]) -> list[Span]:
    """The words of a tokenised text: runs of tokens with no whitespace between them.

    A token that starts with whitespace starts a word; a token that is only whitespace joins the
    word after it (" " then "7" is the word " 7"). Every token belongs to exactly one word.
    """
    spans: list[Span] = []
    start = 0
    for k in range(1, len(surfaces) + 1):
        ends = k == len(surfaces)
        if not ends:
            prev, cur = surfaces[k - 1], surfaces[k]
            ends = (cur[:1].isspace() and not prev.isspace()) or (prev[-1:].isspace() and not prev.isspace())
        if ends:
            spans.append(Span(start, k, "".join(surfaces[start:k])))
            start = k
    return spans


def sentences(surfaces: Sequence[str]) -> list[Span]:
    """The sentences of a tokenised text, as whole tokens: a token belongs to the sentence it starts in.

    A token holding only whitespace between two sentences joins the next one.
    """
    text = "".join(surfaces)
    bounds = sentence_bounds(text)
    if not bounds:
        return [Span(0, len(surfaces), text)] if surfaces else []
    offsets = _offsets(surfaces)
    owner = []
    for k in range(len(surfaces)):
        first_char = offsets[k] + (len(surfaces[k]) - len(surfaces[k].lstrip()))
        owner.append(sum(1 for a, _ in bounds[1:] if a <= first_char))
    spans = []
    for s in range(len(bounds)):
        ks = [k for k, o in enumerate(owner) if o == s]
        if ks:
            spans.append(Span(ks[0], ks[-1] + 1, "".join(surfaces[ks[0] : ks[-1] + 1])))
    return spans


def salient(word: str, first_in_sentence: bool) -> bool:
    """Whether a word names or counts something: a digit, or a capital not explained by the sentence start.

    Examples:
        >>> salient(" 1889,", False), salient(" Paris", False), salient("The", True), salient(" the", False)
        (True, True, False, False)
        >>> salient("NS-CL", True)
        True
    """
    w = word.strip().strip("\"'“”‘’()[],.;:!?")
    if any(c.isdigit() for c in w):
        return True
    capitals = [i for i, c in enumerate(w) if c.isupper()]
    return bool(capitals) and (not first_in_sentence or capitals != [0])


def salient_words(surfaces: Sequence[str]) -> list[Span]:
    """The words of a tokenised text that are `salient`."""
    firsts = {s.start for s in sentences(surfaces)}
    return [w for w in words(surfaces) if salient(w.text, w.start in firsts)]
