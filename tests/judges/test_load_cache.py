"""Prepared copies of GGUF judges: one parse per cold load, warm loads from a verified copy, the
same scores and provenance either way, damaged copies rebuilt, a cache that cannot be written
costing a warning, never the load.

Most tests load a tiny Llama written as a real GGUF (tests/support/tiny_gguf.py); the slow ones run
several processes, or load the real SmolLM2.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from prepared import PROMPTS, assert_same, copies, fingerprint
from tiny_gguf import write_tiny_gguf

from localjudge import load_judge
from localjudge.cli import main
from localjudge.engine.options import EngineOptions
from localjudge.errors import CacheError
from localjudge.kinds.geval.steps import cache_dir as steps_dir
from localjudge.testing.tiny_models import tiny_llama
from localjudge.weights.cache import MANIFEST, CacheKey, cache_root, find_prepared, store_prepared
from localjudge.weights.cache_list import clear_prepared, list_prepared

pytestmark = pytest.mark.usefixtures("torch_one_thread")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gguf_path(tmp_path_factory, tiny_tokenizer) -> Path:
    return write_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf", tiny_tokenizer, tiny_llama(tiny_tokenizer))


@pytest.fixture(scope="module")
def reference(gguf_path, tmp_path_factory):
    """What the GGUF itself gives, parsed with no cache at all."""
    return fingerprint(load_judge(str(gguf_path), device="cpu", dtype="float32", cache=False, progress=False))


def load(path: Path, cache, dtype: str = "float32"):
    return load_judge(str(path), device="cpu", dtype=dtype, cache=cache, progress=False)


# -- cold and warm ---------------------------------------------------------------------------------


def test_cold_then_warm_load_give_bitwise_the_same_judge(gguf_path, reference, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="localjudge")
    cold = fingerprint(load(gguf_path, tmp_path))
    assert "prepared copy of tiny.gguf written" in caplog.text
    caplog.clear()
    warm = fingerprint(load(gguf_path, tmp_path))
    assert "loaded the prepared copy" in caplog.text and "written" not in caplog.text
    assert_same(cold, reference)
    assert_same(warm, reference)
    assert warm["provenance"] == "sha256:" + hashlib.sha256(gguf_path.read_bytes()).hexdigest()


def test_a_cold_load_parses_the_gguf_once(gguf_path, tmp_path, monkeypatch):
    import gguf

    parses = []

    class CountingReader(gguf.GGUFReader):
        def __init__(self, *args, **kwargs):
            parses.append(args[0])
            super().__init__(*args, **kwargs)

    from transformers import modeling_gguf_pytorch_utils as hf_gguf

    readings = []
    real_checkpoint = hf_gguf.load_gguf_checkpoint

    def counting_checkpoint(path, return_tensors=False, **kwargs):
        readings.append(return_tensors)
        return real_checkpoint(path, return_tensors=return_tensors, **kwargs)

    monkeypatch.setattr(gguf, "GGUFReader", CountingReader)
    monkeypatch.setattr(hf_gguf, "load_gguf_checkpoint", counting_checkpoint)
    load(gguf_path, False)
    assert len(parses) == 1  # transformers alone reads it three times: two configs and the weights
    assert readings == [False, True]  # the tokenizer's and the model's configs: one metadata reading
    assert gguf.GGUFReader is CountingReader  # restored after the load
    assert hf_gguf.load_gguf_checkpoint is counting_checkpoint
    load(gguf_path, tmp_path)
    parses.clear()
    load(gguf_path, tmp_path)
    assert parses == []  # warm: the GGUF is hashed, not parsed


def test_copy_is_keyed_by_gguf_hash_transformers_version_and_layout_and_holds_fp32(gguf_path, tmp_path):
    import transformers
    import xxhash

    load(gguf_path, tmp_path)
    sha = hashlib.sha256(gguf_path.read_bytes()).hexdigest()
    (folder,) = copies(tmp_path)
    assert folder.name == f"{sha[:16]}-float32-transformers{transformers.__version__}"
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["format"] == 2 and manifest["dtype"] == "float32"
    assert manifest["gguf_sha256"] == sha and manifest["gguf_file"] == "tiny.gguf"
    assert {"model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json"} <= set(manifest["files"])
    for name, entry in manifest["files"].items():
        data = (folder / name).read_bytes()
        assert entry == {"size": len(data), "xxh3_128": xxhash.xxh3_128(data).hexdigest(), "sha256": None}


def full(dtype: str) -> EngineOptions:
    """Every op in `dtype` (no mixed precision): its weights load in it, not in fp32."""
    return EngineOptions(device="cpu", dtype=dtype, mixed_precision=False)


def mixed(dtype: str) -> EngineOptions:
    """Mixed precision: the linear layers in `dtype`, the rest in fp32."""
    return EngineOptions(device="cpu", dtype=dtype, mixed_precision=True)


@pytest.mark.parametrize(
    ("options", "layout"),
    [
        (full("bfloat16"), "bfloat16"),
        (full("float16"), "float16"),
        (mixed("bfloat16"), "bfloat16-mixed"),
    ],
    ids=["bf16", "fp16", "bf16-mixed"],
)
def test_each_layout_has_its_copy_and_loads_bitwise_as_from_the_gguf(gguf_path, tmp_path, caplog, options, layout):
    """A bf16/fp16 judge reads a copy stored as it runs, giving the numbers a load from the GGUF gives."""
    caplog.set_level(logging.INFO, logger="localjudge")
    alone = fingerprint(load_judge(str(gguf_path), options=options, cache=False, progress=False))
    cold = load_judge(str(gguf_path), options=options, cache=tmp_path, progress=False)
    assert "prepared copy of tiny.gguf written" in caplog.text
    caplog.clear()
    warm = fingerprint(load_judge(str(gguf_path), options=options, cache=tmp_path, progress=False))
    assert "loaded the prepared copy" in caplog.text and "written" not in caplog.text
    fp32 = fingerprint(load(gguf_path, tmp_path))
    (folder,) = [c for c in copies(tmp_path) if f"-{layout}-" in c.name]
    assert json.loads((folder / MANIFEST).read_text())["dtype"] == layout
    assert len(copies(tmp_path)) == 2  # this layout's and fp32's
    assert_same(fingerprint(cold), alone)
    assert_same(warm, alone)
    assert not np.array_equal(fp32["probs"], alone["probs"])  # the dtype does reach the numbers


def _stored(folder: Path) -> dict:
    """Each tensor of a copy's safetensors files: its name -> dtype as stored."""
    from safetensors import safe_open

    out = {}
    for file in folder.glob("*.safetensors"):
        with safe_open(file, framework="pt") as f:
            out |= {name: f.get_slice(name).get_dtype() for name in f.keys()}
    return out


def test_a_copy_stores_its_weights_in_the_dtypes_the_run_reads(gguf_path, tmp_path):
    """bf16: every tensor bf16 (half the fp32 copy's bytes); mixed: the lowered linear weights bf16, the rest fp32."""
    import torch

    from localjudge.engine.mixed import lowered_weights
    from localjudge.weights.gguf import load_prepared

    load(gguf_path, tmp_path)
    load_judge(str(gguf_path), options=full("bfloat16"), cache=tmp_path, progress=False)
    load_judge(str(gguf_path), options=mixed("bfloat16"), cache=tmp_path, progress=False)
    by_layout = {c.name.split("-", 1)[1].split("-transformers")[0]: c for c in copies(tmp_path)}
    assert set(by_layout) == {"float32", "bfloat16", "bfloat16-mixed"}
    fp32, bf16, mix = (_stored(by_layout[k]) for k in ("float32", "bfloat16", "bfloat16-mixed"))
    assert set(fp32) == set(bf16) == set(mix)
    assert set(fp32.values()) == {"F32"} and set(bf16.values()) == {"BF16"}
    size = {k: (c / "model.safetensors").stat().st_size for k, c in by_layout.items()}
    assert size["bfloat16"] < 0.51 * size["float32"]
    model, _ = load_prepared(by_layout["float32"], "float32")  # as transformers builds it: plain linear layers
    lowered = set(lowered_weights(model, model.get_output_embeddings()))
    assert lowered and lowered < set(mix)
    assert {n for n, d in mix.items() if d == "BF16"} == lowered
    assert torch.float32 == model.get_output_embeddings().weight.dtype


def test_a_mixed_load_reads_linear_weights_low_and_makes_no_fp32_copy_of_them(gguf_path, tmp_path, monkeypatch):
    """From the copy to the running judge, no weight of a lowered layer is ever an fp32 tensor."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    from localjudge.engine.mixed import MixedLinear
    from localjudge.weights.gguf import load_prepared

    load_judge(str(gguf_path), options=mixed("bfloat16"), cache=tmp_path, progress=False)  # writes the copy
    (folder,) = copies(tmp_path)
    low_shapes = {tuple(shape) for shape in _shapes(folder, "BF16")}
    fp32_shapes = {tuple(shape) for shape in _shapes(folder, "F32")}
    assert low_shapes and not low_shapes & fp32_shapes  # so a shape names a lowered weight
    model, _ = load_prepared(folder, "bfloat16-mixed")  # as transformers gives it, before any lowering
    dtypes = {tuple(p.shape): p.dtype for p in model.parameters()}
    assert {dtypes[s] for s in low_shapes} == {torch.bfloat16} and {dtypes[s] for s in fp32_shapes} == {torch.float32}
    monkeypatch.setenv("HF_DEACTIVATE_ASYNC_LOAD", "1")  # tensors read on this thread, where the mode sees them

    class Widened(TorchDispatchMode):
        """Records every cast or copy that makes an fp32 tensor of a lowered weight's shape (not on meta:
        transformers builds the model there first)."""

        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func.__name__.split(".")[0] in ("_to_copy", "copy_", "clone", "to"):
                for t in out if isinstance(out, (tuple, list)) else [out]:
                    if isinstance(t, torch.Tensor) and t.dtype == torch.float32 and not t.is_meta:
                        if tuple(t.shape) in low_shapes:
                            self.seen.append((str(func), tuple(t.shape)))
            return out

    with Widened() as mode:
        judge = load_judge(str(gguf_path), options=mixed("bfloat16"), cache=tmp_path, progress=False)
    assert mode.seen == []
    layers = [m for m in judge.backend.model.modules() if isinstance(m, MixedLinear) or hasattr(m, "lowers_in_place")]
    assert layers and all(m.weight.dtype == torch.bfloat16 for m in layers if m.weight.shape in low_shapes)
    kept = [p for p in judge.backend.model.parameters() if tuple(p.shape) in fp32_shapes]
    assert kept and all(p.dtype == torch.float32 for p in kept)


def _shapes(folder: Path, dtype: str) -> list:
    from safetensors import safe_open

    out = []
    for file in folder.glob("*.safetensors"):
        with safe_open(file, framework="pt") as f:
            out += [f.get_slice(n).get_shape() for n in f.keys() if f.get_slice(n).get_dtype() == dtype]
    return out


TOKENIZER_TEXTS = ["Score: 10", "  the answer is\tgood\n\nRating 7/10", "héllo wörld", "", "<|endoftext|>yes"]


def assert_same_tokenizer(a, b) -> None:
    """Same tokens for every text, the same text for every token, the same special tokens and template."""
    for text in TOKENIZER_TEXTS:
        assert a(text)["input_ids"] == b(text)["input_ids"], text
        assert a(text, add_special_tokens=False)["input_ids"] == b(text, add_special_tokens=False)["input_ids"], text
    ids = [[i] for i in range(len(a))]
    assert len(a) == len(b) and a.batch_decode(ids) == b.batch_decode(ids)
    assert a.batch_decode(ids, skip_special_tokens=True) == b.batch_decode(ids, skip_special_tokens=True)
    assert a.all_special_tokens == b.all_special_tokens and a.all_special_ids == b.all_special_ids
    assert (a.bos_token_id, a.eos_token_id, a.pad_token_id, a.padding_side) == (
        b.bos_token_id,
        b.eos_token_id,
        b.pad_token_id,
        b.padding_side,
    )
    assert a.chat_template == b.chat_template
    if a.chat_template:
        messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
        assert a.apply_chat_template(messages, tokenize=False) == b.apply_chat_template(messages, tokenize=False)


@pytest.mark.parametrize("name", ["GemmaTokenizer", "LlamaTokenizer", "Qwen2Tokenizer", "GPT2Tokenizer"])
def test_a_saved_tokenizer_loads_as_the_one_saved(tiny_tokenizer, tmp_path, name):
    """Classes with their own __init__ rebuild their pipeline in from_pretrained; the copy reads it as saved."""
    import transformers
    from tiny_gguf import CHAT_TEMPLATE

    from localjudge.weights.gguf import load_tokenizer

    spec = json.loads(tiny_tokenizer.backend_tokenizer.to_str())
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in spec["model"]["merges"]]
    specials = {"unk_token": "<|endoftext|>", "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>"}
    saved = getattr(transformers, name)(vocab=spec["model"]["vocab"], merges=merges, **specials)
    saved.chat_template = CHAT_TEMPLATE
    saved.save_pretrained(tmp_path)
    loaded = load_tokenizer(tmp_path)
    assert_same_tokenizer(saved, loaded)
    assert_same_tokenizer(transformers.AutoTokenizer.from_pretrained(tmp_path), loaded)


def test_the_warm_tokenizer_is_the_cold_one(gguf_path, tmp_path):
    cold = load(gguf_path, tmp_path).backend.tokenizer
    warm = load(gguf_path, tmp_path).backend.tokenizer
    assert_same_tokenizer(cold, warm)
    assert cold.backend_tokenizer.to_str() == warm.backend_tokenizer.to_str()


# -- damaged and partial copies ----------------------------------------------------------------------


def _flip_byte(folder: Path) -> None:
    path = folder / "model.safetensors"
    data = bytearray(path.read_bytes())
    data[-5] ^= 0x01  # a weight's bit: same size, still a valid safetensors file
    path.write_bytes(bytes(data))


def _edit_manifest(folder: Path, **changes) -> None:
    manifest = json.loads((folder / MANIFEST).read_text())
    (folder / MANIFEST).write_text(json.dumps({**manifest, **changes}))


DAMAGE = {
    "flipped weight bit": _flip_byte,
    "truncated weights": lambda f: os.truncate(f / "model.safetensors", 1000),
    "missing tokenizer": lambda f: (f / "tokenizer.json").unlink(),
    "extra file": lambda f: (f / "tokenizer.model").write_bytes(b"not the tokenizer"),
    "no manifest (interrupted)": lambda f: (f / MANIFEST).unlink(),
    "garbage manifest": lambda f: (f / MANIFEST).write_text("{not json"),
    "manifest of another dtype": lambda f: _edit_manifest(f, dtype="bfloat16"),
    "manifest of another layout": lambda f: _edit_manifest(f, format=0),
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_a_damaged_copy_is_rebuilt_never_used(gguf_path, reference, tmp_path, caplog, damage):
    load(gguf_path, tmp_path)
    (folder,) = copies(tmp_path)
    damage(folder)
    caplog.set_level(logging.INFO, logger="localjudge")
    judge = load(gguf_path, tmp_path)
    assert "is damaged" in caplog.text and "rebuilding it from the GGUF" in caplog.text
    assert "loaded the prepared copy" not in caplog.text
    assert_same(fingerprint(judge), reference)
    assert copies(tmp_path) == [folder]  # rebuilt in place, nothing else left
    caplog.clear()
    assert_same(fingerprint(load(gguf_path, tmp_path)), reference)
    assert "loaded the prepared copy" in caplog.text


def _as_first_layout(folder: Path) -> None:
    """Rewrites a copy's manifest as the first layout wrote it: sha256 of every file."""
    manifest = json.loads((folder / MANIFEST).read_text())
    files = {
        n: {"size": e["size"], "sha256": hashlib.sha256((folder / n).read_bytes()).hexdigest()}
        for n, e in manifest["files"].items()
    }
    (folder / MANIFEST).write_text(json.dumps({**manifest, "format": 1, "files": files}))


def test_a_first_layout_copy_is_checked_by_sha256_once_and_upgraded_not_rebuilt(gguf_path, reference, tmp_path, caplog):
    load(gguf_path, tmp_path)
    (folder,) = copies(tmp_path)
    upgraded = json.loads((folder / MANIFEST).read_text())
    _as_first_layout(folder)
    caplog.set_level(logging.INFO, logger="localjudge")
    assert_same(fingerprint(load(gguf_path, tmp_path)), reference)
    assert "loaded the prepared copy" in caplog.text and "damaged" not in caplog.text
    assert json.loads((folder / MANIFEST).read_text())["files"] == upgraded["files"]  # xxh3 of the same bytes
    _as_first_layout(folder)
    _flip_byte(folder)  # a first-layout copy whose bytes changed is rebuilt like any other
    caplog.clear()
    assert_same(fingerprint(load(gguf_path, tmp_path)), reference)
    assert "does not match its sha256" in caplog.text and copies(tmp_path) == [folder]


def test_a_warm_load_reads_no_byte_of_its_gguf_until_the_file_changes(gguf_path, reference, tmp_path, monkeypatch):
    from localjudge.weights import hashes

    load(gguf_path, tmp_path)  # cold: hashed, and remembered in the cache folder
    hashed = []
    real = hashes.sha256_file
    monkeypatch.setattr(hashes, "sha256_file", lambda p: hashed.append(p) or real(p))
    hashes._sha256.cache_clear()  # as in a new process
    assert_same(fingerprint(load(gguf_path, tmp_path)), reference)
    assert hashed == []
    os.utime(gguf_path)  # a new mtime and ctime, the same bytes
    assert_same(fingerprint(load(gguf_path, tmp_path)), reference)
    assert hashed == [gguf_path.resolve()]


def test_a_remembered_hash_that_is_wrong_costs_the_copy_never_the_provenance(gguf_path, reference, tmp_path, caplog):
    """A digest remembered for unchanged metadata but other bytes (a disk fault): the parse hashes the bytes."""
    load(gguf_path, tmp_path)
    (memo,) = [p for p in (tmp_path / "hashes").iterdir() if not p.name.startswith("copy-")]  # the GGUF's
    memo.write_text(json.dumps({**json.loads(memo.read_text()), "sha256": "0" * 64}))
    caplog.set_level(logging.INFO, logger="localjudge")
    assert_same(fingerprint(load(gguf_path, tmp_path)), reference)  # the true sha256 as provenance
    assert "changed without its size, mtime or ctime changing" in caplog.text


def test_a_warm_load_hashes_its_copy_only_when_a_file_changed(gguf_path, reference, tmp_path, monkeypatch):
    from localjudge.weights import cache

    hashed: list[str] = []
    real = cache.xxh3_file
    monkeypatch.setattr(cache, "xxh3_file", lambda p: hashed.append(p.name) or real(p))
    load(gguf_path, tmp_path)  # cold: every file hashed once, as written
    (folder,) = copies(tmp_path)
    files = sorted(p.name for p in folder.iterdir() if p.name != MANIFEST)
    assert sorted(hashed) == files
    hashed.clear()
    assert_same(fingerprint(load(gguf_path, tmp_path)), reference)  # warm: remembered, no byte read
    assert hashed == []
    os.utime(folder / "model.safetensors")  # a new mtime and ctime, the same bytes: hashed once more
    assert_same(fingerprint(load(gguf_path, tmp_path)), reference)
    assert sorted(hashed) == files
    hashed.clear()
    load(gguf_path, tmp_path)
    assert hashed == []


def test_a_copy_is_on_the_disk_before_it_is_renamed_into_place(tmp_path, monkeypatch):
    synced: list[str] = []
    real_fsync, real_rename = os.fsync, os.rename
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(os.readlink(f"/proc/self/fd/{fd}")) or real_fsync(fd))
    renamed: list[list[str]] = []
    monkeypatch.setattr(os, "rename", lambda a, b: renamed.append(list(synced)) or real_rename(a, b))

    def write(folder: Path) -> None:
        (folder / "model.safetensors").write_bytes(b"w" * 100)
        (folder / "config.json").write_text("{}")

    final = store_prepared(CacheKey("ab" * 32, "9.9"), "j.gguf", write, tmp_path)
    (before,) = renamed
    assert {Path(p).name for p in before} >= {"model.safetensors", "config.json", MANIFEST}
    assert any(Path(p).name.startswith(".tmp-") for p in before)  # the folder's own entries too
    assert find_prepared(CacheKey("ab" * 32, "9.9"), tmp_path) == final


def test_cache_verify_hashes_every_byte_and_removes_a_damaged_copy(gguf_path, tmp_path):
    from localjudge.weights.verified import VerifiedCopy, signature

    load(gguf_path, tmp_path)
    (folder,) = copies(tmp_path)
    result = run("cache", "verify", "--cache-dir", tmp_path)
    assert result.exit_code == 0 and "1 copy hashed, 0 damaged" in result.output, result.output
    # a disk fault under unchanged metadata, as loads see it: the remembered version is the damaged file's
    _flip_byte(folder)
    (memo,) = (tmp_path / "hashes").glob("copy-*.json")
    old = VerifiedCopy.model_validate_json(memo.read_text())
    files = dict(old.files)
    files["model.safetensors"] = files["model.safetensors"].model_copy(
        update={"signature": signature(folder / "model.safetensors")}
    )
    memo.write_text(old.model_copy(update={"files": files}).model_dump_json())
    result = run("cache", "verify", "--cache-dir", tmp_path)
    assert result.exit_code == 1, result.output
    assert "model.safetensors does not match its xxh3_128; removed" in result.output
    assert copies(tmp_path) == []


def test_an_interrupted_build_leaves_nothing(tmp_path):
    key = CacheKey("ab" * 32, "9.9")

    def write(folder: Path) -> None:
        (folder / "model.safetensors").write_bytes(b"x" * 100)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        store_prepared(key, "j.gguf", write, tmp_path)
    assert copies(tmp_path) == []


@pytest.mark.parametrize(
    "failure, message",
    [
        (OSError(errno.ENOSPC, "No space left on device"), "no space for a prepared copy"),
        # safetensors reports the OS error only in its message
        (RuntimeError("Error while serializing: I/O error: No space left on device (os error 28)"), "no space"),
        (OSError(errno.EROFS, "Read-only file system"), "read-only or not yours"),
        (OSError(errno.EACCES, "Permission denied"), "read-only or not yours"),
    ],
)
def test_a_failed_write_is_a_cache_error_and_leaves_nothing(tmp_path, failure, message):
    def write(folder: Path) -> None:
        (folder / "model.safetensors").write_bytes(b"x" * 100)
        raise failure

    with pytest.raises(CacheError, match=message) as err:
        store_prepared(CacheKey("ab" * 32, "9.9"), "j.gguf", write, tmp_path, size_hint=3 * 2**20)
    assert "LOCALJUDGE_CACHE" in str(err.value)
    assert copies(tmp_path) == []


def test_a_bug_in_the_writer_is_not_hidden_as_a_cache_error(tmp_path):
    def write(folder: Path) -> None:
        raise ValueError("a bug")

    with pytest.raises(ValueError, match="a bug"):
        store_prepared(CacheKey("ab" * 32, "9.9"), "j.gguf", write, tmp_path)
    assert copies(tmp_path) == []


def _write_marker(text: str):
    def write(folder: Path) -> None:
        (folder / "config.json").write_text(text)

    return write


def test_of_two_builders_the_first_rename_wins(tmp_path):
    key = CacheKey("cd" * 32, "9.9")
    first = store_prepared(key, "j.gguf", _write_marker("first"), tmp_path)
    second = store_prepared(key, "j.gguf", _write_marker("second"), tmp_path)
    assert first == second and (first / "config.json").read_text() == "first"
    assert copies(tmp_path) == [first]  # the loser's temporary folder is gone
    assert find_prepared(key, tmp_path) == first


def test_a_builder_replaces_a_damaged_copy_it_finds_in_place(tmp_path):
    key = CacheKey("cd" * 32, "9.9")
    folder = store_prepared(key, "j.gguf", _write_marker("first"), tmp_path)
    (folder / "config.json").write_text("changed")
    again = store_prepared(key, "j.gguf", _write_marker("second"), tmp_path)
    assert again == folder and (folder / "config.json").read_text() == "second"
    assert find_prepared(key, tmp_path) == folder


def test_copies_left_by_killed_loaders_are_removed_on_the_next_build(tmp_path):
    import socket

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = socket.gethostname()
    weights = tmp_path / "weights"
    stale = weights / f".tmp-k-float32-transformers1.0.{host}.{dead.stdout.strip()}.abc"
    live = weights / f".tmp-k-float32-transformers1.0.{host}.{os.getpid()}.abc"
    trash = weights / ".trash-k.123.ab"
    for folder in (stale, live, trash):
        folder.mkdir(parents=True)
        (folder / "model.safetensors").write_bytes(b"x")
    assert {e.state for e in list_prepared(tmp_path)} == {"incomplete"}
    store_prepared(CacheKey("ef" * 32, "9.9"), "j.gguf", _write_marker("x"), tmp_path)
    assert not stale.exists() and not trash.exists() and live.exists()


# -- where the cache lives; listing and clearing ----------------------------------------------------------


def test_cache_root_follows_the_argument_then_localjudge_cache_then_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("LOCALJUDGE_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "localjudge"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # the XDG spec: relative paths are ignored
    assert cache_root() == tmp_path / "home" / ".cache" / "localjudge"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "localjudge"
    assert steps_dir() == tmp_path / "xdg" / "localjudge" / "steps"
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "lj"))
    assert cache_root() == tmp_path / "lj" and steps_dir() == tmp_path / "lj" / "steps"
    assert cache_root(tmp_path / "arg") == tmp_path / "arg"


def test_load_judge_uses_localjudge_cache_by_default(gguf_path, tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "env"))
    load(gguf_path, True)
    assert len(copies(tmp_path / "env")) == 1


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _older_bf16_copy(folder: Path) -> Path:
    """A per-dtype copy of the first layout (sha256 manifests), of which only the fp32 ones are read."""
    old = folder.with_name(folder.name.replace("float32", "bfloat16"))
    shutil.copytree(folder, old)
    _edit_manifest(old, dtype="bfloat16", format=1)
    return old


def test_cache_list_and_clear_commands(gguf_path, tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path))
    monkeypatch.delenv("LOCALJUDGE_CACHE_LIMIT", raising=False)
    result = run("cache", "list")
    assert result.exit_code == 0 and f"no prepared judges in {tmp_path}" in result.output
    load(gguf_path, tmp_path)
    (folder,) = copies(tmp_path)
    _older_bf16_copy(folder)
    os.truncate(folder / "model.safetensors", 10)
    result = run("cache", "list")
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.output.splitlines() if line.startswith("tiny.gguf")]
    assert sorted((r[1], r[-1]) for r in rows) == [("copy", "damaged"), ("copy", "unused")]
    assert all(r[3:5] in (["0.0", "MiB"], ["0.5", "MiB"], ["0.6", "MiB"]) for r in rows), rows
    assert f"2 in {tmp_path}, " in result.output and "of a 20.0 GiB limit (the default" in result.output
    monkeypatch.setenv("LOCALJUDGE_CACHE_LIMIT", "5GiB")
    assert "of a 5.0 GiB limit (LOCALJUDGE_CACHE_LIMIT)" in run("cache", "list").output
    result = run("cache", "clear")
    assert result.exit_code == 0 and "removed 2 prepared judges" in result.output
    assert copies(tmp_path) == [] and list_prepared(tmp_path) == []
    assert not (tmp_path / "hashes").exists()
    assert clear_prepared(tmp_path) == (0, 0)


def test_cache_commands_take_a_folder(gguf_path, tmp_path):
    load(gguf_path, tmp_path / "other")
    result = run("cache", "list", "--cache-dir", tmp_path / "other")
    assert result.exit_code == 0 and "tiny.gguf" in result.output and "ok" in result.output
    assert "removed 1 prepared judge " in run("cache", "clear", "--cache-dir", tmp_path / "other").output
    assert run("cache", "list", "--cache-dir", tmp_path / "other").output.startswith("no prepared judges")


def test_cache_prepare_writes_the_copy_a_load_then_reads(gguf_path, reference, tmp_path, caplog):
    result = run("cache", "prepare", gguf_path, "--cache-dir", tmp_path)
    assert result.exit_code == 0, result.output
    (folder,) = copies(tmp_path)
    assert result.output.startswith(f"{gguf_path}: prepared copy {folder} (")
    again = run("cache", "prepare", gguf_path, "--cache-dir", tmp_path)  # verified, not written again
    assert again.exit_code == 0 and f"prepared copy {folder}" in again.output and copies(tmp_path) == [folder]
    caplog.set_level(logging.INFO, logger="localjudge")
    assert_same(fingerprint(load(gguf_path, tmp_path)), reference)
    assert any("loaded the prepared copy" in r.getMessage() for r in caplog.records)


def test_cache_prepare_refuses_a_judge_that_is_not_a_gguf(tmp_path):
    (tmp_path / "model").mkdir()
    result = run("cache", "prepare", tmp_path / "model", "--cache-dir", tmp_path / "cache")
    assert result.exit_code == 2 and "is not a GGUF judge" in result.output, result.output
    assert not (tmp_path / "cache").exists()


# -- a cache that cannot be written; concurrent loaders (several processes) -------------------------------


LOAD_AND_SCORE = """
import json
from localjudge import load_judge
judge = load_judge({path!r}, device="cpu", dtype="float32", progress=False)
print(json.dumps([d.valid_mass for d in judge.score_texts({prompts!r}, 0, 10, min_valid_mass=0.0)]))
"""


def _env(**extra: str) -> dict:
    return {**os.environ, "PYTHONPATH": str(REPO), "TRANSFORMERS_VERBOSITY": "error", **extra}


def _can_mount() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(["unshare", "-rm", "true"]).returncode == 0


READ_ONLY_SCRIPT = """
import json, os, subprocess, sys
from localjudge import load_judge
from localjudge.errors import CacheError
from localjudge.weights.cache_list import clear_prepared

full, shared = sys.argv[1:]


def scores(cache):
    judge = load_judge({path!r}, device="cpu", dtype="float32", progress=False, cache=cache)
    return [d.valid_mass for d in judge.score_texts({prompts!r}, 0, 10, min_valid_mass=0.0)]


out = {{"full": scores(full), "left_on_full": os.listdir(os.path.join(full, "weights")), "build": scores(shared)}}
subprocess.run(["mount", "-o", "remount,ro", shared], check=True)  # as a cache shared read-only would be
out["warm_read_only"] = scores(shared)
out["cold_read_only"] = scores(os.path.join(shared, "new"))
try:
    clear_prepared(shared)
except CacheError as exc:
    out["clear"] = str(exc)
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.skipif(not _can_mount(), reason="needs `unshare -rm` (user namespaces) to mount a small tmpfs")
def test_disk_full_or_read_only_cache_warns_once_and_still_loads(gguf_path, reference, tmp_path):
    full, shared = tmp_path / "full", tmp_path / "shared"
    full.mkdir()
    shared.mkdir()
    script = tmp_path / "load.py"
    script.write_text(READ_ONLY_SCRIPT.format(path=str(gguf_path), prompts=PROMPTS))
    # in a private mount namespace: a 64 KiB tmpfs (the copy needs ~500 KiB), and one that gets a copy
    shell = (
        f"mount -t tmpfs -o size=64k tmpfs {full} && mount -t tmpfs tmpfs {shared} && "
        f"{sys.executable} {script} {full} {shared}"
    )
    result = subprocess.run(["unshare", "-rm", "sh", "-c", shell], capture_output=True, text=True, env=_env())
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout)
    for case in ("full", "build", "warm_read_only", "cold_read_only"):
        assert np.array_equal(np.array(out[case]), reference["raw_mass"]), case
    assert out["left_on_full"] == []  # the copy that filled the disk was removed
    warnings = [line for line in result.stderr.splitlines() if "loaded from the GGUF" in line]
    assert len(warnings) == 2, result.stderr[-3000:]  # none for the build, none for the warm read-only load
    assert warnings[0].startswith("no space for a prepared copy of the judge in ")
    assert "read-only or not yours" in warnings[1]
    assert "read-only or not yours" in out["clear"] and "LOCALJUDGE_CACHE" in out["clear"]


@pytest.mark.slow
def test_concurrent_cold_loads_share_one_copy(gguf_path, reference, tmp_path):
    import transformers

    code = LOAD_AND_SCORE.format(path=str(gguf_path), prompts=PROMPTS)
    env = _env(LOCALJUDGE_CACHE=str(tmp_path))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        for _ in range(2)  # two racers are a race; a third cost 5 s of imports
    ]
    outs = [p.communicate() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outs]
    for out, _ in outs:
        assert np.array_equal(np.array(json.loads(out)), reference["raw_mass"])
    (folder,) = copies(tmp_path)  # one copy; no temporary or trash folder left
    key = CacheKey(reference["provenance"].removeprefix("sha256:"), transformers.__version__)
    assert find_prepared(key, tmp_path) == folder
