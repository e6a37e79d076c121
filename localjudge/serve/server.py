"""`JudgeServer`: one loaded judge served over HTTP by uvicorn, in the foreground or on a thread.

Examples:
    >>> from localjudge import load_judge
    >>> from localjudge.serve import JudgeServer, ServeOptions
    >>> server = JudgeServer(load_judge(), ServeOptions(port=0))  # doctest: +SKIP
    >>> server.run()  # serves until Ctrl-C or SIGTERM  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Iterator
from typing import Any

from localjudge.judges.judge import Judge
from localjudge.serve.options import ServeOptions
from localjudge.serve.state import Served
from localjudge.serve.worker import Worker


class JudgeServer:
    """A judge behind `localjudge serve`'s API, its socket bound at construction (so `url` names the port).

    `run` serves in the foreground: Ctrl-C or SIGTERM stops taking connections, lets the requests
    in flight finish, lets the worker finish every queued job, and returns. `start` serves on a
    thread (a notebook, a benchmark); `stop` does the same drain from the caller's thread.
    """

    def __init__(self, judge: Judge, options: ServeOptions):
        import uvicorn

        from localjudge.serve.app import build_app

        self.options = options
        worker = Worker(
            judge,
            max_queue=options.max_queue,
            batch_window_ms=options.batch_window_ms,
            batch_items=options.batch_items,
        )
        self.served = Served(judge, options, worker)
        self.app = build_app(self.served)
        self._socket = _bind(options.host, options.port)
        port = self._socket.getsockname()[1]
        self.url = options.model_copy(update={"port": port}).url
        """Where clients reach it, the port resolved when `options.port` is 0."""
        config = uvicorn.Config(self.app, log_level="warning", access_log=False, timeout_graceful_shutdown=None)
        self._uvicorn = _drained(config)
        self._thread: threading.Thread | None = None

    @property
    def worker(self) -> Worker:
        return self.served.worker

    def run(self) -> None:
        """Serves until Ctrl-C or SIGTERM, then drains (see the class docstring).

        While it serves, the judge's engine keeps `kept_prefixes` shared prefixes between calls; the judge
        keeps what it kept before once the server stops.
        """
        keep = getattr(self.served.judge.backend, "keep_prefixes", None)  # the engine's backend; a fake judge has none
        before = keep(self.options.kept_prefixes) if keep is not None else None
        try:
            self._uvicorn.run(sockets=[self._socket])
        finally:
            if keep is not None:
                keep(before)

    def start(self) -> None:
        """Serves on a thread; returns once the server accepts connections."""
        self._thread = threading.Thread(target=self.run, name="localjudge-serve", daemon=True)
        self._thread.start()
        while not self._uvicorn.started:
            if not self._thread.is_alive():
                raise RuntimeError("the server stopped while starting; see its log")
            self._thread.join(0.01)

    def stop(self) -> None:
        """Stops a server started with `start`, after the requests in flight and the queued jobs."""
        self._uvicorn.should_exit = True
        if self._thread is not None:
            self._thread.join()


def _drained(config: Any) -> Any:
    """A uvicorn server over `config` whose signal handling ends `run` normally after the drain."""
    import uvicorn

    class Drained(uvicorn.Server):
        """uvicorn's server, but a Ctrl-C or SIGTERM that it drained for ends `run` normally.

        uvicorn re-raises the signal once it has shut down, so the process would end as killed (or,
        for Ctrl-C, as an interrupted run); a server that answered everything in flight stopped as asked.
        """

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
                yield
                return
            before = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)

    return Drained(config)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        from localjudge.errors import ConfigError

        raise ConfigError(f"cannot listen on {host}:{port} ({exc.strerror}); pick another --port or --host") from None
    sock.listen(2048)
    return sock
