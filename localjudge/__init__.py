"""localjudge: trustworthy LLM-as-a-judge scoring with local open-weight models.

Scores are read from the judge's full next-token distribution over the valid scores (exact even
when a numeral spans several tokens), not parsed from generated text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Judge",
    "JudgeInfo",
    "LabelDistribution",
    "LocalJudgeError",
    "ScoreDistribution",
    "__version__",
    "load_judge",
]

from localjudge.errors import LocalJudgeError
from localjudge.scoring.distribution import LabelDistribution, ScoreDistribution

if TYPE_CHECKING:
    from localjudge.judges.judge import Judge, JudgeInfo
    from localjudge.judges.loading import load_judge

_LAZY = {"Judge": "localjudge.judges.judge", "JudgeInfo": "localjudge.judges.judge", "load_judge": "localjudge.judges.loading"}


def __getattr__(name: str) -> Any:
    # torch and transformers load only when a judge is needed, so `localjudge --help` stays fast
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'localjudge' has no attribute {name!r}")
