"""The README's install lines, run as written in a fresh virtual environment on a copy of the clone.

The install block (README, Install) builds the wheel and installs it; then the installed command
answers `--help` and runs a first evaluation (with the scripted fake judge, tests/support/readme_fake.py).
No download: the new environment sees this one's packages (torch, transformers, the judges'
packages) through a `.pth` file, and pip runs with `--no-index` (PIP_NO_INDEX), so pip finds every
requirement installed and builds the wheel without build isolation.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from readme_blocks import blocks

from localjudge.version import __version__

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "tests" / "support"


def _install_lines() -> list[str]:
    (block,) = [
        b for b in blocks((ROOT / "README.md").read_text(encoding="utf-8")) if "test_readme_install.py" in b.reason
    ]
    return [line.split("  #")[0].strip() for line in block.code.splitlines() if line.strip()]


def _clone(tmp_path: Path) -> Path:
    """What a clone holds of what the build reads: the package, pyproject.toml, README and licence."""
    tree = tmp_path / "clone"
    shutil.copytree(ROOT / "localjudge", tree / "localjudge", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, tree / name)
    return tree


def test_the_readme_install_lines_build_install_and_run_the_wheel(tmp_path):
    lines = _install_lines()
    assert lines[0] == "python3 -m venv .venv && . .venv/bin/activate"
    assert f"pip install dist/localjudge_offline-{__version__}-py3-none-any.whl" in lines
    tree = _clone(tmp_path)
    bin_dir = tmp_path / "bin"  # `python3` is this interpreter's base Python, as a fresh shell's would be
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(getattr(sys, "_base_executable", sys.executable))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV", "LOCALJUDGE"))}
    env.update(
        PATH=os.pathsep.join([str(bin_dir), env.get("PATH", "")]),
        PIP_NO_INDEX="1",
        PIP_NO_BUILD_ISOLATION="0",  # pip reads a --no-* flag's variable inverted: 0 turns isolation off
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        LOCALJUDGE_CACHE=str(tmp_path / "cache"),
        XDG_CACHE_HOME=str(tmp_path / "xdg"),
        HF_HUB_OFFLINE="1",
    )

    def bash(script: str, cwd: Path = tree) -> str:
        done = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{script}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        return done.stdout

    bash(lines[0])  # the fresh environment; then it sees this one's packages (nothing is downloaded)
    (site,) = (tree / ".venv" / "lib").glob("python3*/site-packages")
    (site / "here.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    if (site / "setuptools").is_dir():  # venv's own, older than torch and the build need: this one's instead
        bash(".venv/bin/python -m pip uninstall -q -y setuptools")
    for line in lines[1:]:
        bash(f". .venv/bin/activate && {line}")

    venv_python = str(tree / ".venv" / "bin" / "python")
    work = tmp_path / "work"  # outside the clone, whose localjudge/ folder would shadow the installed package
    work.mkdir()
    where = bash(f"{venv_python} -c 'import localjudge; print(localjudge.__file__)'", work).strip()
    assert where.startswith(str(site)), f"localjudge imports from {where}, not the installed wheel"
    assert "Usage: localjudge" in bash(f"{tree}/.venv/bin/localjudge --help", work)
    assert "localjudge-offline" in bash(f"{venv_python} -m pip list --format=freeze").lower().replace("_", "-")
    # the extras resolve (those whose requirements this environment holds; deepeval's: tests/project/test_packaging.py)
    wheel = f"dist/localjudge_offline-{__version__}-py3-none-any.whl"
    bash(f". .venv/bin/activate && pip install --dry-run '{wheel}[inspect,ray]'")
    # a first evaluation by the installed package, the judge scripted (README, Your first evaluation)
    (work / "cases.jsonl").write_text(
        '{"id": "paris", "input": "Capital of France?", "actual_output": "Paris.", "expected_output": "Paris"}\n',
        encoding="utf-8",
    )
    out = bash(
        f"PYTHONPATH={SUPPORT} {venv_python} -m readme_fake eval cases.jsonl --metric correctness "
        "--judge smollm2-135m --out results.jsonl",
        work,
    )
    assert "judge: smollm2-135m (scripted fake)" in out and (work / "results.jsonl").is_file()
