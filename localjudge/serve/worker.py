"""The worker: one thread owns the judge and feeds it the requests of every client, gathered into batches.

Requests become `Job`s: an `Operation` (what to compute; jobs whose operations have equal keys run in
one engine call) and its items (cases, prompts). The worker waits for a first job, gathers others for
`batch_window_ms` after the latest arrival (at most `GATHER_CAP` windows in all) or until `batch_items`
items are waiting, then takes items of the jobs sharing the
first job's key, oldest first, and runs them in one call: the engine's token-budget batches and its
shared-prefix reuse then span requests. A job larger than `batch_items` is taken in slices, so a
cancelled job (its client gone) stops after the slice that is running.

The queue is bounded: past `max_queue` jobs `submit` raises `Overloaded` at once (the server answers
503 with Retry-After), never a wait. `stop` refuses new jobs, finishes every queued one, and ends
the thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from localjudge.errors import LocalJudgeError
from localjudge.judges.judge import Judge

log = logging.getLogger("localjudge.serve")

GATHER_CAP = 10
"""Most windows one gathering lasts while requests keep arriving (clients answered together send together)."""


class Overloaded(LocalJudgeError):
    """The queue is full (or the server is stopping): the client should retry later."""


class Operation(Protocol):
    """What a job computes. Jobs with equal `key`s run together in one call of `run`."""

    @property
    def key(self) -> Hashable:
        """Equal for operations whose items may share one engine call (same metrics, same scale...)."""

    def run(self, judge: Judge, parts: Sequence[Sequence[Any]]) -> list[list[Any]]:
        """The results of each part's items (a part: one job's slice), in order."""


@dataclass(eq=False)
class Job:
    """One request's work: its items, and where their results go (called on the worker thread)."""

    op: Operation
    items: Sequence[Any]
    on_results: Callable[[int, list[Any]], None]
    """Called with (index of the first item, results) after each slice."""
    on_error: Callable[[BaseException], None]
    """Called once if the job fails; no results follow."""
    on_done: Callable[[], None]
    """Called once after the last results (not after an error or a cancel)."""
    taken: int = 0
    cancelled: bool = False
    failed: bool = field(default=False)

    def cancel(self) -> None:
        """Drops the items not yet taken (the slice running finishes; its results go nowhere)."""
        self.cancelled = True


class Worker:
    """The thread that owns the judge (see the module docstring)."""

    def __init__(self, judge: Judge, *, max_queue: int, batch_window_ms: float, batch_items: int):
        self.judge = judge
        self.max_queue = max_queue
        self.window = batch_window_ms / 1000
        self.batch_items = batch_items
        self._pending: deque[Job] = deque()
        self._cond = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._loop, name="localjudge-serve-worker", daemon=True)
        self.calls = 0
        """Engine calls made so far (one per gathered batch)."""

    def start(self) -> None:
        self._thread.start()

    def submit(self, job: Job) -> None:
        """Queues a job.

        Raises:
            Overloaded: `max_queue` jobs are waiting or running, or the worker is stopping.
        """
        with self._cond:
            if self._stopping:
                raise Overloaded("the server is shutting down; send the request to another server")
            live = sum(not j.cancelled for j in self._pending)
            if live >= self.max_queue:
                raise Overloaded(f"{live} requests are queued or running (the limit); retry shortly")
            self._pending.append(job)
            self._cond.notify_all()

    @property
    def queued(self) -> int:
        """Jobs waiting or running (a cancelled one no longer counts)."""
        with self._cond:
            return sum(not j.cancelled for j in self._pending)

    def stop(self, timeout: float | None = None) -> None:
        """Refuses new jobs, finishes the queued ones, and joins the thread."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopping:
                    self._cond.wait()
                if not self._pending:
                    return  # stopping, and nothing left to finish
                # gather while requests keep coming: each arrival extends the window, up to GATHER_CAP windows
                start = time.monotonic()
                deadline, seen = start + self.window, self._waiting_items()
                while not self._stopping and seen < self.batch_items:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                    if self._waiting_items() > seen:
                        seen = self._waiting_items()
                        deadline = min(start + GATHER_CAP * self.window, time.monotonic() + self.window)
                parts = self._take()
            if parts:
                self._run(parts)

    def _waiting_items(self) -> int:
        return sum(len(j.items) - j.taken for j in self._pending if not j.cancelled)

    def _take(self) -> list[tuple[Job, int, Sequence[Any]]]:
        """(job, first index, items) slices of the oldest job's key, at most `batch_items` items in all.

        A job stays in the queue (and counts against `max_queue`) until its last results are delivered.
        """
        for job in [j for j in self._pending if j.cancelled]:
            self._pending.remove(job)
        waiting = [j for j in self._pending if j.taken < len(j.items)]
        if not waiting:
            return []
        key = waiting[0].op.key
        room = self.batch_items
        parts = []
        for job in waiting:
            if room == 0:
                break
            if job.op.key != key:
                continue
            start = job.taken
            piece = job.items[start : start + room]
            job.taken += len(piece)
            room -= len(piece)
            parts.append((job, start, piece))
        return parts

    def _finished(self, job: Job) -> None:
        with self._cond:
            if job in self._pending:
                self._pending.remove(job)

    def _run(self, parts: list[tuple[Job, int, Sequence[Any]]]) -> None:
        self.calls += 1
        op = parts[0][0].op
        try:
            results = op.run(self.judge, [items for _, _, items in parts])
        except LocalJudgeError as exc:
            if len(parts) == 1:
                self._fail(parts[0][0], exc)
                return
            # one request's bad input must not fail the others gathered with it: each alone
            for part in parts:
                self._run([part])
            return
        except Exception as exc:  # a bug or a runtime failure: every job of the call learns it
            log.exception("engine call failed")
            for job, _, _ in parts:
                self._fail(job, exc)
            return
        for (job, start, items), got in zip(parts, results):
            if job.cancelled or job.failed:
                continue
            assert len(got) == len(items), f"{type(op).__name__} returned {len(got)} results for {len(items)} items"
            job.on_results(start, got)
            if start + len(items) >= len(job.items):
                self._finished(job)
                job.on_done()

    def _fail(self, job: Job, exc: BaseException) -> None:
        if job.failed:
            return
        job.failed = True
        job.cancelled = True  # its later slices are not run
        self._finished(job)
        job.on_error(exc)
