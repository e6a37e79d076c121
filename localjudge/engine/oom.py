"""Out-of-memory back-off: halve the batch and retry, down to a single item."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
log = logging.getLogger("localjudge")


def is_oom(exc: BaseException) -> bool:
    """Whether an exception is a device out-of-memory error."""
    import torch

    if isinstance(exc, torch.cuda.OutOfMemoryError):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def run_with_backoff(items: Sequence[int], fn: Callable[[Sequence[int]], list[T]]) -> list[T]:
    """Runs `fn` on `items`; on out-of-memory, splits them in halves and runs each half.

    Returns:
        `fn`'s outputs for every item, in the order of `items`.
    """
    try:
        return fn(items)
    except Exception as exc:
        if not is_oom(exc) or len(items) == 1:
            raise
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        half = len(items) // 2
        log.warning("out of memory on a batch of %d; retrying as %d + %d", len(items), half, len(items) - half)
        return run_with_backoff(items[:half], fn) + run_with_backoff(items[half:], fn)
