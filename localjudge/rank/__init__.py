"""Ranking outputs by pairwise comparisons: a Bradley–Terry fit on the judge's probabilities.

- `bradley_terry`: the fit on soft wins (Newton, a tiny prior), scores on 0–1, ranks.
- `intervals`: score and rank intervals from the Fisher information (Laplace draws).
- `adaptive`: the comparison budget, and the next pairs where the ranking is least certain.
- `systems`: which system ranks best over all groups, with group-bootstrap intervals.
- `run`: `rank_outputs`, the resumable rounds of comparisons through `evaluate`; `options`:
  `RankOptions`; `records`: the rank file; `summary`: the run's summary and the system ranking.

Examples:
    >>> from localjudge.rank.bradley_terry import fit_strengths
    >>> import numpy as np
    >>> fit_strengths(2, np.array([[0, 1]]), np.array([0.75])).theta.round(2).tolist()
    [0.54, -0.54]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localjudge.lazy import lazy_exports

if TYPE_CHECKING:
    from localjudge.rank.options import RankOptions
    from localjudge.rank.records import ComparisonReading, RankRecord, read_ranks
    from localjudge.rank.run import RankResult, comparisons_path, rank_outputs
    from localjudge.rank.summary import RankSummary, SystemRank

__all__ = [
    "ComparisonReading",
    "RankOptions",
    "RankRecord",
    "RankResult",
    "RankSummary",
    "SystemRank",
    "comparisons_path",
    "rank_outputs",
    "read_ranks",
]

# name -> the module that defines it, imported on first access
_LAZY = {
    "RankOptions": "localjudge.rank.options",
    "ComparisonReading": "localjudge.rank.records",
    "RankRecord": "localjudge.rank.records",
    "read_ranks": "localjudge.rank.records",
    "RankResult": "localjudge.rank.run",
    "comparisons_path": "localjudge.rank.run",
    "rank_outputs": "localjudge.rank.run",
    "RankSummary": "localjudge.rank.summary",
    "SystemRank": "localjudge.rank.summary",
}

__getattr__, __dir__ = lazy_exports("localjudge.rank", _LAZY, globals())
