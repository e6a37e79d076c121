"""Score-token trie and the pure probability math that turns next-token distributions into scores.

Arrays in, arrays out: no model calls and no I/O.

- `trie`: the token tree of every spelling of a scale's scores or labels (`build_score_tree`).
- `distribution`: exact score and label distributions read off the tree, and the boundary rule
  (too little mass on valid outcomes -> unscored, never a guess).
- `likelihood`: log-likelihoods of a continuation, split at the prompt boundary.
- `spans`: words and sentences on tokens; `aggregate`: token-level readings aggregated to a score.
- `logistic`: the logistic function shared by the fits and rankings (two numeric forms, see there).

`import localjudge` loads `distribution` and `trie`; the other modules' names load on first use.

Examples:
    >>> from localjudge.scoring import DEFAULT_MIN_VALID_MASS
    >>> DEFAULT_MIN_VALID_MASS
    0.1
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localjudge.lazy import lazy_exports
from localjudge.scoring.distribution import (
    DEFAULT_MIN_VALID_MASS,
    DEFAULT_TREE_TOLERANCE,
    LabelDistribution,
    ScoreDistribution,
    TreeLogprobs,
    label_distribution,
    outcome_mass,
    score_distribution,
)
from localjudge.scoring.trie import TokenTree, build_label_tree, build_score_tree, label_spellings, validate_scale

if TYPE_CHECKING:
    from localjudge.scoring.aggregate import Aggregation, Focus, Unit, UnitValue, read_tokens
    from localjudge.scoring.likelihood import ContinuationLogprobs, split_boundary
    from localjudge.scoring.logistic import sigmoid
    from localjudge.scoring.spans import split_sentences

__all__ = [
    "DEFAULT_MIN_VALID_MASS",
    "DEFAULT_TREE_TOLERANCE",
    "Aggregation",
    "ContinuationLogprobs",
    "Focus",
    "LabelDistribution",
    "ScoreDistribution",
    "TokenTree",
    "TreeLogprobs",
    "Unit",
    "UnitValue",
    "build_label_tree",
    "build_score_tree",
    "label_distribution",
    "label_spellings",
    "outcome_mass",
    "read_tokens",
    "score_distribution",
    "sigmoid",
    "split_boundary",
    "split_sentences",
    "validate_scale",
]

# name -> the module that defines it, imported on first access (`import localjudge` loads this package)
_LAZY = {
    "Aggregation": "localjudge.scoring.aggregate",
    "Focus": "localjudge.scoring.aggregate",
    "Unit": "localjudge.scoring.aggregate",
    "UnitValue": "localjudge.scoring.aggregate",
    "read_tokens": "localjudge.scoring.aggregate",
    "ContinuationLogprobs": "localjudge.scoring.likelihood",
    "split_boundary": "localjudge.scoring.likelihood",
    "sigmoid": "localjudge.scoring.logistic",
    "split_sentences": "localjudge.scoring.spans",
}


__getattr__, __dir__ = lazy_exports("localjudge.scoring", _LAZY, globals())
