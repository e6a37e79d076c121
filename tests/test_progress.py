"""Progress output obeys --no-progress and a non-terminal stderr, the model loader's bars included.

`localjudge score` runs in a subprocess on the embedded GGUF judge, whose load draws two bars
of transformers' own ("Converting and de-quantizing GGUF tensors", "Loading weights"). With
stderr a pipe (a log file, CI) nothing may be drawn; on a terminal (a pty) the bars show, and
--no-progress hides them.
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

import pytest

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


def _env() -> dict[str, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    for name in ("HF_HUB_DISABLE_PROGRESS_BARS", "TQDM_DISABLE"):  # the test decides, not the caller's shell
        env.pop(name, None)
    return env


def _stderr_on_a_terminal(args: list[str]) -> str:
    """Runs the command with stderr on a pseudo-terminal; returns what it drew there."""
    master, slave = pty.openpty()
    # a fresh pty is 0 columns wide, and tqdm draws nothing into 0 columns
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    proc = subprocess.Popen(CMD + args, env=_env(), stdout=subprocess.PIPE, stderr=slave)
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


def test_no_bars_when_stderr_is_not_a_terminal():
    run = subprocess.run(CMD, env=_env(), capture_output=True, timeout=300)
    assert run.returncode == 0, run.stderr.decode()
    err = run.stderr.decode()
    assert not BAR.search(err), err
    assert "Judge: smollm2-135m" in err  # the one-line notes stay


def test_no_progress_hides_the_loader_bars_on_a_terminal():
    err = _stderr_on_a_terminal(["--no-progress"])
    assert not BAR.search(err), err
    assert "Judge: smollm2-135m" in err


def test_bars_show_on_a_terminal_by_default():
    """The control: the pty does show transformers' bars, so the tests above could fail.

    "Loading weights" is drawn on every load; the de-quantizing bar only on a cold one (a warm
    load reads the prepared copy in the user cache), so the control does not ask for it.
    """
    err = _stderr_on_a_terminal([])
    assert "Loading weights" in err, err
    assert BAR.search(err), err
