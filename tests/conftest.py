"""Shared fixtures: the embedded judges (loaded once per session) and a tiny trained tokenizer.

Two tiers. `make test-fast` (`pytest -m "not slow"`) runs the unit tests: hand-built vocabularies
and logits, the scripted fake judge, and tiny random-initialised transformers models built in
memory. Tests that load a real judge's weights or run several processes carry the `slow` marker;
the embedded-judge fixtures refuse a test without it, so the fast tier cannot grow a model load.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# DeepEval's telemetry stays off in this suite whichever module imports deepeval first (its import
# also creates ./.deepeval when telemetry is on); the tests of the adapter's own opt-out drop it
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")

OFFLINE_SITE = """
import atexit, os, socket
tried = []
def refuse(*args, **kwargs):
    tried.append(repr(args[:2]))
    raise OSError("no network in this test")
socket.socket.connect = socket.socket.connect_ex = refuse
socket.getaddrinfo = socket.create_connection = refuse
atexit.register(lambda: open(os.environ["NETWORK_ATTEMPTS"], "w").write("\\n".join(tried)))
"""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: loads a real (embedded) judge or runs several processes; minutes on CPU")
    # deepeval registers a pytest plugin, so pytest marks its ~700 modules for assertion rewriting (it
    # does so for every plugin distribution, even one disabled by `-p no:deepeval`, as this suite's is):
    # the first import of deepeval then rewrote and compiled them all, 7 s of each worker's start-up
    hook = getattr(config.pluginmanager, "rewrite_hook", None)
    must_rewrite = getattr(hook, "_must_rewrite", None)
    if isinstance(must_rewrite, set) and not config.pluginmanager.has_plugin("deepeval"):
        must_rewrite.discard("deepeval")
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers and "OMP_NUM_THREADS" not in os.environ:
        # `make test` runs two pytest-xdist workers: each takes its share of the cores (torch reads this
        # when it is first imported, and the worker's subprocesses inherit it), not all of them each
        os.environ["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // int(workers)))


@pytest.fixture
def no_load(localjudge_scripted, monkeypatch, tmp_path):
    """Fails the test if any command loads a model (an empty table of scripted judges answers every
    load with `UnscriptedLoad`); the test runs in tmp_path with its own cache."""
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def offline_env(tmp_path) -> dict[str, str]:
    """The environment of a subprocess that cannot reach the network: a sitecustomize refuses every
    connection and DNS lookup from the interpreter's start and lists them in tmp_path/attempts.txt
    at exit. localjudge is imported from this checkout."""
    site = tmp_path / "offline-site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(OFFLINE_SITE, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "DEEPEVAL_TELEMETRY_OPT_OUT"}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(Path(__file__).resolve().parents[1])])
    env["NETWORK_ATTEMPTS"] = str(tmp_path / "attempts.txt")
    env["DEEPEVAL_HOME"] = str(tmp_path / "deepeval-home")  # DeepEval's own state, telemetry id included
    return env


REAL_JUDGES = ("smollm_judge", "gemma_judge", "qwen_judge")


HEAVY_JUDGES = ("gemma_judge", "qwen_judge")
"""The judges that cost the most to load in a worker (Qwen 0.5B from its GGUF, ~35 s; Gemma with its
262k-token head, ~25 s to the first score)."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuses a test that uses a real judge (even through another fixture) without `slow`; then
    orders the files for `make test`'s workers (`--dist loadfile --no-loadscope-reorder`).

    Each worker takes a whole file at a time (module-scoped fixtures, e.g. a reference run or a Ray
    cluster, are set up once; Qwen's tests, one file, load it once). Files that use a heavy judge
    come first, then the other files with slow tests, then the unit tests, so that the last minutes
    are short tests that both workers share, not one long file while the other worker waits.
    """
    unmarked = [
        item.nodeid
        for item in items
        if set(REAL_JUDGES) & set(getattr(item, "fixturenames", ())) and item.get_closest_marker("slow") is None
    ]
    if unmarked:
        raise pytest.UsageError(
            "these tests load a real judge but are not marked @pytest.mark.slow: " + ", ".join(unmarked)
        )

    def file(item: pytest.Item) -> str:
        return item.nodeid.split("::")[0]

    heavy = {file(item) for item in items if set(HEAVY_JUDGES) & set(getattr(item, "fixturenames", ()))}
    slow = {file(item) for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: 0 if file(item) in heavy else 1 if file(item) in slow else 2)  # stable


@pytest.fixture(scope="session")
def smollm_judge():
    """The embedded SmolLM2-135M-Instruct judge, fp32 on CPU (~25 s to load)."""
    from localjudge import load_judge

    return load_judge("smollm2-135m", device="cpu", dtype="float32")


@pytest.fixture(scope="session")
def qwen_judge():
    """The embedded Qwen2.5-Coder-0.5B-Instruct judge, loaded by registry name, fp32 on CPU, from its GGUF (~40 s).

    No prepared copy is written (`cache=False`): one worker loads this judge once per run, while the
    other runs tests; writing its 2 GB copy during `make test`'s set-up took ~80 s of it for ~35 s saved here.
    """
    from localjudge import load_judge

    return load_judge("qwen2.5-coder-0.5b", device="cpu", dtype="float32", cache=False)


@pytest.fixture(scope="session")
def gemma_judge():
    """The embedded Gemma 3 270M base judge, fp32 on CPU (~75 s to load)."""
    from localjudge import load_judge

    return load_judge("gemma3-270m", device="cpu", dtype="float32")


@pytest.fixture(scope="module")
def torch_one_thread():
    """Runs a module's tests with one torch thread, then restores the setting.

    Small forwards (tiny models, a few short prompts) are per-op overhead; a second thread only
    spins, and on a shared 2-core machine that made them 5-10x slower in CPU and wall time.
    Use with `pytestmark = pytest.mark.usefixtures("torch_one_thread")`.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def tiny_tokenizer():
    """A byte-level BPE tokenizer trained on the fly (digits not split), shared by the session."""
    from localjudge.testing.tiny_tokenizer import build_tiny_tokenizer

    return build_tiny_tokenizer()


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory, tiny_tokenizer):
    """A folder holding a tiny random Llama and its tokenizer, as a user's model directory (one per module)."""
    from localjudge.testing.tiny_models import tiny_llama

    folder = tmp_path_factory.mktemp("tiny-model")
    tiny_llama(tiny_tokenizer).save_pretrained(folder)
    tiny_tokenizer.save_pretrained(folder)
    return folder
