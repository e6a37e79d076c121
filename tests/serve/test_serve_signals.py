"""Ctrl-C and SIGTERM stop a server running in the foreground (`JudgeServer.run`, as `localjudge serve` runs it):
`run` returns normally after the drain, so the process exits 0, not as killed or interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from serving import post

CHILD = """
from localjudge.serve import JudgeServer, ServeOptions
from localjudge.judges.scripted import fake_judge
server = JudgeServer(fake_judge(lambda p: {"3": 0.9}), ServeOptions(port=0))
print(server.url, flush=True)
server.run()
print("returned", flush=True)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_drains_and_run_returns(sig):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True, env=env)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        assert post(url, "/v1/score", {"prompts": ["Score:"], "low": 1, "high": 5}).status == 200
        proc.send_signal(sig)
        assert proc.wait(timeout=60) == 0
        assert proc.stdout.read() == "returned\n"
    finally:
        if proc.poll() is None:
            proc.kill()
