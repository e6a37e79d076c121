"""transformers and gguf stay in the range localjudge is tested with: pyproject, the runtime check and this venv agree.

A venv upgraded past the range fails here, loudly, before any engine test trips over a changed internal:
run the suite on the new version, then widen the range in pyproject.toml (the one place it is written).
"""

from __future__ import annotations

import importlib.metadata
import logging
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from localjudge.judges import versions
from localjudge.judges.versions import CHECKED, DISTRIBUTION, outside_tested, required_ranges

ROOT = Path(__file__).resolve().parents[2]
tomllib = pytest.importorskip("tomllib")  # Python 3.11+


def _declared() -> dict[str, str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    return {(r := Requirement(d)).name: str(r.specifier) for d in deps}


@pytest.mark.parametrize("distribution", CHECKED)
def test_the_checked_range_is_pyprojects(distribution):
    from packaging.specifiers import SpecifierSet

    declared = _declared()
    assert distribution in declared, f"pyproject.toml does not require {distribution}"
    assert SpecifierSet(required_ranges()[distribution]) == SpecifierSet(declared[distribution]), (
        f"the installed {DISTRIBUTION} requires {distribution}{required_ranges()[distribution]}, pyproject.toml "
        f"{declared[distribution]}: reinstall the checkout (make install)"
    )
    assert any(s.operator in ("<", "<=", "==", "~=") for s in SpecifierSet(declared[distribution])), "no upper bound"


@pytest.mark.parametrize("distribution", CHECKED)
def test_the_installed_version_is_in_the_tested_range(distribution):
    version = importlib.metadata.version(distribution)
    message = outside_tested(distribution, version)
    assert message is None, f"{message}; or, once the suite passes on {version}, widen the range in pyproject.toml"


@pytest.mark.parametrize(
    ("version", "outside"), [("5.24.0", False), ("5.24.3", False), ("5.23.0", True), ("5.25.0", True), ("6.0", True)]
)
def test_the_range_is_checked(version, outside):
    assert (outside_tested("transformers", version) is not None) == outside


def test_a_version_outside_warns_at_load_naming_the_fix(monkeypatch, caplog):
    real = importlib.metadata.version
    monkeypatch.setattr(versions.importlib.metadata, "version", lambda d: "5.99.0" if d == "transformers" else real(d))
    versions.warn_untested_versions.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="localjudge"):
            found = versions.warn_untested_versions()
    finally:
        versions.warn_untested_versions.cache_clear()
    assert len(found) == 1
    assert "transformers 5.99.0 is installed" in caplog.text
    assert "pip install 'transformers>=5.24,<5.25'" in caplog.text


def test_accelerate_is_required_though_never_imported():
    # transformers refuses to load a GGUF without it ("accelerate is required when loading a GGUF file"):
    # dropping it broke every embedded judge in a fresh venv
    assert "accelerate" in _declared()
