"""The likelihood kind: how probable the judge finds a text given its source (see `kinds.likelihood.kind`).

Its modules: `spec` (the metric definition: condition fields, target, aggregation, PMI contrast),
`prompts` (the condition and contrast prompts) and `kind` (the `MetricKind`).
"""

from localjudge.kinds.likelihood.kind import LIKELIHOOD, LikelihoodKind
from localjudge.kinds.likelihood.spec import LikelihoodMetric, PMIContrast

__all__ = ["LIKELIHOOD", "LikelihoodKind", "LikelihoodMetric", "PMIContrast"]
