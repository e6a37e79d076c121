"""localjudge: trustworthy LLM-as-a-judge scoring with local open-weight models.

Scores are read from the judge's full next-token distribution over the valid scores (exact even
when a numeral spans several tokens), not parsed from generated text.

Everything a user's code needs is importable from here; heavy modules (torch, transformers,
scipy) load on first use of the name that needs them, so `import localjudge` and
`localjudge --help` stay fast.

Examples:
    >>> from localjudge import builtin_metric, load_cases, load_judge, evaluate  # doctest: +SKIP
    >>> result = evaluate(load_cases("cases.jsonl"), [builtin_metric("correctness")],
    ...                   load_judge("smollm2-135m"))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localjudge.version import __version__

__all__ = [
    "EngineOptions",
    "EvaluationResult",
    "Judge",
    "JudgeInfo",
    "LabelDistribution",
    "LocalJudgeError",
    "Metric",
    "PanelOptions",
    "RankOptions",
    "ResultRecord",
    "RunOptions",
    "ScoreDistribution",
    "ScoringOptions",
    "TestCase",
    "__version__",
    "assert_fails",
    "assert_passes",
    "builtin_metric",
    "calibrate",
    "evaluate",
    "evaluate_panel",
    "fake_judge",
    "format_report",
    "load_cases",
    "load_judge",
    "rank_outputs",
    "resolve_metric",
]

from localjudge.errors import LocalJudgeError
from localjudge.lazy import lazy_exports
from localjudge.scoring.distribution import LabelDistribution, ScoreDistribution

if TYPE_CHECKING:
    from localjudge.calibration.agreement import calibrate
    from localjudge.calibration.render import format_report
    from localjudge.engine.options import EngineOptions
    from localjudge.io.cases import TestCase, load_cases
    from localjudge.judges.judge import Judge, JudgeInfo
    from localjudge.judges.loading import load_judge
    from localjudge.judges.scripted import fake_judge
    from localjudge.kinds import Metric
    from localjudge.kinds.options import ScoringOptions
    from localjudge.kinds.records import ResultRecord
    from localjudge.metrics.builtin import builtin_metric, resolve_metric
    from localjudge.panel.options import PanelOptions
    from localjudge.panel.run import evaluate_panel
    from localjudge.rank.options import RankOptions
    from localjudge.rank.run import rank_outputs
    from localjudge.runs.evaluate import EvaluationResult, evaluate
    from localjudge.runs.options import RunOptions
    from localjudge.testing.assertions import assert_fails, assert_passes

# name -> the module that defines it, imported on first access
_LAZY = {
    "EngineOptions": "localjudge.engine.options",
    "Judge": "localjudge.judges.judge",
    "JudgeInfo": "localjudge.judges.judge",
    "load_judge": "localjudge.judges.loading",
    "TestCase": "localjudge.io.cases",
    "load_cases": "localjudge.io.cases",
    "builtin_metric": "localjudge.metrics.builtin",
    "resolve_metric": "localjudge.metrics.builtin",
    "evaluate": "localjudge.runs.evaluate",
    "PanelOptions": "localjudge.panel.options",
    "evaluate_panel": "localjudge.panel.run",
    "RankOptions": "localjudge.rank.options",
    "rank_outputs": "localjudge.rank.run",
    "EvaluationResult": "localjudge.runs.evaluate",
    "RunOptions": "localjudge.runs.options",
    "Metric": "localjudge.kinds",
    "ResultRecord": "localjudge.kinds.records",
    "ScoringOptions": "localjudge.kinds.options",
    "calibrate": "localjudge.calibration.agreement",
    "format_report": "localjudge.calibration.render",
    "assert_passes": "localjudge.testing.assertions",
    "assert_fails": "localjudge.testing.assertions",
    "fake_judge": "localjudge.judges.scripted",
}


# torch, transformers and scipy load only when a name that needs them is used
__getattr__, __dir__ = lazy_exports("localjudge", _LAZY, globals())
