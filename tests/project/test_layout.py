"""The registry is kept once: the top-level models.yaml, which the package names and the wheel ships."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from localjudge.judges.registry import REGISTRY_PATH, load_registry

ROOT = Path(__file__).resolve().parents[2]


def test_the_bundled_registry_is_the_top_level_models_yaml():
    # the design card asks for models.yaml at the top level; the package's name for it is a link, not a copy
    assert REGISTRY_PATH.is_symlink() and REGISTRY_PATH.resolve() == (ROOT / "models.yaml").resolve()


def test_tuned_folders_are_read_from_the_package_not_the_link_target():
    tuned = [j for j in load_registry().judges if j.source.kind == "tuned"]
    assert tuned, "the registry ships a tuned judge"
    for j in tuned:
        folder = j.source.folder()
        shipped = (folder / "tune.json").is_file() or (folder / "head.json").is_file()
        assert folder.parent.parent == ROOT / "localjudge" and shipped, folder


@pytest.mark.slow
def test_the_wheel_ships_the_top_level_registry(tmp_path):
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path)]
        + [str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        assert z.read("localjudge/models.yaml") == (ROOT / "models.yaml").read_bytes()
