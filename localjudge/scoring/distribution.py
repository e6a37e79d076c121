"""Pure math from per-node log-probabilities to score and label distributions.

The engine reads two numbers at every node of a `TokenTree` for every prompt: the log-probability
of the node's own token given its parent's context (`edge_logp`), and the log-probability that the
outcome ends at the node, i.e. that the next token does not continue the numeral or word
(`end_logp`). An outcome's probability is the sum over its terminal nodes of
exp(sum of edge_logp along the path + end_logp at the node).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from localjudge.scoring.trie import TokenTree

DEFAULT_MIN_VALID_MASS = 0.1
"""Below this share of probability on valid outcomes an item is unscored, never guessed."""

DEFAULT_TREE_TOLERANCE = 1e-6
"""Tree nodes left unread may hold at most this share of the valid mass (`engine.tree_head`), so a
score's probabilities move by at most this much in total and its expected value by at most
(high - low) times it."""


@dataclass(frozen=True)
class TreeLogprobs:
    """Per-node log-probabilities for a batch of prompts, as a backend returns them.

    Attributes:
        edge_logp: (B, N) log P(node token | parent context); column 0 unused.
        end_logp: (B, N) log P(next token does not continue the outcome | node context).
    """

    edge_logp: np.ndarray
    end_logp: np.ndarray


def outcome_mass(tree: TokenTree, edge_logp: np.ndarray, end_logp: np.ndarray) -> np.ndarray:
    """Unnormalised probability of each outcome.

    Args:
        tree: the token tree, N nodes, V outcomes.
        edge_logp: (B, N) log P(node token | parent context); column 0 (root) is ignored.
        end_logp: (B, N) log P(outcome ends at node | node context).

    Returns:
        (B, V) float64 probabilities; each row sums to the item's valid mass (≤ 1).
    """
    edge_logp = np.asarray(edge_logp, dtype=np.float64)
    end_logp = np.asarray(end_logp, dtype=np.float64)
    path_logp = np.zeros_like(edge_logp)  # (B, N)
    for node in range(1, tree.n_nodes):  # parents precede children
        path_logp[:, node] = path_logp[:, tree.parents[node]] + edge_logp[:, node]
    node_p = np.exp(path_logp + end_logp)  # (B, N)
    out = np.zeros((edge_logp.shape[0], len(tree.values)))
    terminal = tree.terminal_value >= 0
    np.add.at(out.T, tree.terminal_value[terminal], node_p[:, terminal].T)
    return out


class ScoreDistribution(BaseModel):
    """The judge's probability distribution over the integer scores low..high for one prompt."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    low: int = Field(description="Lowest valid score.")
    high: int = Field(description="Highest valid score.")
    probs: dict[int, float] = Field(description="Score -> probability, normalised over valid scores.")
    valid_mass: float = Field(description="Probability the judge put on any valid score, before normalising.")
    expected: float = Field(description="Probability-weighted mean score; NaN when unscored.")
    normalized: float = Field(description="(expected - low) / (high - low), in [0, 1]; NaN when unscored.")
    mode: int | None = Field(description="Most probable score; None when unscored.")
    std: float = Field(description="Standard deviation of the score distribution; NaN when unscored.")
    entropy: float = Field(description="Entropy of the normalised distribution in nats; NaN when unscored.")
    unscored_reason: str | None = Field(default=None, description="Why no score was read, or None.")

    @property
    def scored(self) -> bool:
        """Whether a score could be read."""
        return self.unscored_reason is None


class LabelDistribution(BaseModel):
    """The judge's probability distribution over a set of labels for one prompt."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    labels: tuple[str, ...] = Field(description="The labels, in the order given.")
    probs: dict[str, float] = Field(description="Label -> probability, normalised over the labels.")
    valid_mass: float = Field(description="Probability the judge put on any label, before normalising.")
    mode: str | None = Field(description="Most probable label; None when unscored.")
    unscored_reason: str | None = Field(default=None, description="Why no label was read, or None.")

    @property
    def scored(self) -> bool:
        """Whether a label could be read."""
        return self.unscored_reason is None


def _low_mass_reason(mass: float, min_valid_mass: float, what: str) -> str | None:
    # the same words for every item, so reasons group by kind; the item's mass is in valid_mass
    if mass >= min_valid_mass and mass > 0:
        return None
    return (
        f"too little of the judge's probability is on valid {what} (valid_mass below the "
        f"threshold min_valid_mass {min_valid_mass:g}); the prompt does not elicit a score"
    )


def score_distribution(
    mass: np.ndarray, low: int, high: int, min_valid_mass: float = DEFAULT_MIN_VALID_MASS
) -> ScoreDistribution:
    """Summarises one row of `outcome_mass` for the scale low..high.

    Examples:
        >>> d = score_distribution(np.array([0.0, 0.2, 0.6]), 1, 3)
        >>> round(d.expected, 3), d.mode, round(d.valid_mass, 3)
        (2.75, 3, 0.8)
    """
    values = np.arange(low, high + 1, dtype=np.float64)  # (V,)
    total = float(mass.sum())
    reason = _low_mass_reason(total, min_valid_mass, "scores")
    p = mass / total if total > 0 else np.full_like(mass, np.nan)
    probs = {int(v): float(x) for v, x in zip(values, p)}
    if reason is not None:
        nan = math.nan
        return ScoreDistribution(
            low=low,
            high=high,
            probs=probs,
            valid_mass=total,
            expected=nan,
            normalized=nan,
            mode=None,
            std=nan,
            entropy=nan,
            unscored_reason=reason,
        )
    expected = float(p @ values)
    var = float(p @ (values - expected) ** 2)
    nz = p[p > 0]
    return ScoreDistribution(
        low=low,
        high=high,
        probs=probs,
        valid_mass=total,
        expected=expected,
        normalized=(expected - low) / (high - low),
        mode=int(values[int(np.argmax(p))]),
        std=math.sqrt(max(var, 0.0)),
        entropy=float(-(nz * np.log(nz)).sum()),
    )


def label_distribution(
    mass: np.ndarray, labels: tuple[str, ...], min_valid_mass: float = DEFAULT_MIN_VALID_MASS
) -> LabelDistribution:
    """Summarises one row of `outcome_mass` for a label scale."""
    total = float(mass.sum())
    reason = _low_mass_reason(total, min_valid_mass, "labels")
    p = mass / total if total > 0 else np.full_like(mass, np.nan)
    return LabelDistribution(
        labels=labels,
        probs={lab: float(x) for lab, x in zip(labels, p)},
        valid_mass=total,
        mode=None if reason else labels[int(np.argmax(p))],
        unscored_reason=reason,
    )
