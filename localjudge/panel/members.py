"""Who may sit on a panel: two judges or more, each named once, whoever pools them.

Examples:
    >>> members_problem(["smollm2-135m", "gemma3-270m"]) is None
    True
"""

from __future__ import annotations

from collections.abc import Sequence

from localjudge.errors import repeated


def members_problem(names: Sequence[str]) -> str | None:
    """Why judges `names` cannot be a panel's members, or None when they can.

    The caller raises it with the next step its own input calls for (`--judge` once per member,
    `--panel NAME=J1,J2`).

    Examples:
        >>> members_problem(["a"])
        'a panel needs two judges or more'
        >>> members_problem(["a", "b", "a"])
        "judge 'a' given twice"
    """
    if len(names) < 2:
        return "a panel needs two judges or more"
    if len(set(names)) < len(names):
        return f"judge {repeated(names)} given twice"
    return None
