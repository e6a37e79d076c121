"""Judge heads: judges learn from a few hundred labels in seconds through linear heads on their hidden states.

`fit_heads` (`localjudge tune --method head`) reads labelled cases once through the judge (its
hidden states at a few layers, pooled over each output, and the output's log-probabilities), fits
one head per metric by grouped cross-validation (ridge for ratings, ridge with a logistic link for
yes/no labels, logistic on the difference of two outputs for preferences) and writes a head judge folder that loads
wherever a judge is named (`localjudge.judges.heads`, `localjudge.kinds.head`).
"""

from localjudge.heads.options import HeadOptions
from localjudge.lazy import lazy_exports

_LAZY = {"fit_heads": "localjudge.heads.train"}

__all__ = ["HeadOptions", "fit_heads"]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
