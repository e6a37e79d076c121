"""The ways to a file's digest (`weights.hashes`) give hashlib's digest of its bytes; they differ in when they read."""

from __future__ import annotations

import hashlib
import os

import pytest

from localjudge.weights import hashes
from localjudge.weights.hashes import fresh_sha256, hash_file, remembered_sha256, sha256_file


@pytest.mark.parametrize("size", [0, 1, 4096, (64 << 20) + 3])  # empty, small, a page, past one mapped slice
def test_every_way_is_hashlibs_sha256_of_the_bytes(tmp_path, size):
    data = os.urandom(size)
    f = tmp_path / "w.bin"
    f.write_bytes(data)
    want = hashlib.sha256(data).hexdigest()
    assert sha256_file(f) == fresh_sha256(f) == remembered_sha256(f, tmp_path) == want
    assert hash_file(f, "sha256", "xxh3_128")[0] == want


def test_fresh_reads_once_per_version_plain_reads_every_call(tmp_path, monkeypatch):
    f = tmp_path / "w.bin"
    f.write_bytes(b"one")
    read: list[str] = []
    real = hashes.hash_file
    monkeypatch.setattr(hashes, "hash_file", lambda p, *a: read.append(p.name) or real(p, *a))
    hashes._sha256.cache_clear()
    for way in (sha256_file, sha256_file, fresh_sha256, fresh_sha256):
        assert way(f) == hashlib.sha256(b"one").hexdigest()
    assert read == ["w.bin"] * 3  # twice plain, once fresh
    f.write_bytes(b"two!")  # a new size: a new version
    assert fresh_sha256(f) == hashlib.sha256(b"two!").hexdigest() and len(read) == 4
