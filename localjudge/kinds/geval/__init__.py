"""The G-Eval kind: a score read from the judge's distribution over the scale (see `kinds.geval.kind`).

Its modules: `spec` (the metric definition: task, criteria, steps, rubric, scale), `prompts`
(the judge's messages), `steps` (evaluation steps generated once per judge and cached) and
`kind` (the `MetricKind`: what a run does with a G-Eval metric).
"""

from localjudge.kinds.geval.kind import GEVAL, GEvalKind
from localjudge.kinds.geval.spec import GEvalMetric, RubricRange

__all__ = ["GEVAL", "GEvalKind", "GEvalMetric", "RubricRange"]
