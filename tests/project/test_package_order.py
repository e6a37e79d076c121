"""The packages of localjudge form layers, and a module imports only its own package and layers below.

Read from the source with `ast`: every import counts, at module level, under `if TYPE_CHECKING:`
and inside functions (a lazy import is still a dependency). A package imports nothing from a
package beside it in its own layer, so the order within a layer does not matter. A new package
must be placed in `LAYERS` before this test passes.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "localjudge"

LAYERS: list[set[str]] = [
    {"errors", "version", "lexical", "examples", "lazy"},  # no localjudge import at all
    {"stats", "scoring", "io", "options"},  # pure maths, the score trie, users' files, the settings base
    {"engine"},  # the backend and batching engine
    {"weights"},  # the weight store: sources, GGUF files, chunks, hashes, prepared copies, installs
    {"judges"},  # the registry, loading, the Judge
    {"kinds"},  # metric kinds: prompts and scoring of each kind
    {"labels"},  # human labels: one reader, one grouped split, agreement figures
    {"metrics"},  # metric definitions as users write them
    {"runs"},  # evaluate, generation, inspection, distributed runs
    {"panel"},  # judging as a panel: the one pooling of judges, which the bias lab's panels use too
    # what is built on runs and records
    {"calibration", "bias", "integrations", "testing", "serve", "tune", "rank"},
    {"heads", "report"},  # heads fit through tune's job; the report reads every feature's outputs
    {"cli"},  # the command line
    {"localjudge", "__main__"},  # the package root (the public API) and `python -m localjudge`
]
"""Lowest first. Names are the packages (and single modules) directly under localjudge/."""

LAYER_OF = {unit: k for k, layer in enumerate(LAYERS) for unit in layer}


def _unit(dotted: str, package: str = "localjudge") -> str:
    """The top-level unit of a dotted module name: `localjudge.judges.judge` -> `judges`."""
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else package


def _imported(node: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    """Dotted names of what an import statement brings in from the package."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif node.module == package:  # `from localjudge import stats`: the unit is the imported name
        names = [f"{package}.{a.name}" for a in node.names]
    else:
        names = [node.module or ""]
    return [n for n in names if n == package or n.startswith(package + ".")]


def violations(root: Path = ROOT, layer_of: dict[str, int] = LAYER_OF) -> list[str]:
    """`file:line imports X` for each import of a unit in a higher layer or beside the importer."""
    package = root.name
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent)
        own = _unit(".".join(rel.with_suffix("").parts).removesuffix(".__init__"), package)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for name in _imported(node, package):
                unit = _unit(name, package)
                if unit == own:
                    continue
                if unit not in layer_of or layer_of[unit] >= layer_of[own]:
                    where = "unplaced" if unit not in layer_of else f"layer {layer_of[unit]}"
                    found.append(
                        f"{rel}:{node.lineno} imports {name} ({unit}, {where}) "
                        f"from {own} (layer {layer_of.get(own, 'unplaced')})"
                    )
    return found


def test_every_package_is_placed_in_a_layer():
    units = {p.stem for p in ROOT.glob("*.py")} | {p.parent.name for p in ROOT.glob("*/__init__.py")}
    units = {"localjudge" if u == "__init__" else u for u in units}
    assert units - LAYER_OF.keys() == set(), "place each new package in LAYERS"
    assert LAYER_OF.keys() - units == set(), "LAYERS names a package that no longer exists"


def test_no_module_imports_a_package_above_or_beside_its_own():
    found = violations()
    assert not found, "imports against the package order:\n" + "\n".join(found)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in {"__init__.py": "", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize(
    "source",
    [
        "from pkg.high.mod import thing\n",  # module level
        "import pkg.high.mod\n",
        "from pkg import high\n",
        "def f():\n    from pkg.high import thing\n",  # a lazy import is still a dependency
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.high.mod import Thing\n",
    ],
)
def test_an_upward_import_is_found_with_its_file_and_line(tmp_path, source):
    root = _package(
        tmp_path, {"low/__init__.py": "", "low/mod.py": source, "high/__init__.py": "", "high/mod.py": "thing = 1\n"}
    )
    found = violations(root, {"low": 0, "high": 1, "pkg": 2})
    assert len(found) == 1
    assert found[0].startswith(f"pkg/low/mod.py:{source.count(chr(10))} imports pkg.high")


def test_a_downward_import_and_one_within_the_package_pass(tmp_path):
    root = _package(
        tmp_path,
        {
            "low/__init__.py": "from pkg.low.a import x\n",
            "low/a.py": "x = 1\n",
            "high/mod.py": "from pkg.low import x\n",
        },
    )
    assert violations(root, {"low": 0, "high": 1, "pkg": 2}) == []


def test_an_import_beside_in_the_same_layer_is_found(tmp_path):
    root = _package(tmp_path, {"a/mod.py": "from pkg.b import y\n", "b/__init__.py": "y = 1\n"})
    assert len(violations(root, {"a": 0, "b": 0, "pkg": 1})) == 1
