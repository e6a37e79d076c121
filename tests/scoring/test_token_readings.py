"""Token-level readings: words, sentences and salient words on token texts, and every aggregation.

Pure maths on hand-built token lists and value arrays: each aggregation is checked against the
number worked out by hand, so a mean that dilutes one bad token, a word that loses its second
token or a sentence cut in the wrong place fails here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from localjudge.scoring.aggregate import read_tokens, units
from localjudge.scoring.spans import salient, salient_words, sentence_bounds, sentences, split_sentences, words

# "Sales rose 5% in 2019. Mr. Smith left Paris." as a tokenizer might cut it
SURFACES = ["Sales", " rose", " ", "5", "%", " in", " 20", "19", ".", " Mr", ".", " Smith", " left", " Par", "is", "."]
VALUES = np.array([-1.0, -0.5, -0.1, -4.0, -0.2, -0.3, -1.0, -2.0, -0.1, -0.5, -0.1, -3.0, -0.4, -1.5, -0.5, -0.1])


def test_words_join_tokens_without_whitespace_between():
    got = [w.text for w in words(SURFACES)]
    assert got == ["Sales", " rose", " 5%", " in", " 2019.", " Mr.", " Smith", " left", " Paris."]
    assert [(w.start, w.stop) for w in words(SURFACES)][2] == (2, 5)  # " ", "5", "%"
    assert sum(w.stop - w.start for w in words(SURFACES)) == len(SURFACES)  # every token in one word


def test_sentences_skip_abbreviations_and_own_whole_tokens():
    text = "".join(SURFACES)
    assert split_sentences(text) == ["Sales rose 5% in 2019.", "Mr. Smith left Paris."]
    spans = sentences(SURFACES)
    assert [(s.start, s.stop) for s in spans] == [(0, 9), (9, 16)]
    assert sentence_bounds("No end here") == [(0, 11)]
    assert split_sentences("First line\nsecond line") == ["First line", "second line"]
    assert split_sentences("Pi is 3.14 today. J. K. Rowling wrote it.") == [
        "Pi is 3.14 today.",
        "J. K. Rowling wrote it.",
    ]


@pytest.mark.parametrize(
    "word, first, expected",
    [(" 1889,", False, True), (" Paris", False, True), ("The", True, False), (" the", False, False),
     ("NS-CL", True, True), ("iPhone", True, True), (" (Smith)", False, True), (" ", False, False)],
)  # fmt: skip
def test_salient(word, first, expected):
    assert salient(word, first) is expected


def test_salient_words_are_numbers_and_names_past_a_sentence_start():
    # " Mr." starts its sentence: its capital says nothing
    assert [w.text for w in salient_words(SURFACES)] == [" 5%", " 2019.", " Smith", " Paris."]


def test_units_sum_a_words_tokens():
    us = units(VALUES, SURFACES, "word", "all")
    assert [u.text for u in us][4] == " 2019."
    assert us[4].value == pytest.approx(-1.0 - 2.0 - 0.1)
    assert len(units(VALUES, SURFACES, "token", "all")) == len(SURFACES)
    # salient tokens, one by one: the tokens of the salient words only
    salient_tokens = units(VALUES, SURFACES, "token", "salient")
    assert [u.text for u in salient_tokens][:3] == [" ", "5", "%"]


@pytest.mark.parametrize(
    "settings, expected",
    [
        (dict(aggregation="mean"), VALUES.mean()),
        (dict(aggregation="sum"), VALUES.sum()),
        (dict(aggregation="min"), -4.0),
        (dict(aggregation="min", unit="word"), -4.3),  # " 5%": -0.1 - 4.0 - 0.2
        (dict(aggregation="min", unit="word", focus="salient"), -4.3),
        (dict(aggregation="mean", unit="word", focus="salient"), (-4.3 - 3.1 - 3.0 - 2.1) / 4),
        (dict(aggregation="quantile", quantile=0.5), float(np.median(VALUES))),
        (dict(aggregation="count_below", below=-1.5), -3.0),  # -4.0, -2.0, -3.0 (-1.5 is not below)
        (dict(aggregation="count_below", unit="word", below=-3.0), -2.0),  # 5% -4.3, 2019. -3.1; Smith -3.0 is not
        (dict(aggregation="sentence_min"), min(VALUES[:9].mean(), VALUES[9:].mean())),
    ],
)
def test_aggregations_by_hand(settings, expected):
    assert read_tokens(VALUES, SURFACES, **settings).value == pytest.approx(expected, abs=1e-12)


def test_one_bad_token_decides_min_but_is_diluted_by_the_mean():
    fluent = np.full(40, -0.2)
    bad = fluent.copy()
    bad[17] = -9.0
    surfaces = [" w"] * 40
    assert read_tokens(bad, surfaces, "mean").value > -0.5  # 40 tokens dilute it
    assert read_tokens(bad, surfaces, "min").value == -9.0
    assert read_tokens(bad, surfaces, "min").worst[0].start == 17


def test_a_token_unit_shows_the_word_it_lies_in():
    worst = read_tokens(VALUES, SURFACES, "min").worst[0]
    assert (worst.text, worst.word, worst.value) == ("5", " 5%", -4.0)  # the digit, and its number


def test_reading_names_the_worst_units_and_sentence():
    r = read_tokens(VALUES, SURFACES, "min", unit="word")
    assert [u.text for u in r.worst] == [" 5%", " 2019.", " Smith"]  # lowest first, at most 3
    assert r.worst_sentence is not None and r.worst_sentence.text == "Sales rose 5% in 2019."
    assert r.units == 9


def test_salient_focus_without_salient_words_reads_nothing():
    r = read_tokens(np.array([-1.0, -2.0]), ["The", " cat"], "min", unit="word", focus="salient")
    assert math.isnan(r.value) and r.units == 0 and r.worst == []
