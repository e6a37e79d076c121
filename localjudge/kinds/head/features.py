"""A case's features as a head reads them: one pass of the judge over the output after its source.

Per output: the judge's states after each layer of the spec, averaged over the output's tokens,
then three numbers of its token log-probabilities (mean, sum, log of the count). The vector a head
multiplies is the pooled states of the layers it chose, in the spec's order, then those three.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from localjudge.engine.backend import ContinuationFeatures
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds.head.spec import FeatureSpec

EXTRAS = ("mean_logprob", "sum_logprob", "log_tokens")
"""The numbers after the pooled states, in order; the first is the likelihood reading a head anchors on."""


def source_text(value: object) -> str:
    """A source field's text: a list of passages joined by blank lines."""
    return "\n\n".join(str(v) for v in value) if isinstance(value, list) else str(value)


def prompt_of(spec: FeatureSpec, case: TestCase) -> str:
    """The prompt a case's output follows (every source field present: the kind checks it)."""
    return spec.prompt({f: source_text(case.get(f)) for f in spec.source_fields})


def read_outputs(
    judge: Judge, spec: FeatureSpec, prompts: Sequence[str], outputs: Sequence[str], progress=None
) -> list[ContinuationFeatures]:
    """Features of each output after its prompt (outputs of one prompt next to each other share its KV)."""
    return judge.features(list(prompts), [" " + o.strip() for o in outputs], spec.layers, progress=progress)


def vector(f: ContinuationFeatures, spec: FeatureSpec, layers: Sequence[int]) -> np.ndarray:
    """(len(layers) * H + 3,) float64: the chosen layers' pooled states, then `EXTRAS`."""
    pooled = [f.pooled[spec.layers.index(layer)] for layer in layers]
    lp = f.logprobs
    extras = np.array([lp.mean(), lp.sum(), math.log(len(lp))])
    return np.concatenate([*pooled, extras])


def matrix(feats: Sequence[ContinuationFeatures], spec: FeatureSpec, layers: Sequence[int]) -> np.ndarray:
    """(n, d) the vectors of several outputs."""
    return np.stack([vector(f, spec, layers) for f in feats])
