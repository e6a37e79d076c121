"""The worker's operations: what one engine call computes for the requests gathered into it.

Each is the library's own reading, called once over the items of every request in the call:
`evaluate` (the `localjudge eval` run), `Judge.score_texts` / `score_labels` (the `localjudge
score` reading), `Judge.loglikelihood`, `Judge.generate`, and the backend's greedy decoding with
each step's top tokens of the full softmax (the OpenAI endpoints' logprobs). The engine is
batch-invariant, so an item's result does not depend on what else is in its call.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from localjudge.engine.backend import Generation, GenerationRequest
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds import Metric
from localjudge.kinds.records import ResultRecord
from localjudge.runs.evaluate import evaluate, with_components
from localjudge.runs.options import RunOptions, ScoringOptions
from localjudge.scoring.likelihood import ContinuationLogprobs

_QUIET = RunOptions(progress=False)


def _split(flat: Sequence[Any], parts: Sequence[Sequence[Any]]) -> list[list[Any]]:
    out, at = [], 0
    for part in parts:
        out.append(list(flat[at : at + len(part)]))
        at += len(part)
    return out


@dataclass(frozen=True)
class Evaluate:
    """`evaluate` over the cases of every request with the same metrics and scoring options.

    Items are `TestCase`s; each result is the list of the case's records, metrics in `evaluate`'s
    order (components first). Case ids are unique within a request, not across requests: each
    part's ids get a prefix for the run, and the records get their own ids back.
    """

    metrics: tuple[Metric, ...]
    scoring: ScoringOptions

    @property
    def key(self) -> Hashable:
        specs = [m.model_dump(mode="json") for m in self.metrics]
        return ("evaluate", json.dumps([specs, self.scoring.model_dump(mode="json")], sort_keys=True))

    @property
    def names(self) -> list[str]:
        """The metrics each case gets a record of, in order (components added)."""
        return [m.name for m in with_components(self.metrics)]

    def run(self, judge: Judge, parts: Sequence[Sequence[TestCase]]) -> list[list[list[ResultRecord]]]:
        cases, own = [], {}
        for p, part in enumerate(parts):
            for case in part:
                run_id = f"{p}:{case.id}"
                own[run_id] = case.id
                cases.append(case.model_copy(update={"id": run_id}))
        result = evaluate(cases, list(self.metrics), judge, run=_QUIET, scoring=self.scoring)
        per_case = len(self.names)
        records = [r.model_copy(update={"case_id": own[r.case_id]}) for r in result.records]
        grouped = [records[k : k + per_case] for k in range(0, len(records), per_case)]
        return _split(grouped, parts)


@dataclass(frozen=True)
class Score:
    """Exact distributions over a score or label scale at the end of rendered prompts (texts)."""

    low: int | None
    high: int | None
    labels: tuple[str, ...] | None
    min_valid_mass: float

    @property
    def key(self) -> Hashable:
        return ("score", self.low, self.high, self.labels, self.min_valid_mass)

    def run(self, judge: Judge, parts: Sequence[Sequence[str]]) -> list[list[Any]]:
        texts = [t for part in parts for t in part]
        if self.labels is not None:
            got: list[Any] = judge.score_labels(texts, self.labels, min_valid_mass=self.min_valid_mass)
        else:
            assert self.low is not None and self.high is not None
            got = judge.score_texts(texts, self.low, self.high, min_valid_mass=self.min_valid_mass)
        return _split(got, parts)


@dataclass(frozen=True)
class Likelihood:
    """`Judge.loglikelihood` of (prompt, continuation) text pairs, the library's boundary rule applied."""

    @property
    def key(self) -> Hashable:
        return ("likelihood",)

    def run(self, judge: Judge, parts: Sequence[Sequence[tuple[str, str]]]) -> list[list[ContinuationLogprobs]]:
        pairs = [p for part in parts for p in part]
        got = judge.loglikelihood([p for p, _ in pairs], [c for _, c in pairs])
        return _split(got, parts)


@dataclass(frozen=True)
class Generate:
    """`Judge.generate`: greedy continuations of rendered prompts (texts)."""

    max_new_tokens: int

    @property
    def key(self) -> Hashable:
        return ("generate", self.max_new_tokens)

    def run(self, judge: Judge, parts: Sequence[Sequence[str]]) -> list[list[str]]:
        texts = [t for part in parts for t in part]
        return _split(judge.generate(texts, self.max_new_tokens), parts)


@dataclass(frozen=True)
class GenerateLogprobs:
    """`Backend.generate_logprobs`: greedy continuations of token-id prompts, each step's `top` tokens read.

    Items are `GenerationRequest`s (each its own length, stop strings and echo), so every request
    reading the same number of tokens shares the engine call that decodes it.
    """

    top: int

    @property
    def key(self) -> Hashable:
        return ("generate_logprobs", self.top)

    def run(self, judge: Judge, parts: Sequence[Sequence[GenerationRequest]]) -> list[list[Generation]]:
        requests = [r for part in parts for r in part]
        return _split(judge.backend.generate_logprobs(requests, self.top), parts)
