"""What the engine counts as it runs, for statistics and benchmarks; never read by the results.

The operations update a `Counters` of their backend; readers get an `EngineStats` snapshot
(`HFBackend.stats`), which later calls do not change.
"""

from __future__ import annotations

import copy
from typing import NamedTuple

from localjudge.engine.batching import BatchPlan


class EngineStats(NamedTuple):
    """A snapshot of a backend's counters."""

    head_rows: int
    """Output-layer rows computed so far by tree scoring and log-likelihoods (not by generation)."""
    last_plan: BatchPlan | None
    """The batch plan of the latest tree-scoring or log-likelihood call that ran a forward plan; None before any."""


class Counters:
    """The mutable counters behind `EngineStats`, written by the engine's operations only."""

    def __init__(self) -> None:
        self.head_rows = 0
        self.last_plan: BatchPlan | None = None

    def snapshot(self) -> EngineStats:
        """The counters as they are now."""
        return EngineStats(self.head_rows, self.last_plan)

    def copy(self) -> Counters:
        """Counters that go on from these values on their own."""
        return copy.copy(self)
