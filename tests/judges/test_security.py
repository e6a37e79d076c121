"""Untrusted models: no remote code, no unpickling and no network unless the user opts in.

- a model repository's own code runs only with `trust_remote_code` set for that model (registry
  entry or flag);
- a checkpoint stored only as pickle (`pytorch_model.bin`) is refused unless `allow_pickle`;
- with HF_HUB_OFFLINE=1 a hub id not in the cache fails clearly, without touching the network;
- the embedded judges load from their installed packages with the network cut off.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import socket
import subprocess
import sys

import pytest
import torch
import transformers
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.errors import ModelUnavailableError, UnsafeModelError
from localjudge.judges.loading import load_judge
from localjudge.judges.registry import availability, load_registry
from localjudge.testing.tiny_models import tiny_llama
from localjudge.weights.chunks import locate_parts
from localjudge.weights.sources import PackageChunksSource, PackageGGUFSource, package_gguf_path

GOOD = json.dumps({"id": "a", "input": "q", "actual_output": "x", "expected_output": "y"}) + "\n"


class _Payload:
    """Unpickling this creates a file: proof that a pickle was (or was not) loaded."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.fixture(scope="module")
def dirs(tmp_path_factory, tiny_tokenizer):
    """Model directories: safetensors, pickle only, pickle only (malicious), both, and remote code."""
    root = tmp_path_factory.mktemp("models")
    model = tiny_llama(tiny_tokenizer)
    model.save_pretrained(root / "safe")
    tiny_tokenizer.save_pretrained(root / "safe")

    pickled = root / "pickled"
    model.config.save_pretrained(pickled)
    tiny_tokenizer.save_pretrained(pickled)
    torch.save(model.state_dict(), pickled / "pytorch_model.bin")

    evil = root / "evil_pickle"
    shutil.copytree(pickled, evil)
    with open(evil / "pytorch_model.bin", "wb") as f:
        pickle.dump(_Payload(root / "unpickled.marker"), f)

    mixed = root / "mixed"
    shutil.copytree(root / "safe", mixed)
    shutil.copy(evil / "pytorch_model.bin", mixed / "pytorch_model.bin")

    remote = root / "remote_code"
    shutil.copytree(root / "safe", remote)
    cfg = json.loads((remote / "config.json").read_text())
    cfg.update(
        model_type="evilmodel",
        auto_map={"AutoConfig": "configuration_evil.EvilConfig", "AutoModelForCausalLM": "modeling_evil.EvilModel"},
    )
    (remote / "config.json").write_text(json.dumps(cfg))
    code = (
        f"import pathlib\npathlib.Path({str(root / 'remote.marker')!r}).write_text('ran')\n"
        "from transformers import PretrainedConfig\n\n"
        "class EvilConfig(PretrainedConfig):\n    model_type = 'evilmodel'\n"
    )
    (remote / "configuration_evil.py").write_text(code)
    (remote / "modeling_evil.py").write_text(code)
    return root


@pytest.fixture
def no_network(monkeypatch):
    """Cuts every socket off; returns the list of attempted connections."""
    attempts: list[tuple] = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("network access attempted in an offline test")

    for name in ("create_connection", "getaddrinfo"):
        monkeypatch.setattr(socket, name, refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return attempts


def _cli(*args):
    return CliRunner().invoke(main, list(args))


def _error_line(result) -> str:
    (line,) = [x for x in result.output.splitlines() if x.startswith("Error:")]
    assert "Traceback" not in result.output
    return line


# -- trust_remote_code ---------------------------------------------------------------------------------


@pytest.fixture
def spy(monkeypatch):
    """Records the kwargs transformers is called with, then stops the load (OSError)."""
    seen: dict[str, dict] = {}

    def tokenizer(*args, **kwargs):
        seen["tokenizer"] = kwargs
        return object()

    def model(*args, **kwargs):
        seen["model"] = kwargs
        raise OSError("stopped by the test")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", tokenizer)
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", model)
    return seen


def _registry(tmp_path, path, trust: bool | None) -> str:
    flag = "" if trust is None else f", trust_remote_code: {str(trust).lower()}"
    f = tmp_path / "models.yaml"
    f.write_text(
        f"default: j\njudges:\n - {{name: j, family: t, source: {{kind: local_dir, path: '{path}'}}, "
        f"context_length: 512{flag}}}\n"
    )
    return str(f)


@pytest.mark.parametrize(
    "entry, flag, expected",
    [
        (None, None, False),  # default: off
        (False, None, False),
        (True, None, True),  # enabled for this model in the registry
        (None, True, True),  # enabled by the flag
        (True, False, False),  # the caller can still refuse
    ],
)
def test_trust_remote_code_only_when_enabled(dirs, tmp_path, spy, entry, flag, expected):
    reg = _registry(tmp_path, dirs / "safe", entry)
    with pytest.raises(ModelUnavailableError):
        load_judge("j", device="cpu", trust_remote_code=flag, registry_path=reg)
    assert spy["tokenizer"]["trust_remote_code"] is expected
    assert spy["model"]["trust_remote_code"] is expected


@pytest.mark.parametrize("name", ["safe", "hub"])
def test_paths_and_hub_ids_never_trust_by_default(dirs, spy, monkeypatch, no_network, name):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailableError):
        load_judge(str(dirs / "safe") if name == "safe" else "some-org/some-model", device="cpu")
    assert spy["model"]["trust_remote_code"] is False
    assert spy["model"]["use_safetensors"] is True


@pytest.mark.parametrize("flag", [[], ["--trust-remote-code"]])
def test_cli_trust_remote_code_flag(dirs, tmp_path, spy, monkeypatch, flag):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.jsonl").write_text(GOOD)
    result = _cli("eval", "d.jsonl", "--metric", "correctness", "--judge", str(dirs / "safe"), *flag)
    assert result.exit_code == 2
    assert spy["model"]["trust_remote_code"] is bool(flag)


def test_remote_code_does_not_run_without_opt_in(dirs):
    marker = dirs / "remote.marker"
    with pytest.raises(UnsafeModelError, match="--trust-remote-code"):
        load_judge(str(dirs / "remote_code"), device="cpu")
    assert not marker.exists()


def test_remote_code_cli_exit_2(dirs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.jsonl").write_text(GOOD)
    result = _cli("eval", "d.jsonl", "--metric", "correctness", "--judge", str(dirs / "remote_code"))
    assert result.exit_code == 2
    assert "--trust-remote-code" in _error_line(result)
    assert not (dirs / "remote.marker").exists()


# -- pickle checkpoints -------------------------------------------------------------------------------


def test_pickle_only_dir_refused_by_default(dirs):
    with pytest.raises(UnsafeModelError, match=r"pytorch_model\.bin.*--allow-pickle"):
        load_judge(str(dirs / "pickled"), device="cpu")


def test_malicious_pickle_is_never_opened(dirs):
    with pytest.raises(UnsafeModelError):
        load_judge(str(dirs / "evil_pickle"), device="cpu")
    judge = load_judge(str(dirs / "mixed"), device="cpu")  # safetensors beside it: those are used
    assert judge.score_texts(["Score:"], 1, 5)[0].valid_mass > 0
    assert not (dirs / "unpickled.marker").exists()


def test_pickle_accepted_with_allow_pickle(dirs):
    safe = load_judge(str(dirs / "safe"), device="cpu").score_texts(["the answer is good. Score:"], 1, 5)[0]
    judge = load_judge(str(dirs / "pickled"), device="cpu", allow_pickle=True)
    got = judge.score_texts(["the answer is good. Score:"], 1, 5)[0]
    assert got.probs == pytest.approx(safe.probs, abs=1e-6)  # the same weights


def test_pickle_cli(dirs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))
    (tmp_path / "d.jsonl").write_text(GOOD)
    args = ["eval", "d.jsonl", "--metric", "correctness", "--judge", str(dirs / "pickled"), "--device", "cpu"]
    refused = _cli(*args)
    assert refused.exit_code == 2
    line = _error_line(refused)
    assert "pytorch_model.bin" in line and "--allow-pickle" in line
    accepted = _cli(*args, "--allow-pickle", "--out", "r.jsonl")
    assert accepted.exit_code == 0, accepted.output
    assert json.loads((tmp_path / "r.jsonl").read_text())["case_id"] == "a"


# -- offline hub ----------------------------------------------------------------------------------------

# The CLI in a fresh process with every socket cut off; HF_HUB_OFFLINE and an empty HF_HOME are set
# before anything is imported, as a user's shell would. huggingface_hub reads HF_HUB_OFFLINE once, at
# import: set later in a running process it does not stop the hub client's own requests.
GUARDED_CLI = """
import atexit, socket, sys
attempts = []
def refuse(*args, **kwargs):
    attempts.append(args)
    raise OSError("network access attempted")
socket.create_connection = socket.getaddrinfo = refuse
socket.socket.connect = socket.socket.connect_ex = refuse
atexit.register(lambda: sys.stderr.write(f"NETWORK ATTEMPTS: {len(attempts)}\\n"))
from localjudge.cli import main
main(sys.argv[1:])
"""


def _offline_cli(tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "LOCALJUDGE_CACHE": str(tmp_path / "cache"),
    }
    return subprocess.run(
        [sys.executable, "-c", GUARDED_CLI, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )


def test_offline_hub_id_not_cached(tmp_path):
    (tmp_path / "d.jsonl").write_text(GOOD)
    run = _offline_cli(
        tmp_path,
        "eval",
        "d.jsonl",
        "--metric",
        "correctness",
        "--device",
        "cpu",
        "--judge",
        "localjudge-test/no-such-model",
    )
    assert run.returncode == 2, run.stderr
    (line,) = [x for x in run.stderr.splitlines() if x.startswith("Error:")]
    assert "localjudge-test/no-such-model" in line and "not in the local cache" in line
    assert "HF_HUB_OFFLINE" in line and "hf download localjudge-test/no-such-model --revision main" in line
    assert "Traceback" not in run.stderr
    assert "NETWORK ATTEMPTS: 0" in run.stderr


def test_offline_registry_hub_entry(tmp_path):
    (tmp_path / "d.jsonl").write_text(GOOD)
    (tmp_path / "models.yaml").write_text(
        "default: h\njudges:\n - {name: h, family: t, source: {kind: hub, repo: localjudge-test/absent, "
        "revision: 0123456789abcdef0123456789abcdef01234567}, context_length: 512}\n"
    )
    run = _offline_cli(
        tmp_path, "eval", "d.jsonl", "--metric", "correctness", "--registry", "models.yaml", "--device", "cpu"
    )
    assert run.returncode == 2, run.stderr
    (line,) = [x for x in run.stderr.splitlines() if x.startswith("Error:")]
    assert "localjudge-test/absent" in line and "HF_HUB_OFFLINE" in line
    assert "NETWORK ATTEMPTS: 0" in run.stderr


def test_offline_python_api_names_the_fix(monkeypatch):
    """In-process: the same clear error (this process's sockets are not guarded; see GUARDED_CLI)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailableError, match=r"not in the local cache.*HF_HUB_OFFLINE") as err:
        load_judge("localjudge-test/no-such-model", device="cpu")
    assert "hf download localjudge-test/no-such-model --revision main" in str(err.value)


# -- embedded judges ------------------------------------------------------------------------------------

EMBEDDED = [j for j in load_registry().judges if j.name in ("smollm2-135m", "gemma3-270m")]


def test_both_families_are_embedded():
    assert {j.family for j in EMBEDDED} >= {"smollm", "gemma"}
    assert all(isinstance(j.source, (PackageGGUFSource, PackageChunksSource)) for j in EMBEDDED)


@pytest.mark.parametrize("entry", EMBEDDED, ids=lambda j: j.name)
def test_embedded_weights_come_from_installed_packages(entry, no_network):
    assert availability(entry) == "yes"
    src = entry.source
    # found by their packages' folders, never imported: a GGUF in one package, or the chunks of one
    files = locate_parts(src, entry.name) if isinstance(src, PackageChunksSource) else [package_gguf_path(src)]
    assert all(f.is_file() for f in files) and sum(f.stat().st_size for f in files) > 50 * 2**20
    assert no_network == []


@pytest.mark.slow
@pytest.mark.parametrize("entry", EMBEDDED, ids=lambda j: j.name)
def test_embedded_judges_load_and_score_offline(entry, monkeypatch, no_network):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)  # no help from the offline switch either
    judge = load_judge(entry.name, device="cpu", dtype="float32")
    d = judge.score_texts([judge.render("", "Rate 2+2=4 from 1 to 5.", "Score:")], 1, 5)[0]
    assert d.valid_mass > 0
    assert no_network == []
