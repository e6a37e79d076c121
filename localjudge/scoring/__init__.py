"""Score-token trie and the pure probability math that turns next-token distributions into scores."""

from localjudge.scoring.distribution import LabelDistribution, ScoreDistribution
from localjudge.scoring.trie import TokenTree, build_label_tree, build_score_tree

__all__ = [
    "LabelDistribution",
    "ScoreDistribution",
    "TokenTree",
    "build_label_tree",
    "build_score_tree",
]
