"""The cache kept within its size limit: least recently used copies and joined GGUFs evicted first, never one
that a loader holds or that is being written, a copy larger than the limit never written, the limit read from
$LOCALJUDGE_CACHE_LIMIT (default 20 GiB) and shown by `localjudge cache list`.

Eviction runs on hand-made copies (`store_prepared` with a writer of N bytes); the load tests use the tiny
Llama GGUF of tests/support/tiny_gguf.py, written twice with different weights.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from prepared import PROMPTS, copies
from tiny_gguf import write_tiny_gguf

from localjudge import load_judge
from localjudge.cli import main
from localjudge.errors import ConfigError
from localjudge.testing.tiny_models import tiny_llama
from localjudge.weights.cache import MANIFEST, CacheKey, held, store_prepared
from localjudge.weights.cache_list import DEFAULT_LIMIT, cache_limit, evict, list_prepared, parse_size

pytestmark = pytest.mark.usefixtures("torch_one_thread")
MiB = 2**20


@pytest.fixture(scope="module")
def two_ggufs(tmp_path_factory, tiny_tokenizer) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("ggufs")
    return (
        write_tiny_gguf(folder / "a.gguf", tiny_tokenizer, tiny_llama(tiny_tokenizer, seed=0)),
        write_tiny_gguf(folder / "b.gguf", tiny_tokenizer, tiny_llama(tiny_tokenizer, seed=1)),
    )


def copy_of(root: Path, n: int, size: int, used: float, gguf: str = "j.gguf") -> Path:
    """A copy of `size` bytes for the made-up GGUF number `n`, last used at `used` (epoch seconds)."""

    def write(folder: Path) -> None:
        (folder / "model.safetensors").write_bytes(b"x" * size)

    folder = store_prepared(CacheKey(f"{n:02x}" * 32, "9.9"), gguf, write, root)
    os.utime(folder / MANIFEST, (used, used))
    return folder


def masses(judge) -> np.ndarray:
    return np.array([d.valid_mass for d in judge.score_texts(PROMPTS, 0, 10, min_valid_mass=0.0)])


# -- the limit ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, size",
    [("20GiB", 20 * 2**30), ("500MB", 500 * 10**6), ("1.5G", int(1.5 * 2**30)), ("0", 0), ("123", 123)]
    + [(" 2 mib ", 2 * MiB), ("none", None), ("off", None)],
)
def test_sizes_are_read_with_decimal_and_binary_units(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["lots", "-1GiB", "20 GB s", "1e9"])
def test_a_size_that_is_not_one_is_a_config_error(text):
    with pytest.raises(ConfigError, match=r"LOCALJUDGE_CACHE_LIMIT=.* is not a size; give bytes with a unit"):
        parse_size(text)


def test_the_limit_defaults_to_20_gib_and_follows_the_variable(monkeypatch):
    monkeypatch.delenv("LOCALJUDGE_CACHE_LIMIT", raising=False)
    assert cache_limit().bytes == DEFAULT_LIMIT == 20 * 2**30 and "default" in cache_limit().source
    monkeypatch.setenv("LOCALJUDGE_CACHE_LIMIT", "3MiB")
    assert cache_limit().bytes == 3 * MiB and cache_limit().source == "LOCALJUDGE_CACHE_LIMIT"


# -- eviction -------------------------------------------------------------------------------------


def test_the_least_recently_used_copies_go_first_until_the_folder_is_within_the_limit(tmp_path):
    old, middle, new = (copy_of(tmp_path, n, MiB, used) for n, used in ((1, 1000.0), (2, 2000.0), (3, 3000.0)))
    assert evict(tmp_path, 10 * MiB) == []  # within the limit: nothing goes
    removed = evict(tmp_path, int(2.5 * MiB))
    assert [e.path for e in removed] == [old] and copies(tmp_path) == [middle, new]
    assert [e.path for e in evict(tmp_path, 0, keep=[new])] == [middle] and copies(tmp_path) == [new]


def test_making_room_for_a_new_copy_counts_its_bytes(tmp_path):
    old, new = copy_of(tmp_path, 1, MiB, 1000.0), copy_of(tmp_path, 2, MiB, 2000.0)
    assert evict(tmp_path, 3 * MiB, incoming=MiB // 2) == []
    assert [e.path for e in evict(tmp_path, 3 * MiB, incoming=int(1.5 * MiB))] == [old]
    assert copies(tmp_path) == [new]


def test_a_copy_a_loader_holds_is_never_evicted(tmp_path):
    old, new = copy_of(tmp_path, 1, MiB, 1000.0), copy_of(tmp_path, 2, MiB, 2000.0)
    with held(old) as there:  # another loader reading it (flock is per open file, so one process shows it)
        assert there
        assert [e.path for e in evict(tmp_path, MiB)] == [new]  # the next in line goes instead
        assert evict(tmp_path, 0) == [] and copies(tmp_path) == [old]
    assert [e.path for e in evict(tmp_path, 0)] == [old]


def test_copies_being_written_are_counted_never_evicted(tmp_path):
    done = copy_of(tmp_path, 1, MiB, 1000.0)
    writing = tmp_path / "weights" / f".tmp-x.host.{os.getpid()}.abc"
    writing.mkdir()
    (writing / "model.safetensors").write_bytes(b"x" * MiB)
    assert [e.path for e in evict(tmp_path, int(1.5 * MiB))] == [done]
    assert writing.exists() and evict(tmp_path, 0) == []


def test_unused_and_damaged_copies_go_before_any_in_use(tmp_path):
    recent_unused = copy_of(tmp_path, 1, MiB, 9000.0)
    manifest = (recent_unused / MANIFEST).read_text()
    # a per-dtype copy of the first layout: only its fp32 ones are read
    unused = manifest.replace('"dtype": "float32"', '"dtype": "bfloat16"').replace('"format": 2', '"format": 1')
    (recent_unused / MANIFEST).write_text(unused)
    recent_damaged = copy_of(tmp_path, 2, MiB, 8000.0)
    os.truncate(recent_damaged / "model.safetensors", 10)
    oldest_ok = copy_of(tmp_path, 3, MiB, 1000.0)
    assert {e.path: e.state for e in list_prepared(tmp_path)} == {
        recent_unused: "unused",
        recent_damaged: "damaged",
        oldest_ok: "ok",
    }
    assert {e.path for e in evict(tmp_path, int(1.5 * MiB))} == {recent_unused, recent_damaged}


def test_a_joined_gguf_counts_and_was_last_used_when_its_copies_were(tmp_path):
    from localjudge.weights import cache_list, chunks

    assert cache_list.GGUF_DIR == chunks.GGUF_DIR  # where the joiner writes is where eviction looks
    gguf = tmp_path / "gguf" / f"{'01' * 8}-judge.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(b"g" * MiB)
    os.utime(gguf, (500.0, 500.0))  # joined long ago
    mine = copy_of(tmp_path, 1, MiB, 5000.0, gguf="judge.gguf")
    other = copy_of(tmp_path, 2, MiB, 3000.0)
    entries = {e.path: e for e in list_prepared(tmp_path)}
    assert entries[gguf].kind == "gguf" and entries[gguf].last_used == 5000.0 and entries[gguf].size == MiB
    assert sum(e.size for e in entries.values()) >= 3 * MiB
    assert [e.path for e in evict(tmp_path, int(2.5 * MiB))] == [other]
    assert [e.path for e in evict(tmp_path, int(1.5 * MiB))] == [mine]  # a copy before the GGUF it was made from
    assert [e.path for e in evict(tmp_path, 0)] == [gguf] and list_prepared(tmp_path) == []


# -- loads ----------------------------------------------------------------------------------------


def test_a_load_evicts_the_least_recently_used_judge_to_stay_within_the_limit(two_ggufs, tmp_path, monkeypatch):
    a, b = two_ggufs
    load_judge(str(a), device="cpu", cache=tmp_path, progress=False)
    (copy_a,) = copies(tmp_path)
    size = sum(p.stat().st_size for p in copy_a.iterdir())
    monkeypatch.setenv("LOCALJUDGE_CACHE_LIMIT", str(int(1.5 * size)))  # room for one copy
    load_judge(str(b), device="cpu", cache=tmp_path, progress=False)
    (copy_b,) = copies(tmp_path)
    assert copy_b != copy_a
    load_judge(str(a), device="cpu", cache=tmp_path, progress=False)  # a again: b is the older now
    assert copies(tmp_path) == [copy_a]


def test_a_copy_larger_than_the_limit_is_not_written_and_the_judge_loads_the_same(
    two_ggufs, tmp_path, monkeypatch, caplog
):
    a, _ = two_ggufs
    reference = masses(load_judge(str(a), device="cpu", cache=False, progress=False))
    monkeypatch.setenv("LOCALJUDGE_CACHE_LIMIT", "100KiB")
    caplog.set_level(logging.WARNING, logger="localjudge")
    judge = load_judge(str(a), device="cpu", cache=tmp_path, progress=False)
    assert np.array_equal(masses(judge), reference) and copies(tmp_path) == []
    assert "more than the cache limit of 0.1 MiB (LOCALJUDGE_CACHE_LIMIT)" in caplog.text
    assert "set LOCALJUDGE_CACHE_LIMIT higher" in caplog.text and "loaded from the GGUF this time" in caplog.text


def test_a_bad_limit_fails_the_load_before_any_parse(two_ggufs, tmp_path, monkeypatch):
    import gguf

    monkeypatch.setenv("LOCALJUDGE_CACHE_LIMIT", "lots")
    monkeypatch.setattr(gguf, "GGUFReader", None)  # a parse would fail on this, not on the limit
    with pytest.raises(ConfigError, match="is not a size"):
        load_judge(str(two_ggufs[0]), device="cpu", cache=tmp_path, progress=False)


# -- the CLI --------------------------------------------------------------------------------------


def test_cache_prune_applies_a_lower_limit_now(tmp_path):
    old, new = copy_of(tmp_path, 1, MiB, 1000.0), copy_of(tmp_path, 2, MiB, 2000.0)
    result = CliRunner().invoke(main, ["cache", "prune", "--cache-dir", str(tmp_path), "--limit", "1.5MiB"])
    assert result.exit_code == 0, result.output
    assert "removed 1 (1.0 MiB)" in result.output and copies(tmp_path) == [new] and not old.exists()
    result = CliRunner().invoke(main, ["cache", "prune", "--cache-dir", str(tmp_path), "--limit", "lots"])
    # the error once named $LOCALJUDGE_CACHE_LIMIT, which was not set: the option was wrong
    assert result.exit_code == 2 and "Error: --limit='lots' is not a size; give bytes" in result.output
    assert "LOCALJUDGE_CACHE_LIMIT" not in result.output


def test_an_entry_renamed_away_while_the_folder_is_listed_is_left_out(tmp_path, monkeypatch):
    # another loader renames its finished copy into place between this listing's check that a file is
    # there and its read of the file's size: the listing, and so a load's eviction, go on without it
    kept = copy_of(tmp_path, 1, MiB, used=1000.0)
    moving = tmp_path / "weights" / ".tmp-0202-float32-transformers9.9.host.1.abcd"
    moving.mkdir()
    (moving / "model.safetensors").write_bytes(b"x" * MiB)
    seen: dict[Path, int] = {}
    real_stat = Path.stat

    def stat(self, *args, **kwargs):
        if moving in self.parents:
            seen[self] = seen.get(self, 0) + 1
            if seen[self] > 1:  # there for `is_file`, gone by the size read
                raise FileNotFoundError(2, "No such file or directory", str(self))
        return real_stat(self, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", stat)
    assert [e.path for e in list_prepared(tmp_path)] == [kept]
    seen.clear()
    assert [e.path for e in evict(tmp_path, 0)] == [kept]


def test_cache_prune_help_shows_the_default_limit():
    # the default once read "[default: the limit]"
    help_text = " ".join(CliRunner().invoke(main, ["cache", "prune", "--help"]).output.split())
    assert f"[default: $LOCALJUDGE_CACHE_LIMIT, else {DEFAULT_LIMIT // 2**30}GiB]" in help_text
