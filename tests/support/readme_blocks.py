"""The README's shell and Python blocks, in order, and a runner that runs them as a reader would.

A block runs as it is written, in one temporary folder shared by all the blocks, unless the HTML
comment right above its fence says otherwise:

- `<!-- readme-test: fake ... -->`: every judge load answers with the scripted fake judge
  (tests/support/readme_fake.py), where a real judge would take minutes; the commands, files and
  Python names are still the README's.
- `<!-- readme-test: skip: REASON -->`: not run here (installs, a GPU, the whole suite); the reason
  is required and says where it is run instead.
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


def environment(folder: Path) -> dict[str, str]:
    """A reader's environment, kept inside `folder`: caches, no network for models, this checkout first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOCALJUDGE_", "PYTEST_"))}
    env.update(
        PYTHONPATH=os.pathsep.join([str(ROOT), str(SUPPORT)]),
        LOCALJUDGE_CACHE=str(folder / "cache"),
        XDG_CACHE_HOME=str(folder / "xdg"),
        HF_HUB_OFFLINE="1",
        DEEPEVAL_TELEMETRY_OPT_OUT="1",
        INSPECT_LOG_DIR=str(folder / "logs"),
    )
    return env


def prepare(folder: Path) -> None:
    """The folder a reader would be in: a clone's bundled examples are where the README names them."""
    shutil.copytree(ROOT / "localjudge" / "examples", folder / "localjudge" / "examples")


def run_block(block: Block, folder: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Runs one block in `folder` (bash with -e and pipefail; python as a script)."""
    env = environment(folder)
    fake = block.mode == "fake"
    env["PATH"] = os.pathsep.join([str(_bin(folder, fake)), env.get("PATH", "")])
    if block.lang == "bash":
        command = ["bash", "-e", "-o", "pipefail", "-c", block.code]
    else:
        script = folder / f"readme_block_{block.line}.py"
        script.write_text(block.code, encoding="utf-8")
        command = [sys.executable, *(["-m", "readme_fake", "--python"] if fake else []), str(script)]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)


def first_failure(text: str, folder: Path) -> str | None:
    """Runs the text's blocks in order in `folder`; None, or where and how the first one failed."""
    prepare(folder)
    for block in blocks(text):
        if block.mode == "skip":
            continue
        done = run_block(block, folder)
        if done.returncode != 0:
            output = (done.stdout + done.stderr)[-3000:]
            return f"README.md:{block.line} ({block.lang}, {block.mode}) exited {done.returncode}:\n{output}"
    return None
