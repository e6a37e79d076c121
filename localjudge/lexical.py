"""Lexical overlap with a reference text: ROUGE-L, the baseline every summary metric is compared to.

ROUGE-L (Lin, 2004) as the `rouge-score` package computes `rougeL` by default: lower-cased
alphanumeric tokens, no stemming, the longest common subsequence (LCS) of the two token lists,
F-measure with β = 1. Pure functions; no model.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens."""
    return _TOKEN.findall(text.lower())


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two token lists (O(len(a)·len(b)))."""
    if len(a) < len(b):
        a, b = b, a
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0  # row[j - 1] of the previous line
        for j, y in enumerate(b, start=1):
            keep = row[j]
            row[j] = prev + 1 if x == y else max(row[j], row[j - 1])
            prev = keep
    return row[-1]


def rouge_l(candidate: str, reference: str) -> float:
    """ROUGE-L F1 of a candidate against a reference, in [0, 1]; 0 when either has no tokens.

    Examples:
        >>> round(rouge_l("the cat sat on the mat", "the cat lay on the mat"), 3)
        0.833
    """
    c, r = tokens(candidate), tokens(reference)
    lcs = lcs_length(c, r)
    if not lcs:
        return 0.0
    precision, recall = lcs / len(c), lcs / len(r)
    return 2 * precision * recall / (precision + recall)
