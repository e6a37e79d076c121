"""Progress output obeys --no-progress and a non-terminal stderr, the model loader's bars included.

`localjudge score` runs in a subprocess on a judge loaded from a local model directory (a tiny
random Llama saved with `save_pretrained`), whose load draws transformers' own "Loading weights"
bar, as every load does (the embedded GGUF judges' warm loads included; a cold GGUF load adds a
"Converting and de-quantizing GGUF tensors" bar, which goes through the same switch). With stderr a
pipe (a log file, CI) nothing may be drawn; on a terminal (a pty) the bars show, and --no-progress
hides them.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from localjudge.testing.tiny_models import tiny_llama

pytestmark = pytest.mark.slow

CMD = [
    sys.executable,
    "-m",
    "localjudge",
    "score",
    "--low",
    "1",
    "--high",
    "5",
    "--device",
    "cpu",
    "Rate the answer 'Paris is the capital of France' from 1 to 5. Score:",
]
# a bar redraws its line with a bare "\r" (a pty turns each "\n" into "\r\n")
BAR = re.compile(r"\r(?!\n)|it/s|s/it|Loading weights|de-quantizing|\d+/\d+ \[")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, tiny_tokenizer) -> Path:
    """A judge as a local model directory: safetensors weights, config and tokenizer (loads in a second)."""
    where = tmp_path_factory.mktemp("progress") / "model"
    tiny_llama(tiny_tokenizer).save_pretrained(where)
    tiny_tokenizer.save_pretrained(where)
    return where


def _env() -> dict[str, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    for name in ("HF_HUB_DISABLE_PROGRESS_BARS", "TQDM_DISABLE"):  # the test decides, not the caller's shell
        env.pop(name, None)
    return env


def _stderr_on_a_terminal(model: Path, args: list[str]) -> str:
    """Runs the command on the judge in `model` with stderr on a pseudo-terminal; returns what it drew there."""
    master, slave = pty.openpty()
    # a fresh pty is 0 columns wide, and tqdm draws nothing into 0 columns
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    proc = subprocess.Popen(CMD + ["--judge", str(model), *args], env=_env(), stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed its end
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=300)
    os.close(master)
    assert proc.returncode == 0, b"".join(chunks).decode(errors="replace")
    return b"".join(chunks).decode(errors="replace")


def test_no_bars_when_stderr_is_not_a_terminal(model_dir):
    run = subprocess.run(CMD + ["--judge", str(model_dir)], env=_env(), capture_output=True, timeout=300)
    assert run.returncode == 0, run.stderr.decode()
    err = run.stderr.decode()
    assert not BAR.search(err), err
    assert f"Judge: {model_dir} [" in err  # the one-line notes stay


def test_no_progress_hides_the_loader_bars_on_a_terminal(model_dir):
    err = _stderr_on_a_terminal(model_dir, ["--no-progress"])
    assert not BAR.search(err), err
    assert f"Judge: {model_dir} [" in err


def test_bars_show_on_a_terminal_by_default(model_dir):
    """The control: the pty does show transformers' bars, so the tests above could fail.

    "Loading weights" is drawn on every load.
    """
    err = _stderr_on_a_terminal(model_dir, [])
    assert "Loading weights" in err, err
    assert BAR.search(err), err
