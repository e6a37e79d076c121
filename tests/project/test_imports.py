"""The package's import graph: no cycles, and nothing inside imports the package root.

Read from the source with `ast`, so the test needs no import of the modules themselves. An edge
A -> B means module A imports module B (`from a.b import c` is an edge to `a.b.c` when that is a
module, else to `a.b`). Two graphs are checked:

- module-level imports (what runs when a module is imported, `if TYPE_CHECKING:` blocks included,
  so a cycle cannot hide behind one): acyclic;
- every import anywhere, those inside functions included (the lazy imports that keep torch out of
  `import localjudge`): acyclic too, so no function-level import closes a cycle either.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "localjudge"


def _modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> source file, for every module of the package at `root`."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _targets(node: ast.Import | ast.ImportFrom, modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    assert node.level == 0, "relative imports are not used in localjudge"
    base = node.module or ""
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]


def _imports(
    tree: ast.Module, everywhere: bool, modules: dict[str, Path] = MODULES, package: str = "localjudge"
) -> list[tuple[str, int]]:
    """(imported module, line) of the module's imports: module level only, or everywhere."""
    found = []

    def visit(nodes):
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.extend((t, node.lineno) for t in _targets(node, modules))
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                if everywhere:
                    visit(ast.iter_child_nodes(node))
            else:
                visit(ast.iter_child_nodes(node))

    visit(tree.body)
    return [(t, line) for t, line in found if t == package or t.startswith(package + ".")]


def _graph(everywhere: bool, modules: dict[str, Path] = MODULES, package: str = "localjudge") -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for target, _ in _imports(ast.parse(path.read_text(encoding="utf-8")), everywhere, modules, package):
            if target != name and target in modules:
                graph[name].add(target)
    return graph


def _upward(modules: dict[str, Path] = MODULES, package: str = "localjudge") -> list[str]:
    """Modules that import the package root, with the line."""
    return [
        f"{name} (line {line})"
        for name, path in modules.items()
        if name != package
        for target, line in _imports(ast.parse(path.read_text(encoding="utf-8")), True, modules, package)
        if target == package
    ]


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (its modules in order, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


@pytest.mark.parametrize("everywhere", [False, True], ids=["module-level", "everywhere"])
def test_the_import_graph_is_acyclic(everywhere):
    cycle = _cycle(_graph(everywhere))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_module_imports_the_package_root():
    upward = _upward()
    assert not upward, "import the module that defines a name, not the package root: " + ", ".join(upward)


def test_the_cycle_finder_finds_cycles():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    assert "localjudge.runs.evaluate" in MODULES and "localjudge" in MODULES


def _package(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    """A synthetic package `pkg` under tmp_path with the given module sources."""
    for rel, text in {"pkg/__init__.py": "", **files}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return _modules(tmp_path / "pkg")


HIDDEN_CYCLE = {
    "pkg/runs/__init__.py": "",
    # the shape of the old runs.chunk <-> runs.likelihood cycle: a TYPE_CHECKING import one way ...
    "pkg/runs/chunk.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.runs.likelihood import f\n",
    # ... and a function-level import the other way
    "pkg/runs/likelihood.py": "def f():\n    from pkg.runs import chunk\n    return chunk\n",
}


def test_a_cycle_behind_type_checking_and_a_function_import_is_found(tmp_path):
    modules = _package(tmp_path, HIDDEN_CYCLE)
    assert _cycle(_graph(False, modules, "pkg")) is None  # module level alone: only one direction
    assert _cycle(_graph(True, modules, "pkg")) == ["pkg.runs.chunk", "pkg.runs.likelihood", "pkg.runs.chunk"]


def test_a_module_level_cycle_is_found(tmp_path):
    modules = _package(tmp_path, {"pkg/a.py": "from pkg.b import x\n", "pkg/b.py": "import pkg.a\nx = 1\n"})
    assert _cycle(_graph(False, modules, "pkg")) == ["pkg.a", "pkg.b", "pkg.a"]


def test_an_upward_import_is_found(tmp_path):
    modules = _package(tmp_path, {"pkg/sub.py": "def f():\n    from pkg import __version__\n"})
    assert _upward(modules, "pkg") == ["pkg.sub (line 2)"]
