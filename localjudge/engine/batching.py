"""Token-budget batches: sort by length so padding is small, cap the padded tokens per batch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class BatchPlan:
    """Batches of item indices, longest first, and the padding they cost.

    Attributes:
        batches: item indices of each batch, in the order to run them.
        real_tokens: sum of the items' own token counts.
        padded_tokens: tokens actually computed (batch size × longest item, summed).
    """

    batches: tuple[tuple[int, ...], ...]
    real_tokens: int
    padded_tokens: int

    @property
    def padding_waste(self) -> float:
        """Share of computed tokens that are padding."""
        return 1 - self.real_tokens / self.padded_tokens if self.padded_tokens else 0.0


def plan_batches(lengths: Sequence[int], token_budget: int, max_batch: int = 256) -> BatchPlan:
    """Groups items into batches whose padded size (rows × longest row) stays within a budget.

    Items are sorted by length, longest first, so that an out-of-memory error shows up on the
    first batch and neighbours in a batch have similar lengths. An item longer than the budget
    still gets a batch of its own.

    Examples:
        >>> plan_batches([5, 100, 7, 98], token_budget=200).batches
        ((1, 3), (2, 0))
    """
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[tuple[int, ...]] = []
    current: list[int] = []
    longest, padded = 0, 0
    for i in order:
        width = max(longest, lengths[i])
        if current and (width * (len(current) + 1) > token_budget or len(current) >= max_batch):
            batches.append(tuple(current))
            padded += longest * len(current)
            current, width = [], lengths[i]
        current.append(i)
        longest = width
    if current:
        batches.append(tuple(current))
        padded += longest * len(current)
    return BatchPlan(tuple(batches), int(sum(lengths)), padded)
