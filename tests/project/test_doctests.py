"""Every library module imports, and the examples in its docstrings run as written."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import localjudge

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(localjudge.__path__, "localjudge.") if m.name != "localjudge.__main__"
)  # runs the CLI on import


def test_modules_found():
    assert {"localjudge.judges.loading", "localjudge.engine.hf", "localjudge.io.cases"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
