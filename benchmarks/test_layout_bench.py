"""The benchmarks' layout: no `sys.path` edits, and no study imports another (only `benchmarks.lib`)."""

from __future__ import annotations

import ast
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
SOURCES = sorted(BENCHMARKS.rglob("*.py"))


def _study(path: Path) -> str:
    """The study a file belongs to: its folder under benchmarks/ (`quality/summeval`), "" at the top."""
    parts = path.relative_to(BENCHMARKS).parent.parts
    return "/".join(parts[:2] if parts[:1] == ("quality",) else parts[:1])


def _imported(tree: ast.AST) -> list[str]:
    """Every module an import statement names, with `from benchmarks.x import y` also as benchmarks.x.y."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
    return out


def test_no_benchmark_edits_sys_path():
    offenders = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", "") == "sys":
                offenders.append(f"{path.relative_to(BENCHMARKS)}:{node.lineno}")
    assert offenders == []


def test_no_study_imports_another():
    studies = {_study(p) for p in SOURCES} - {"", "lib", "quality"}
    offenders = []
    for path in SOURCES:
        own = _study(path)
        for name in _imported(ast.parse(path.read_text(encoding="utf-8"))):
            if not name.startswith("benchmarks."):
                continue
            target = name.removeprefix("benchmarks.").replace(".", "/")
            other = max((s for s in studies if target == s or target.startswith(s + "/")), key=len, default=None)
            if other is not None and other != own:
                offenders.append(f"{path.relative_to(BENCHMARKS)} imports {name}")
    assert offenders == []


def test_every_study_is_a_package():
    for folder in {p.parent for p in SOURCES}:
        assert (folder / "__init__.py").exists(), f"{folder.relative_to(BENCHMARKS)} lacks __init__.py"
