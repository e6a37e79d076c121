"""GGUFs split across packages: found, checked and joined, on small synthetic chunk packages.

Each test builds real installed-looking packages (a folder with `__init__.py`, the chunk under
`data/`, and a `.dist-info` with its version) on `sys.path`, and a registry source for them.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import sys
from pathlib import Path

import pytest

from localjudge.errors import CacheError, ConfigError, ModelUnavailableError
from localjudge.judges.registry import availability, load_registry
from localjudge.weights import chunks as C
from localjudge.weights.sources import PackageChunksSource

PARTS = [b"GGUF" + b"a" * 60, b"b" * 64, b"c" * 17]


def _install(site: Path, n: int, data: bytes, version: str = "0.1.0", name: str = "fakechunk") -> None:
    pkg = site / f"{name}_part{n}"
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "data" / f"part{n:02d}.bin").write_bytes(data)
    info = site / f"{name}_part{n}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}-part{n}\nVersion: {version}\n")


def _source(parts: list[bytes] = PARTS, **changes) -> PackageChunksSource:
    whole = b"".join(parts)
    fields = {
        "kind": "package_chunks",
        "package": "fakechunk-part{n}",
        "version": "0.1.0",
        "module": "fakechunk_part{n}",
        "file": "data/part{n:02d}.bin",
        "gguf": "fake.gguf",
        "size": len(whole),
        "sha256": hashlib.sha256(whole).hexdigest(),
        "parts": [
            {
                "size": len(p),
                "sha256": hashlib.sha256(p).hexdigest(),
                "wheel_sha256": hashlib.sha256(b"wheel").hexdigest(),
            }
            for p in parts
        ],
    }
    return PackageChunksSource.model_validate(fields | changes)


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A fresh folder on sys.path holding the synthetic packages; import caches cleared around it."""
    where = tmp_path / "site"
    where.mkdir()
    monkeypatch.syspath_prepend(str(where))
    importlib.invalidate_caches()
    yield where
    for mod in [m for m in sys.modules if m.startswith("fakechunk")]:
        del sys.modules[mod]
    importlib.invalidate_caches()


def _all(site: Path, parts: list[bytes] = PARTS) -> None:
    for n, data in enumerate(parts, 1):
        _install(site, n, data)
    importlib.invalidate_caches()


def test_joins_the_parts_in_order_and_checks_the_whole(site, tmp_path):
    _all(site)
    target = C.joined_gguf(_source(), "fake-judge", tmp_path / "cache")
    assert target.read_bytes() == b"".join(PARTS)
    assert target.parent == tmp_path / "cache" / "gguf"
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # no temporary file left


def test_a_good_joined_file_is_not_written_again(site, tmp_path):
    _all(site)
    target = C.joined_gguf(_source(), "fake-judge", tmp_path / "cache")
    os.utime(target, ns=(1, 1))
    C.joined_gguf(_source(), "fake-judge", tmp_path / "cache")
    assert target.stat().st_mtime_ns == 1


def test_a_damaged_joined_file_is_joined_again(site, tmp_path, caplog):
    _all(site)
    target = C.joined_gguf(_source(), "fake-judge", tmp_path / "cache")
    target.write_bytes(b"GGUF" + b"x" * (len(b"".join(PARTS)) - 4))  # same size, other bytes
    with caplog.at_level(logging.WARNING, logger="localjudge"):
        again = C.joined_gguf(_source(), "fake-judge", tmp_path / "cache")
    assert again.read_bytes() == b"".join(PARTS)
    assert "damaged" in caplog.text


def test_no_part_installed_says_how_to_install_the_judge(site, tmp_path):
    msg = r"model packages of fake-judge are not installed; run: localjudge models --install fake-judge"
    with pytest.raises(ModelUnavailableError, match=msg):
        C.joined_gguf(_source(), "fake-judge", tmp_path / "cache")


def test_a_missing_part_is_named(site, tmp_path):
    _install(site, 1, PARTS[0])
    _install(site, 3, PARTS[2])
    importlib.invalidate_caches()
    with pytest.raises(ModelUnavailableError, match=r"part 2 of fake-judge, fakechunk-part2, is not installed"):
        C.joined_gguf(_source(), "fake-judge", tmp_path / "cache")
    assert not (tmp_path / "cache" / "gguf").exists()  # checked before anything is written


def test_a_chunk_of_the_wrong_size_names_its_package_and_the_reinstall(site, tmp_path):
    _all(site, [PARTS[0], PARTS[1][:-1], PARTS[2]])
    msg = (
        r"fakechunk-part2 \(part02.bin\) has 63 bytes, not 64; "
        r"reinstall it: pip uninstall -y fakechunk-part2 && localjudge models --install fake-judge"
    )
    with pytest.raises(ModelUnavailableError, match=msg):
        C.joined_gguf(_source(), "fake-judge", tmp_path / "cache")


def test_a_damaged_chunk_is_named_and_nothing_half_written_is_left(site, tmp_path):
    _all(site, [PARTS[0], b"b" * 63 + b"X", PARTS[2]])  # right size, wrong bytes
    with pytest.raises(ModelUnavailableError, match=r"chunk of fakechunk-part2 does not match its SHA-256"):
        C.joined_gguf(_source(), "fake-judge", tmp_path / "cache")
    assert list((tmp_path / "cache" / "gguf").iterdir()) == []


def test_a_part_beyond_the_last_is_refused(site, tmp_path):
    _all(site)
    _install(site, 4, b"d" * 8)
    importlib.invalidate_caches()
    with pytest.raises(ModelUnavailableError, match=r"fakechunk-part4 is installed, but fake-judge has 3 parts"):
        C.joined_gguf(_source(), "fake-judge", tmp_path / "cache")


def test_a_part_of_another_version_is_refused(site, tmp_path):
    _install(site, 1, PARTS[0])
    _install(site, 2, PARTS[1], version="0.2.0")
    _install(site, 3, PARTS[2])
    importlib.invalidate_caches()
    with pytest.raises(ModelUnavailableError, match=r"fakechunk-part2 0.2.0 is installed, fake-judge needs 0.1.0"):
        C.joined_gguf(_source(), "fake-judge", tmp_path / "cache")


def test_an_interrupted_join_leaves_nothing(site, tmp_path, monkeypatch):
    _all(site)
    calls = []

    def read_then_stop(self, *args):
        calls.append(1)
        if len(calls) > 2:
            raise KeyboardInterrupt
        return original(self, *args)

    import io

    original = io.BufferedReader.read
    monkeypatch.setattr(C, "BLOCK", 16)  # many blocks per chunk
    target = tmp_path / "cache" / "gguf" / "x.gguf"
    src = _source()
    found = C.locate_parts(src, "fake-judge")

    class Stopping(io.BufferedReader):
        read = read_then_stop

    monkeypatch.setattr(C, "open", lambda p, mode: Stopping(io.FileIO(p, mode)), raising=False)
    with pytest.raises(KeyboardInterrupt):
        C.join_parts(src, "fake-judge", found, target)
    assert list(target.parent.iterdir()) == []


def test_a_full_disk_is_a_cache_error_naming_the_size(site, tmp_path, monkeypatch):
    import errno

    _all(site)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(C.tempfile, "mkstemp", full)
    with pytest.raises(CacheError, match="no space"):
        C.joined_gguf(_source(), "fake-judge", tmp_path / "cache")


def test_a_registry_whose_parts_do_not_add_up_is_refused(tmp_path):
    with pytest.raises(ValueError, match="add up to 145 bytes, not the GGUF's 146"):
        _source(size=146)
    yaml = tmp_path / "models.yaml"
    src = _source().model_dump()
    src["size"] += 1
    import json

    yaml.write_text(
        "default: j\njudges:\n  - name: j\n    family: f\n    context_length: 8\n    source: " + json.dumps(src) + "\n"
    )
    with pytest.raises(ConfigError, match=r"judges\.0\.source.*add up"):
        load_registry(yaml)


def test_availability_counts_the_parts_installed(site, tmp_path):
    from localjudge.judges.registry import JudgeEntry

    entry = JudgeEntry(name="fake-judge", family="f", context_length=8, source=_source())
    assert availability(entry) == "no: localjudge models --install fake-judge"
    _install(site, 1, PARTS[0])
    importlib.invalidate_caches()
    assert availability(entry) == "no: localjudge models --install fake-judge (1 of 3 parts here)"
    _install(site, 2, PARTS[1])
    _install(site, 3, PARTS[2])
    importlib.invalidate_caches()
    assert availability(entry) == "yes"


def test_the_registry_pins_every_chunked_part_and_its_wheel():
    reg = load_registry()
    for name, count, family in (
        ("gemma3-270m", 4, "gemma"),
        ("qwen2.5-coder-0.5b", 6, "qwen"),
        ("qwen2.5-coder-1.5b", 22, "qwen"),
    ):
        src = reg.get(name).source
        assert isinstance(src, PackageChunksSource)
        assert len(src.parts) == count and reg.get(name).family == family
        assert src.requirements()[0].endswith(f"part1=={src.version}")
        assert len(set(src.wheel_hashes())) == count  # one wheel per part, each pinned


def test_parts_are_found_never_imported_and_their_files_may_count_from_zero(site, tmp_path):
    # gemma3-270m's packages part1..4 hold data/gemma-3-270m-q4_k_m.gguf.part00..03
    _all(site)
    for n in range(1, len(PARTS) + 1):
        data = site / f"fakechunk_part{n}" / "data"
        (data / f"part{n:02d}.bin").rename(data / f"model.gguf.part{n - 1:02d}")
        (site / f"fakechunk_part{n}" / "__init__.py").write_text("raise RuntimeError('a part package was imported')\n")
    target = C.joined_gguf(_source(file="data/model.gguf.part{i:02d}"), "fake-judge", tmp_path / "cache")
    assert target.read_bytes() == b"".join(PARTS)
    assert not [m for m in sys.modules if m.startswith("fakechunk")]


def test_a_good_joined_file_is_found_without_writing_anything(site, tmp_path):
    _all(site)
    root = tmp_path / "cache"
    assert C.joined_if_present(_source(), "fake-judge", root) is None and not root.exists()
    target = C.joined_gguf(_source(), "fake-judge", root)
    before = sorted(p for p in root.rglob("*"))
    os.utime(target, ns=(1, 1))
    assert C.joined_if_present(_source(), "fake-judge", root) == target
    assert sorted(p for p in root.rglob("*")) == before and target.stat().st_mtime_ns == 1
    target.write_bytes(b"GGUF" + b"x" * (len(b"".join(PARTS)) - 4))  # same size, other bytes: not used
    assert C.joined_if_present(_source(), "fake-judge", root) is None
    (site / "fakechunk_part1" / "data" / "part01.bin").unlink()  # the parts are checked first, as for every load
    with pytest.raises(ModelUnavailableError, match=r"chunk of fakechunk-part1 \(part01.bin\) is missing"):
        C.joined_if_present(_source(), "fake-judge", root)
