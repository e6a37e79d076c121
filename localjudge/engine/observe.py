"""Observing forward passes: a `ForwardCall` per model pass, seen before the model runs.

For tracing and profiling (how many passes, of which shapes, with which cached prefix), and for
checking the engine from outside: every pass the runner makes (`engine.runner`) is announced here
first. An observer that raises stops the pass with its exception, as the model would (an
out-of-memory error then halves the batch, `engine.oom`). With no observer a pass costs one check
of an empty list, and results never depend on observers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple


class ForwardCall(NamedTuple):
    """One model pass, as an observer sees it just before the model runs."""

    kind: str
    """"prefill" (a shared prefix, batch of one), "batch" (a batch's rows) or "step" (one decoding step)."""
    lengths: tuple[int, ...]
    """Tokens each row runs after the cached prefix (1 per row in a decoding step)."""
    shared: int
    """Tokens of the cached prefix every row follows (0: none)."""
    appended: int
    """Tokens appended to every row (a score tree's nodes; 0: none)."""


Observer = Callable[[ForwardCall], None]
"""Called with every pass before it runs; an exception it raises is the pass's own."""


class Observers:
    """The observers of one runner's passes (none by default)."""

    def __init__(self) -> None:
        self._fns: list[Observer] = []

    def __bool__(self) -> bool:
        return bool(self._fns)

    def notify(self, call: ForwardCall) -> None:
        """Gives `call` to every observer, in the order they were added."""
        for fn in list(self._fns):
            fn(call)

    @contextmanager
    def observe(self, fn: Observer | None = None) -> Iterator[list[ForwardCall]]:
        """Records every pass made inside the block, calling `fn` on each first.

        `fn` runs before the model: an exception it raises propagates from the pass (an
        out-of-memory error halves the batch and retries, as a real one does).

        Examples:
            >>> observers = Observers()
            >>> with observers.observe() as calls:
            ...     observers.notify(ForwardCall("batch", (12, 9), 32, 0))
            >>> [c.lengths for c in calls]
            [(12, 9)]
            >>> bool(observers)  # gone after the block
            False
        """
        calls: list[ForwardCall] = []

        def record(call: ForwardCall) -> None:
            calls.append(call)
            if fn is not None:
                fn(call)

        self._fns.append(record)
        try:
            yield calls
        finally:
            self._fns.remove(record)
