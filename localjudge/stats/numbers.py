"""Numbers as JSON can hold them: NaN and infinities become None.

A statistic that cannot be computed (too few items, a constant column) comes out NaN; a record
or report writes it as null, and `dump_line` refuses NaN rather than write invalid JSON.

Examples:
    >>> finite(float("nan")), finite(0.25)
    (None, 0.25)
    >>> finite_json({"r": float("inf"), "n": [1, float("nan")]})
    {'r': None, 'n': [1, None]}
"""

from __future__ import annotations

import math
from typing import Any


def finite(x: float | None) -> float | None:
    """`x` as a float, or None when it is None, NaN or infinite."""
    return float(x) if x is not None and math.isfinite(x) else None


def finite_json(value: Any) -> Any:
    """`value` with every NaN or infinite float in it, at any depth, replaced by None.

    Dicts keep their keys; lists and tuples become lists; other values are returned as they are.
    """
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(v) for v in value]
    return None if isinstance(value, float) and not math.isfinite(value) else value
