"""The README's shell and Python blocks, in order, and a runner that runs them as a reader would.

A block runs as it is written, in one temporary folder shared by all the blocks, unless the HTML
comment right above its fence says otherwise:

- `<!-- readme-test: fake ... -->`: every judge load answers with the scripted fake judge
  (tests/support/readme_fake.py), where a real judge would take minutes or is not installed by
  `make test`; the commands, files and Python names are still the README's.
- `<!-- readme-test: skip: REASON -->`: not run here (installs, a GPU, the whole suite); the reason
  is required and says where it is run instead.

A Python block that defines test functions runs under pytest, as a reader runs it (with the
`--localjudge-judge NAME` its `# pytest ...` comment names). Blocks that run with real judges read
the prepared copies of the cache `make test` filled. Every judge a block names must be installed
before it, as a reader would have it: by the quick start's `make` targets (the judges the Makefile
installs for them), or by an earlier `localjudge models --install` block; a skipped install block
counts only for a judge `make test` installs anyway.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = Path(__file__).resolve().parent
MARK = re.compile(r"<!-- readme-test: (fake|skip)\b:?\s*(.*?)\s*-->")
PYTEST_JUDGE = re.compile(r"#\s*pytest\b.*--localjudge-judge[ =](\S+)")
# where a block names a judge: options, the Python API, `localjudge inspect NAME`
JUDGE_NAMED = re.compile(
    r"""(?:--judge|--model|--localjudge-judge)[ =]['"]?([\w.-]+)|load_judge\(\s*['"]([\w.-]+)['"]"""
    r"""|\bjudge=['"]([\w.-]+)['"]|localjudge inspect ([\w.-]+)"""
)
INSTALLED = re.compile(r"localjudge models((?: --install [\w.-]+)+)")
# what each make target of the quick start installs, by the Makefile's variables
MAKE_TARGETS = {"demo": ("DEFAULT_JUDGES",), "install": ("DEFAULT_JUDGES",), "test": ("DEFAULT_JUDGES", "TEST_JUDGES")}
MAKE_TARGETS["judges-qwen"] = ("DEFAULT_JUDGES", "QWEN_JUDGES")


@dataclass(frozen=True)
class Block:
    """One fenced block: its language, code, first line in the file and how the test runs it."""

    lang: str
    code: str
    line: int
    mode: str  # "run", "fake" or "skip"
    reason: str


def blocks(text: str) -> list[Block]:
    """Every bash and python block of a markdown text, in order."""
    found, lines, k = [], text.splitlines(), 0
    while k < len(lines):
        if lines[k].startswith("```"):
            lang, start, body = lines[k][3:].strip(), k + 1, []
            k += 1
            while k < len(lines) and not lines[k].startswith("```"):
                body.append(lines[k])
                k += 1
            mark = MARK.fullmatch(lines[start - 2].strip()) if start >= 2 else None
            mode, reason = (mark.group(1), mark.group(2)) if mark else ("run", "")
            if lang in ("bash", "python"):
                found.append(Block(lang, "\n".join(body) + "\n", start + 1, mode, reason))
        k += 1
    return found


def _bin(folder: Path, fake: bool) -> Path:
    """A folder with a `localjudge` command: this interpreter's, real or with the fake judge."""
    where = folder / ("bin-fake" if fake else "bin")
    where.mkdir(exist_ok=True)
    command = where / "localjudge"
    module = "readme_fake" if fake else "localjudge"
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m {module} "$@"\n', encoding="utf-8")
    command.chmod(0o755)
    return where


def environment(folder: Path, real: bool = False) -> dict[str, str]:
    """A reader's environment, kept inside `folder`: caches, no network for models, this checkout first.

    With `real` (a block run with real judges) the localjudge cache is the one `make test` filled,
    so that a judge loads its prepared copy as on the reader's machine instead of preparing one here.
    """
    from localjudge.weights.cache import cache_root

    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOCALJUDGE_", "PYTEST_"))}
    env.update(
        PYTHONPATH=os.pathsep.join([str(ROOT), str(SUPPORT), *filter(None, [os.environ.get("PYTHONPATH")])]),
        LOCALJUDGE_CACHE=str(cache_root() if real else folder / "cache"),
        XDG_CACHE_HOME=str(folder / "xdg"),
        HF_HUB_OFFLINE="1",
        DEEPEVAL_TELEMETRY_OPT_OUT="1",
        INSPECT_LOG_DIR=str(folder / "logs"),
    )
    return env


def prepare(folder: Path) -> None:
    """The folder a reader would be in: a clone's bundled examples are where the README names them."""
    shutil.copytree(ROOT / "localjudge" / "examples", folder / "localjudge" / "examples")


def is_pytest(block: Block) -> bool:
    """A Python block that defines test functions: the reader runs it with pytest."""
    return block.lang == "python" and re.search(r"^def test_\w+\(", block.code, re.M) is not None


def run_block(block: Block, folder: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Runs one block in `folder` (bash with -e and pipefail; python as a script, or under pytest)."""
    fake = block.mode == "fake"
    env = environment(folder, real=not fake)
    env["PATH"] = os.pathsep.join([str(_bin(folder, fake)), env.get("PATH", "")])
    if block.lang == "bash":
        command = ["bash", "-e", "-o", "pipefail", "-c", block.code]
    elif is_pytest(block):
        script = folder / f"test_readme_block_{block.line}.py"
        script.write_text(block.code, encoding="utf-8")
        named = PYTEST_JUDGE.search(block.code)
        judge = ["--localjudge-judge", named.group(1)] if named else []
        # deepeval's pytest plugin (installed here for the DeepEval tests, not by a README reader) keeps a
        # finished session alive for minutes at exit
        pytest = ["-q", "-p", "no:cacheprovider", "-p", "no:deepeval", str(script), *judge]
        command = [sys.executable, "-m", *(["readme_fake", "--pytest"] if fake else ["pytest"]), *pytest]
    else:
        script = folder / f"readme_block_{block.line}.py"
        script.write_text(block.code, encoding="utf-8")
        command = [sys.executable, *(["-m", "readme_fake", "--python"] if fake else []), str(script)]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)


def make_variables() -> dict[str, list[str]]:
    """The Makefile's judge lists (`DEFAULT_JUDGES ?= a b`), by name."""
    found = re.findall(r"^(\w+_JUDGES) \?= (.*)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    return {name: value.split() for name, value in found}


def judges_named(code: str) -> set[str]:
    """Registry judges a block uses (paths, hub ids and scripted names are not registry names)."""
    from localjudge.judges.registry import load_registry

    names = {j.name for j in load_registry().judges}
    return {n for match in JUDGE_NAMED.findall(code) for n in match if n in names}


def installed_by(block: Block, make: dict[str, list[str]]) -> set[str]:
    """Judges a reader has once this block ran: its `make` targets' and `models --install`'s."""
    targets = re.findall(r"^\s*make ([\w-]+)", block.code, re.M)
    by_make = {j for t in targets for var in MAKE_TARGETS.get(t, ()) for j in make.get(var, [])}
    installs = {n for group in INSTALLED.findall(block.code) for n in group.split() if n != "--install"}
    if block.mode == "skip":  # not run here: counts where `make test` installs the same judge
        installs &= set(make["DEFAULT_JUDGES"]) | set(make["TEST_JUDGES"])
    return by_make | installs


def uninstalled_judge(text: str) -> str | None:
    """Where a block first uses a judge that no earlier block nor the quick start installed, or None."""
    make, have = make_variables(), set()
    for block in blocks(text):
        if block.mode != "skip":
            missing = sorted(judges_named(block.code) - have)
            if missing:
                return (
                    f"README.md:{block.line} ({block.lang}, {block.mode}) uses the judge {missing[0]}, which neither "
                    f"an earlier block nor the quick start installs; install it first "
                    f"(`localjudge models --install {missing[0]}`)"
                )
        have |= installed_by(block, make)
    return None


def first_failure(text: str, folder: Path, outputs: dict[int, str] | None = None) -> str | None:
    """Runs the text's blocks in order in `folder`; None, or where and how the first one failed.

    A block that uses a judge the reader has not installed by then fails before any block runs.
    """
    missing = uninstalled_judge(text)
    if missing is not None:
        return missing
    prepare(folder)
    for block in blocks(text):
        if block.mode == "skip":
            continue
        done = run_block(block, folder)
        if outputs is not None:  # each block's standard output, by its first line
            outputs[block.line] = done.stdout
        if done.returncode != 0:
            output = (done.stdout + done.stderr)[-3000:]
            return f"README.md:{block.line} ({block.lang}, {block.mode}) exited {done.returncode}:\n{output}"
    return None
