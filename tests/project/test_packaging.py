"""What pyproject.toml promises a user who installs localjudge: extras pip can resolve, and the same versions
named wherever an install command is written down."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from localjudge.integrations.deepeval import INSTALL_DEEPEVAL, TESTED_DEEPEVAL

ROOT = Path(__file__).resolve().parents[2]
tomllib = pytest.importorskip("tomllib")  # Python 3.11+

# deepeval's caps the extra leaves out: the Hugging Face libraries under transformers need newer releases
CAPPED = {"click", "rich"}


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _extra(name: str) -> dict[str, Requirement]:
    return {(r := Requirement(d)).name: r for d in _project()["optional-dependencies"][name]}


def _deepeval_requires() -> dict[str, Requirement]:
    """The installed deepeval's requirements that apply here (its own extras left out)."""
    found = {}
    for text in importlib.metadata.requires("deepeval") or []:
        r = Requirement(text)
        if r.marker is None or r.marker.evaluate({"extra": ""}):
            found[r.name] = r
    return found


def _uncapped(specifier: SpecifierSet) -> SpecifierSet:
    return SpecifierSet(",".join(str(s) for s in specifier if s.operator not in ("<", "<=")))


def test_the_deepeval_extra_is_deepevals_requirements_without_deepeval():
    # `pip install 'localjudge[deepeval]'` with deepeval==4.3.1 in the extra ended in ResolutionImpossible
    # in every environment: deepeval caps click <8.4, every huggingface-hub transformers accepts needs >=8.4.2
    extra, declared = _extra("deepeval"), _deepeval_requires()
    assert "deepeval" not in extra, f"pip cannot resolve deepeval as a dependency; install it as `{INSTALL_DEEPEVAL}`"
    assert set(extra) == set(declared) - {"click"}, "make the deepeval extra deepeval's requirements (but click)"
    for name, requirement in extra.items():
        want = _uncapped(declared[name].specifier) if name in CAPPED else declared[name].specifier
        assert requirement.specifier == want, f"deepeval requires {declared[name]}; the extra says {requirement}"


def test_deepeval_still_cannot_be_a_dependency():
    # the day a deepeval release accepts the click installed here, the two-step install is no longer needed
    click = _deepeval_requires()["click"]
    installed = importlib.metadata.version("click")
    assert not click.specifier.contains(installed), (
        f"deepeval {importlib.metadata.version('deepeval')} accepts click {installed}: put it back in the deepeval "
        "extra and install it in one step (README, DeepEval; INSTALL_DEEPEVAL; the Makefile)"
    )


def test_the_tested_deepeval_is_the_one_installed_and_documented():
    assert importlib.metadata.version("deepeval") == TESTED_DEEPEVAL
    command = f"pip install --no-deps deepeval=={TESTED_DEEPEVAL}"
    assert command in INSTALL_DEEPEVAL and "localjudge-offline[deepeval]" in INSTALL_DEEPEVAL
    assert command in (ROOT / "README.md").read_text(encoding="utf-8"), "the README's DeepEval install"
    assert f"--no-deps deepeval=={TESTED_DEEPEVAL}" in (ROOT / "Makefile").read_text(encoding="utf-8")


# -- what the wheel ships -----------------------------------------------------------------------------------

PACKAGE = ROOT / "localjudge"


def _data_files() -> set[str]:
    """Every file of the package that is not Python source, relative to the package folder."""
    return {
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".py", ".pyc")
    }


def test_package_data_names_every_data_file():
    # a file the globs miss is in a clone and in `pip install -e`, but not in the wheel
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    shipped = {p.relative_to(PACKAGE).as_posix() for g in globs["localjudge"] for p in PACKAGE.glob(g)}
    assert {"models.yaml", "py.typed", "examples/rag_demo.jsonl", "metrics/builtin/correctness.yaml"} <= shipped
    assert _data_files() <= shipped, f"add to [tool.setuptools.package-data]: {sorted(_data_files() - shipped)}"


def test_the_licence_is_an_spdx_expression_with_its_file():
    project = _project()
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    # PEP 639: with an SPDX expression a licence classifier is an error (setuptools >= 77 refuses to build)
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]


def test_the_classifiers_say_what_pyproject_does():
    project = _project()
    lowest = SpecifierSet(project["requires-python"])
    versions = [
        c.rsplit(" :: ", 1)[1] for c in project["classifiers"] if c.startswith("Programming Language :: Python :: 3.")
    ]
    assert versions and all(lowest.contains(v) for v in versions), versions
    assert min(versions, key=lambda v: tuple(map(int, v.split(".")))) in str(lowest), "list the lowest Python"
    assert "Typing :: Typed" in project["classifiers"] and (PACKAGE / "py.typed").exists()


def test_the_readme_installs_this_versions_wheel():
    from localjudge.version import __version__

    # the distribution's name: PyPI's `localjudge` is an unrelated 2019 package (pyproject.toml)
    assert _project()["name"] == "localjudge-offline"
    assert f"pip install dist/localjudge_offline-{__version__}-py3-none-any.whl" in (ROOT / "README.md").read_text(
        encoding="utf-8"
    )


@pytest.mark.slow
def test_the_built_wheel_holds_the_package_its_data_and_the_licence(tmp_path):
    import shutil
    import subprocess
    import sys
    import zipfile

    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip(f"setuptools {setuptools.__version__} here; the build needs >= 77 (pyproject.toml)")
    tree = tmp_path / "tree"  # a copy: setuptools writes build/ and *.egg-info beside the sources
    shutil.copytree(PACKAGE, tree / "localjudge", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, tree / name)
    command = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", "dist", "."]
    subprocess.run(command, cwd=tree, check=True, capture_output=True, timeout=300)
    (wheel,) = (tree / "dist").glob("localjudge_offline-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    sources = {
        "localjudge/" + p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts
    }
    data = {"localjudge/" + f for f in _data_files()}
    assert sources | data <= names, sorted((sources | data) - names)
    info = wheel.name.split("-py3")[0] + ".dist-info"
    assert f"{info}/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
    assert "License-Expression: MIT" in metadata and "Classifier: Typing :: Typed" in metadata


def test_every_install_command_names_this_distribution_and_a_real_extra():
    # `pip install 'localjudge[serve]'` stood in `localjudge serve`'s error: PyPI's `localjudge` is another package
    import re

    from localjudge.errors import DISTRIBUTION

    project = _project()
    assert project["name"] == DISTRIBUTION
    commands = [
        (path, m.group(1), m.group(2))
        for path in sorted(PACKAGE.rglob("*.py"))
        for m in re.finditer(r"pip install '([\w.-]+)\[(\w+)\]'", path.read_text(encoding="utf-8"))
    ]
    assert commands, "no install command found: the pattern is stale"
    for path, name, extra in commands:
        where = path.relative_to(ROOT)
        assert name == DISTRIBUTION, f"{where} installs {name!r}, not {DISTRIBUTION!r}"
        assert extra in project["optional-dependencies"], f"{where} names the extra [{extra}], which pyproject lacks"
