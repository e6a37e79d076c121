"""The batch loop every operation runs: a plan's batches, a shared prefix computed once, out-of-memory back-off.

An operation (tree scoring, generation, log-likelihoods) plans its batches (`engine.batching`,
`engine.prefix`) and supplies only how to run one batch. `run_batches` runs them in the plan's
order: a prefix the batch's rows share (cut to the runner's grid) is prefilled once and kept while
the next batches share it (the runner's `PrefixStore`: one cache alive at a time, or its latest few
kept across calls when a server asks for that); a batch that runs out of memory is halved
and retried (`engine.oom`); after each planned batch, `progress` gets its size. Results come back
indexed like the planned items, whatever the batches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

from localjudge.engine.batching import BatchPlan
from localjudge.engine.oom import run_with_backoff
from localjudge.engine.options import EngineOptions
from localjudge.engine.runner import Runner
from localjudge.engine.stats import Counters

T = TypeVar("T")
Progress = Callable[[int], None]


@dataclass(frozen=True)
class Context:
    """What every operation runs with besides its inputs (the backend builds it per call)."""

    runner: Runner
    """Builds and runs every forward."""
    options: EngineOptions
    """Resolved engine options (token budget, prefix reuse, tree tolerance, dtype)."""
    counters: Counters
    """The backend's statistics, updated as batches run."""
    ending: Callable[[Sequence[int]], str]
    """The last tokens of a prompt as text, to name an item in a message."""

    @property
    def token_budget(self) -> int:
        """Padded tokens per forward batch."""
        assert self.options.token_budget is not None
        return self.options.token_budget


class Batch(NamedTuple):
    """One batch as the loop hands it to an operation."""

    items: Sequence[int]
    """Indices of its items among the planned ones."""
    cache: Any
    """KV cache of the prefix its rows share (batch of one), or None."""
    shared: int
    """Tokens of that prefix (0: none); each row runs from there."""


def run_batches(
    plan: BatchPlan,
    run: Callable[[Batch], list[T]],
    n: int,
    runner: Runner,
    prefixes: Sequence[Sequence[int]] | None,
    progress: Progress | None = None,
) -> list[T]:
    """`run` over every batch of `plan`, outputs in the order of the n planned items.

    Args:
        plan: batches of indices into the n planned items.
        run: outputs of one batch's items, in the batch's order.
        n: how many items the plan covers (every one is in exactly one batch).
        runner: prefills shared prefixes; its grid cuts them.
        prefixes: per item, the tokens whose common prefix a batch computes once (their first
            `shared` tokens are those the rows start with); None computes every row whole.
        progress: called with each planned batch's size once it has run.
    """
    store = runner.prefixes

    def one(items: Sequence[int]) -> list[T]:
        shared = store.span([prefixes[i] for i in items], runner.grid) if prefixes is not None else 0
        cache = store.get(prefixes[items[0]][:shared], runner.prefill) if prefixes is not None and shared else None
        return run(Batch(items, cache, shared))

    out: list[Any] = [None] * n
    try:
        for batch in plan.batches:
            for i, result in zip(batch, run_with_backoff(batch, one)):
                out[i] = result
            if progress:
                progress(len(batch))
    finally:
        store.trim(store.keep)
    return out
