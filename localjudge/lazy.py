"""Names a package re-exports without importing their modules until first use (PEP 562).

A package whose public surface (`__all__`) includes names from heavy modules (torch,
transformers, scipy, an optional integration) lists them in a mapping, name -> module, and takes
its module-level `__getattr__` and `__dir__` from `lazy_exports`: `import localjudge` and
`localjudge --help` stay fast, and `from localjudge.judges import load_judge` still works.

Examples:
    >>> getattr_, dir_ = lazy_exports("pkg", {"sqrt": "math"}, {"eager": 1})
    >>> getattr_("sqrt")(4.0)
    2.0
    >>> dir_()
    ['eager', 'sqrt']
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, lazy: Mapping[str, str], namespace: Mapping[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`: `lazy` names (name -> module) load on first use.

    Args:
        package: the package's dotted name, for the error of an unknown attribute.
        lazy: each lazily re-exported name and the module that defines it.
        namespace: the package's globals (its eager names, listed by `__dir__` too).
    """

    def __getattr__(name: str) -> Any:
        if name in lazy:
            return getattr(importlib.import_module(lazy[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(lazy))

    return __getattr__, __dir__
