"""A case's features as a head reads them: one pass of the judge over the output after its source.

Per output: the judge's states after each layer of the spec, averaged over the output's tokens,
then three numbers of its token log-probabilities (mean, sum, log of the count). With the spec's
`sentences`, each sentence of the output is also read alone after the same prompt (its source's
KV shared with the output's), and the mean and the least of the sentences' mean token
log-probabilities come before those three: a sentence the source does not support stands out
there, where the whole output's mean dilutes it. The vector a head multiplies is the pooled
states of the layers it chose, in the spec's order, then the sentence readings, then the three.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from localjudge.engine.backend import ContinuationFeatures
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds.head.spec import FeatureSpec
from localjudge.scoring.spans import split_sentences

EXTRAS = ("mean_logprob", "sum_logprob", "log_tokens")
"""The numbers after the pooled states, in order; the first is the likelihood reading a head anchors on."""
SENTENCE_EXTRAS = ("sentence_mean_logprob", "sentence_min_logprob")
"""The sentence readings before `EXTRAS`, with the spec's `sentences`."""


class OutputFeatures(NamedTuple):
    """What a head reads of one output: the engine's features of the whole output, and its sentences'."""

    pooled: np.ndarray
    """(K, H) float64: each layer's states averaged over the output's tokens."""
    logprobs: np.ndarray
    """(c,) float64: log P of each output token."""
    sentences: np.ndarray | None = None
    """(S,) each sentence's mean token log-probability, read alone after the prompt; None: not read."""


def source_text(value: object) -> str:
    """A source field's text: a list of passages joined by blank lines."""
    return "\n\n".join(str(v) for v in value) if isinstance(value, list) else str(value)


def prompt_of(spec: FeatureSpec, case: TestCase) -> str:
    """The prompt a case's output follows (every source field present: the kind checks it)."""
    return spec.prompt({f: source_text(case.get(f)) for f in spec.source_fields})


def continuation(text: str) -> str:
    """The continuation read after a prompt ending in a label: the text after one space."""
    return " " + text.strip()


def sentences_of(output: str) -> list[str]:
    """The sentences read alone (`scoring.spans.split_sentences`); an output without a break is one."""
    return split_sentences(output.strip()) or [output.strip()]


def continuations(spec: FeatureSpec, prompts: Sequence[str], outputs: Sequence[str]) -> list[tuple[str, str]]:
    """Every (prompt, text) the engine reads for these outputs: the outputs, then (with `sentences`) each
    output's sentences in order. `assemble` puts their features back together."""
    items = list(zip(prompts, outputs))
    if spec.sentences:
        items += [(p, s) for p, o in zip(prompts, outputs) for s in sentences_of(o)]
    return items


def assemble(spec: FeatureSpec, outputs: Sequence[str], read: Sequence[ContinuationFeatures]) -> list[OutputFeatures]:
    """Each output's features from the features of `continuations`' items, in their order."""
    n = len(outputs)
    out = []
    at = n
    for k, o in enumerate(outputs):
        sent = None
        if spec.sentences:
            count = len(sentences_of(o))
            sent = np.array([read[at + j].logprobs.mean() for j in range(count)])
            at += count
        out.append(OutputFeatures(read[k].pooled, read[k].logprobs, sent))
    assert at == len(read), "every continuation read belongs to an output"
    return out


def read_outputs(
    judge: Judge, spec: FeatureSpec, prompts: Sequence[str], outputs: Sequence[str], progress=None
) -> list[OutputFeatures]:
    """Features of each output after its prompt (outputs of one prompt next to each other share its KV)."""
    items = continuations(spec, prompts, outputs)
    read = judge.features([p for p, _ in items], [continuation(t) for _, t in items], spec.layers, progress=progress)
    return assemble(spec, outputs, read)


def vector(f: OutputFeatures, spec: FeatureSpec, layers: Sequence[int]) -> np.ndarray:
    """(len(layers) * H [+ 2] + 3,) float64: the chosen layers' pooled states, the sentence readings (with the
    spec's `sentences`), then `EXTRAS`."""
    pooled = [f.pooled[spec.layers.index(layer)] for layer in layers]
    lp = f.logprobs
    extras = np.array([lp.mean(), lp.sum(), math.log(len(lp))])
    if not spec.sentences:
        return np.concatenate([*pooled, extras])
    assert f.sentences is not None, "a spec with sentences reads them"
    return np.concatenate([*pooled, [f.sentences.mean(), f.sentences.min()], extras])


def matrix(feats: Sequence[OutputFeatures], spec: FeatureSpec, layers: Sequence[int]) -> np.ndarray:
    """(n, d) the vectors of several outputs."""
    return np.stack([vector(f, spec, layers) for f in feats])
