"""The overflow check: a state that holds inf or NaN is never turned into a score.

fp16 holds nothing above 65504; a residual stream or an attention score that grows past it turns
into inf, and a norm or softmax of inf into NaN. The log-softmax of a NaN state is NaN, and the
maths downstream would turn that into a distribution that looks like any other or a silent zero.
So every state the engine reads (score-tree nodes, the positions before continuation tokens,
each greedy step) is checked first, in every dtype: fp32 and bf16 have fp32's range and never
trip it, fp16 on a GPU can. The item is named and nothing is returned for the call.

Examples:
    >>> import torch
    >>> nonfinite_rows(torch.tensor([[1.0, 2.0], [float("inf"), 0.0]]), [0, 1])
    [1]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from localjudge.errors import NumericalError


def nonfinite_rows(states: torch.Tensor, rows: Sequence[int] | np.ndarray) -> list[int]:
    """The rows (`rows[k]` owns state k) with any inf or NaN in their (K, H) states, in order."""
    bad = (~torch.isfinite(states)).flatten(1).any(1).cpu().tolist()  # (K,)
    return sorted({int(rows[k]) for k, b in enumerate(bad) if b})


def check_finite(
    states: torch.Tensor,
    rows: Sequence[int] | np.ndarray,
    items: Sequence[int],
    dtype: str,
    ending: Callable[[int], str],
) -> None:
    """Raises `NumericalError` naming the first item whose states overflowed.

    Args:
        states: (K, H) states about to be read.
        rows: (K,) the batch row of each state.
        items: the call's item index of each batch row.
        dtype: the judge's compute dtype, for the message.
        ending: the last words of an item's prompt, by item index, for the message.
    """
    bad = nonfinite_rows(states, rows)
    if not bad:
        return
    item = items[bad[0]]
    more = f" (and {len(bad) - 1} more in its batch)" if len(bad) > 1 else ""
    raise NumericalError(
        f"item {item} (prompt ending {ending(item)}) overflowed {dtype} in the judge's forward: its states hold "
        f"inf or NaN{more}, so no score is returned; run the judge in bfloat16 or float32 (--dtype)"
    )
