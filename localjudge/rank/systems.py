"""System-level ranking: which system's outputs score best over all groups, with bootstrap intervals.

A system's score is the mean of its outputs' within-group scores (each on 0–1, the mean
P(beats another output of the group)). The intervals resample whole groups with replacement
(`stats.bootstrap_indices`), so an article's outputs stay together, and read percentile
intervals of each system's mean score and of its rank.

Pure maths: arrays in, arrays out.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from localjudge.stats.bootstrap import bootstrap_indices


class SystemRanking(NamedTuple):
    """Every system's mean score, rank and intervals, systems in sorted order."""

    systems: list[str]  # (S,) system names, sorted
    score: np.ndarray  # (S,) mean within-group score of each system's outputs
    score_low: np.ndarray  # (S,) interval on the mean score
    score_high: np.ndarray  # (S,)
    rank: np.ndarray  # (S,) int, 1 for the best mean score
    rank_low: np.ndarray  # (S,) int, best rank in the interval
    rank_high: np.ndarray  # (S,) int, worst rank in the interval
    outputs: np.ndarray  # (S,) int, scored outputs of each system


def _means(codes: np.ndarray, scores: np.ndarray, n_systems: int) -> np.ndarray:
    """(S,) mean score per system code; NaN for a system with no output in the sample."""
    total = np.bincount(codes, weights=scores, minlength=n_systems)
    count = np.bincount(codes, minlength=n_systems)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _rank(means: np.ndarray) -> np.ndarray:
    """(S,) rank 1 for the highest mean; a system absent from a resample ranks last."""
    key = np.where(np.isnan(means), -np.inf, means)
    order = np.argsort(-key, kind="stable")
    out = np.empty(len(means), dtype=int)
    out[order] = np.arange(1, len(means) + 1)
    return out


def system_ranking(
    groups: np.ndarray,
    systems: np.ndarray,
    scores: np.ndarray,
    *,
    n_bootstrap: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> SystemRanking:
    """Ranks systems by their outputs' mean within-group score, with group-bootstrap intervals.

    Args:
        groups: (N,) group id of each scored output.
        systems: (N,) system of each output.
        scores: (N,) each output's within-group score (0–1); only scored outputs.
        n_bootstrap: resamples of the groups.
        level: coverage of each interval.
        seed: seed of the resamples.
    """
    names, codes = np.unique(np.asarray(systems, dtype=str), return_inverse=True)
    scores = np.asarray(scores, dtype=float)
    point = _means(codes, scores, len(names))
    boot = np.array(
        [
            _means(codes[idx], scores[idx], len(names))
            for idx in bootstrap_indices(len(scores), groups, n_bootstrap, seed)
        ]
    ).reshape(n_bootstrap, len(names))  # (B, S)
    boot_rank = np.array([_rank(row) for row in boot]).reshape(n_bootstrap, len(names))  # (B, S)
    lo, hi = 100 * (1 - level) / 2, 100 * (1 + level) / 2
    return SystemRanking(
        systems=[str(s) for s in names],
        score=point,
        score_low=np.nanpercentile(boot, lo, axis=0),
        score_high=np.nanpercentile(boot, hi, axis=0),
        rank=_rank(point),
        rank_low=np.percentile(boot_rank, lo, axis=0, method="lower").astype(int),
        rank_high=np.percentile(boot_rank, hi, axis=0, method="higher").astype(int),
        outputs=np.bincount(codes, minlength=len(names)),
    )
