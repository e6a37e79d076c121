"""Module tops read in order: the docstring, the imports, then `if TYPE_CHECKING:`, then the code.

Read from the source with `ast`. A string statement at module level documents something only as
the module docstring or on the line right after an assignment (an attribute docstring); anywhere
else it is an orphan, like the one left below the imports of `runs/evaluate.py`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "localjudge"
MODULES = sorted(ROOT.rglob("*.py"))


def _is_string(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _documents(node: ast.stmt, before: ast.stmt) -> bool:
    """Whether a string statement is the docstring of the assignment just before it."""
    return isinstance(before, (ast.Assign, ast.AnnAssign)) and node.lineno == (before.end_lineno or 0) + 1


def _is_type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_level_string_documents_something(path):
    body = ast.parse(path.read_text()).body
    orphans = [
        node.lineno for k, node in enumerate(body) if k > 0 and _is_string(node) and not _documents(node, body[k - 1])
    ]
    assert not orphans, f"{path}: strings that document nothing at lines {orphans}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_follows_the_type_checking_block(path):
    body = ast.parse(path.read_text()).body
    guards = [k for k, node in enumerate(body) if _is_type_checking(node)]
    late = [n.lineno for n in body[guards[0] + 1 :] if isinstance(n, (ast.Import, ast.ImportFrom))] if guards else []
    assert not late, f"{path}: imports after `if TYPE_CHECKING:` at lines {late}"
