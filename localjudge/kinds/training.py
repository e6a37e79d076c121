"""What a kind tells training about its metrics: the labels they take, and how a reading is trained.

A kind whose metrics learn from human labels says which kind of label (`LabelKind`) through
`MetricKind.label_kind`; one whose reading can be trained through the exact distribution `eval` reads
(G-Eval, entailment, pairwise) also gives the outcomes it reads (`Outcomes`: the token tree and the
number each outcome stands for), each case's prompts with the distribution a judge is taught on them
(`TrainingExample`), and how a case's score is read back from those prompts' distributions. The
features that train (`tune`, heads) ask the kind; none tests a metric's type.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np

from localjudge.scoring.trie import TokenTree

LabelKind = Literal["rating", "binary", "preference"]
"""What a human label says: a rating on a scale, yes (1) or no (0), or which of two outputs is better."""


class Outcomes(NamedTuple):
    """What a trainable reading is a distribution over."""

    tree: TokenTree
    """The token tree the judge's distribution is read on."""
    values: np.ndarray
    """(V,) the number each outcome stands for: the scores, or 1/0 for yes/no (A/B)."""


class TrainingExample(NamedTuple):
    """One prompt of a case and the distribution over its outcomes the judge is taught there."""

    prompt: str
    """The prompt exactly as `eval` sends it."""
    target: np.ndarray
    """(V,) the taught distribution over the outcomes."""


def soft_target(value: float, low: int, high: int) -> np.ndarray:
    """A rating between two scores as mass on both: 3.67 on 1..5 is 2/3 on 4 and 1/3 on 3.

    Examples:
        >>> soft_target(3.75, 1, 5).round(2).tolist()
        [0.0, 0.0, 0.25, 0.75, 0.0]
    """
    assert low <= value <= high
    out = np.zeros(high - low + 1)
    below = int(np.floor(value))
    share = value - below
    out[below - low] = 1.0 - share
    if share > 0:
        out[below - low + 1] = share
    return out


def yes_no(label: float) -> np.ndarray:
    """(2,) the taught distribution over (yes, no) of a label 1 (yes) or 0 (no)."""
    return np.array([label, 1.0 - label])
