"""Token-level readings of a scored text: from per-token values to one score and the claims that drove it.

A hallucinated name, number or date is one surprising token in an otherwise fluent summary; a mean
over 60 tokens dilutes it to nothing. These aggregations read the per-token values the engine
returns (log-probabilities given the source, or per-token PMI: given minus without the source)
so that one bad claim can decide the score. Pure: arrays and token texts in, a `TokenReading` out.

Units (`unit`): each token, or each word (`spans.words`: the sum of its tokens' values, so a
name split into three tokens counts once, with all its surprise). `focus: salient` keeps only
words that name or count something (`spans.salient`: digits, capitalised words past a sentence's
start). Aggregations, over the units kept:

- `mean`, `sum`: the mean and the sum of the unit values;
- `min`: the lowest unit value (the least likely word);
- `quantile`: the q-quantile of the unit values (linear interpolation; q = 0.1 reads the tenth
  lowest percent, less brittle than the minimum);
- `count_below`: minus the number of units whose value is below `below` (0 is best);
- `sentence_min`: the lowest per-sentence mean of the token values (the worst sentence).

Examples:
    >>> values = np.array([-0.1, -0.2, -0.1, -6.0, -0.3])          # (T,) log-probabilities
    >>> surfaces = ["Sales", " rose", " in", " 1925", "."]
    >>> r = read_tokens(values, surfaces, "min", unit="word")
    >>> r.value, r.worst[0].text
    (-6.3, ' 1925.')
    >>> read_tokens(values, surfaces, "count_below", below=-2.0).value
    -1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, NamedTuple

import numpy as np

from localjudge.scoring.spans import salient_words, sentences, words

Aggregation = Literal["mean", "sum", "min", "quantile", "count_below", "sentence_min"]
Unit = Literal["token", "word"]
Focus = Literal["all", "salient"]
WORST = 3
"""How many of the lowest units a reading keeps, for the record."""


class UnitValue(NamedTuple):
    """One unit of the text (a token, a word or a sentence) and its value."""

    start: int  # first token
    stop: int  # one past the last token
    text: str
    value: float
    word: str = ""  # the word the unit lies in (a token's word; a word or sentence itself)


class TokenReading(NamedTuple):
    """The aggregate of a text's token values and what it was made of."""

    value: float  # NaN when the focus kept no unit
    units: int  # units aggregated
    worst: list[UnitValue]  # the lowest units, lowest first (at most WORST)
    worst_sentence: UnitValue | None  # the sentence with the lowest mean token value


def units(values: np.ndarray, surfaces: Sequence[str], unit: Unit, focus: Focus) -> list[UnitValue]:
    """The text's units with their values: tokens or words (summed), all or only salient words."""
    assert len(values) == len(surfaces), "one value per token"
    kept = salient_words(surfaces) if focus == "salient" else words(surfaces)
    if unit == "word":
        return [UnitValue(w.start, w.stop, w.text, math.fsum(values[w.start : w.stop]), w.text) for w in kept]
    # tokens one by one (of the salient words only, with that focus), each with the word it lies in
    return [UnitValue(k, k + 1, surfaces[k], float(values[k]), w.text) for w in kept for k in range(w.start, w.stop)]


def sentence_values(values: np.ndarray, surfaces: Sequence[str]) -> list[UnitValue]:
    """Each sentence with the mean value of its tokens."""
    return [
        UnitValue(s.start, s.stop, s.text, math.fsum(values[s.start : s.stop]) / (s.stop - s.start), s.text)
        for s in sentences(surfaces)
    ]


def read_tokens(
    values: np.ndarray,
    surfaces: Sequence[str],
    aggregation: Aggregation,
    *,
    unit: Unit = "token",
    focus: Focus = "all",
    quantile: float | None = None,
    below: float | None = None,
) -> TokenReading:
    """Aggregates (T,) per-token values of a text whose tokens spell `surfaces`.

    Args:
        values: (T,) log-probabilities, or per-token PMI, one per token.
        surfaces: (T,) the text each token adds.
        aggregation: see the module docstring.
        unit: token or word.
        focus: all units, or only salient words.
        quantile: q in (0, 1), for `quantile`.
        below: the threshold of `count_below`, in the values' unit (nats).
    """
    values = np.asarray(values, dtype=np.float64)  # (T,)
    sents = sentence_values(values, surfaces)
    worst_sentence = min(sents, key=lambda s: s.value) if sents else None
    if aggregation == "sentence_min":
        value = worst_sentence.value if worst_sentence is not None else math.nan
        return TokenReading(value, len(sents), sorted(sents, key=lambda s: s.value)[:WORST], worst_sentence)
    us = units(values, surfaces, unit, focus)
    worst = sorted(us, key=lambda u: u.value)[:WORST]
    v = np.array([u.value for u in us])  # (U,)
    if not len(v):
        return TokenReading(math.nan, 0, [], worst_sentence)
    if aggregation == "mean":
        value = math.fsum(v) / len(v)
    elif aggregation == "sum":
        value = math.fsum(v)
    elif aggregation == "min":
        value = float(v.min())
    elif aggregation == "quantile":
        assert quantile is not None and 0 < quantile < 1, "the spec checks q"
        value = float(np.quantile(v, quantile))
    else:
        assert aggregation == "count_below" and below is not None, "the spec checks the threshold"
        value = -float(np.count_nonzero(v < below))
    return TokenReading(value, len(v), worst, worst_sentence)
