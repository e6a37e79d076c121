"""What pyproject.toml promises a user who installs localjudge: extras pip can resolve, and the same versions
named wherever an install command is written down."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from localjudge.integrations.deepeval import INSTALL_DEEPEVAL, TESTED_DEEPEVAL

ROOT = Path(__file__).resolve().parents[1]
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
    assert command in INSTALL_DEEPEVAL and "localjudge[deepeval]" in INSTALL_DEEPEVAL
    assert command in (ROOT / "README.md").read_text(encoding="utf-8"), "the README's DeepEval install"
    assert f"--no-deps deepeval=={TESTED_DEEPEVAL}" in (ROOT / "Makefile").read_text(encoding="utf-8")
