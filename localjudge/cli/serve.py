"""`localjudge serve`: one loaded judge for many clients over HTTP (the native and OpenAI-compatible APIs)."""

from __future__ import annotations

import logging

import click

from localjudge.cli.options import SectionedCommand, judge_options, load_from_options


@click.command("serve", cls=SectionedCommand)
@click.option("--host", default="127.0.0.1", help="Address to listen on; any but loopback needs --api-key.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, help="TCP port; 0 picks a free one.")
@click.option(
    "--api-key",
    envvar="LOCALJUDGE_API_KEY",
    default=None,
    show_default=False,
    help="Key every endpoint but /health asks for, as 'Authorization: Bearer KEY' (8 characters or more); "
    "also read from LOCALJUDGE_API_KEY, which keeps it out of the process list.",
)
@click.option(
    "--max-queue", type=click.IntRange(min=1), default=None, help="Requests queued at once; past it: 503. [default: 64]"
)
@click.option(
    "--batch-window-ms",
    type=click.FloatRange(0, 1000),
    default=None,
    help="How long the worker waits after the latest request before one engine call runs them. [default: 5]",
)
@click.option("--no-progress", is_flag=True, help="Hide the loader's progress bars.")
@judge_options
def serve_cmd(host, port, api_key, max_queue, batch_window_ms, no_progress, **judge_kw) -> None:
    """Serve one judge over HTTP: /v1/evaluate, /v1/score, OpenAI-compatible completions (docs/serve.md)."""
    from localjudge.errors import MissingExtraError, install_command

    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError.of("localjudge serve", "FastAPI and uvicorn", exc, install_command("serve")) from None
    from localjudge.serve import JudgeServer, ServeOptions

    given = {"max_queue": max_queue, "batch_window_ms": batch_window_ms}
    # every refusal (a public host without a key) comes before the (slow) load
    options = ServeOptions(host=host, port=port, api_key=api_key, **{k: v for k, v in given.items() if v is not None})
    judge = load_from_options(**judge_kw, progress=not no_progress)
    server = JudgeServer(judge, options)
    logging.getLogger("localjudge.serve").setLevel(logging.INFO)  # one line per request
    key = ", key required" if options.api_key else ""
    click.echo(f"Serving judge {judge.info.name} at {server.url}{key} (Ctrl-C stops after the requests in flight)")
    server.run()
    click.echo("Stopped: every request in flight was answered.", err=True)
