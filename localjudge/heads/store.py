"""Features of labelled outputs, computed once and kept on disk by content, so a fit resumes and refits for free.

An output's features depend on the judge's weights and dtype, the feature spec (prompt and layers),
its prompt and its text, and on nothing a fit changes: the file name is a hash of all of them.
Outputs of one prompt (an article's summaries) are computed together, so the prompt's KV is
computed once per batch, and each batch's files are written as soon as it finishes. A sentence
read alone (the spec's `sentences`) is one more continuation of the prompt, kept the same way, so
turning sentence readings on computes only the sentences.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from localjudge.engine.backend import ContinuationFeatures
from localjudge.judges.judge import Judge
from localjudge.kinds.head.features import OutputFeatures, assemble, continuation, continuations
from localjudge.kinds.head.spec import FeatureSpec

CHUNK = 32
"""Outputs per engine call (whole prompts kept together where they fit)."""


def output_key(judge: Judge, spec: FeatureSpec, prompt: str, output: str) -> str:
    """Hex digest naming the features of one continuation read after `prompt` (an output or a sentence of one)."""
    spec = spec.model_copy(update={"sentences": False})  # what one continuation's features depend on
    h = hashlib.sha256()
    for part in (judge.info.provenance, judge.info.dtype, str(judge.info.mixed_precision), spec.model_dump_json()):
        h.update(part.encode() + b"\0")
    h.update(prompt.encode() + b"\0" + output.encode())
    return h.hexdigest()[:40]


def load_features(
    judge: Judge,
    spec: FeatureSpec,
    items: Sequence[tuple[str, str]],
    folder: Path,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[OutputFeatures], int]:
    """Each (prompt, output)'s features, read from `folder` when there, else computed and written there.

    Returns:
        The features in input order, and how many continuations were computed (not read).
    """
    outputs = [o for _, o in items]
    read, computed = _load_continuations(
        judge, spec, continuations(spec, [p for p, _ in items], outputs), folder, progress
    )
    return assemble(spec, outputs, read), computed


def _load_continuations(
    judge: Judge,
    spec: FeatureSpec,
    items: Sequence[tuple[str, str]],
    folder: Path,
    progress: Callable[[int], None] | None,
) -> tuple[list[ContinuationFeatures], int]:
    folder.mkdir(parents=True, exist_ok=True)
    keys = [output_key(judge, spec, p, o) for p, o in items]
    out: list[ContinuationFeatures | None] = [None] * len(items)
    todo = []
    for i, key in enumerate(keys):
        path = folder / f"{key}.npz"
        if path.is_file():
            with np.load(path) as f:
                out[i] = ContinuationFeatures(f["pooled"], f["logprobs"])
            if progress:
                progress(1)
        else:
            todo.append(i)
    todo.sort(key=lambda i: items[i][0])  # outputs of one prompt side by side: its KV computed once
    for start in range(0, len(todo), CHUNK):
        chunk = todo[start : start + CHUNK]
        got = judge.features([items[i][0] for i in chunk], [continuation(items[i][1]) for i in chunk], spec.layers)
        for i, f in zip(chunk, got):
            tmp = folder / f"{keys[i]}.tmp.npz"
            np.savez(tmp, pooled=f.pooled, logprobs=f.logprobs)
            tmp.replace(folder / f"{keys[i]}.npz")
            out[i] = f
        if progress:
            progress(len(chunk))
    assert all(f is not None for f in out)
    return [f for f in out if f is not None], len(todo)
