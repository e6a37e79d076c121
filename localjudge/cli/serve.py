"""`localjudge serve`: one loaded judge for many clients over HTTP (the native and OpenAI-compatible APIs)."""

from __future__ import annotations

import logging

import click

from localjudge.cli.flags import Flag, settings_flags
from localjudge.cli.options import SectionedCommand, judge_options, load_from_options
from localjudge.serve.options import ServeOptions

# today's help where the field's description speaks of the Python API
_SERVE_HELP = {
    "host": "Address to listen on; any but loopback needs --api-key.",
    "api_key": "Key every endpoint but /health asks for, as 'Authorization: Bearer KEY' (8 characters or more); "
    "also read from LOCALJUDGE_API_KEY, which keeps it out of the process list.",
    "max_queue": "Requests queued at once; past it: 503.",
    "batch_window_ms": "How long the worker waits after the latest request before one engine call runs them.",
}
_SERVE_FLAGS = {"api_key": Flag(envvar="LOCALJUDGE_API_KEY")}


@click.command("serve", cls=SectionedCommand)
@settings_flags(ServeOptions, "options", help_text=_SERVE_HELP, flags=_SERVE_FLAGS)
@click.option("--no-progress", is_flag=True, help="Hide the loader's progress bars.")
@judge_options
def serve_cmd(options: ServeOptions, no_progress, **judge_kw) -> None:
    """Serve one judge over HTTP: /v1/evaluate, /v1/score, OpenAI-compatible completions (docs/serve.md)."""
    from localjudge.errors import MissingExtraError, install_command

    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError.of("localjudge serve", "FastAPI and uvicorn", exc, install_command("serve")) from None
    from localjudge.serve import JudgeServer

    # every refusal (a public host without a key) came with the flags, before the (slow) load
    judge = load_from_options(**judge_kw, progress=not no_progress)
    server = JudgeServer(judge, options)
    logging.getLogger("localjudge.serve").setLevel(logging.INFO)  # one line per request
    key = ", key required" if options.api_key else ""
    click.echo(f"Serving judge {judge.info.name} at {server.url}{key} (Ctrl-C stops after the requests in flight)")
    server.run()
    click.echo("Stopped: every request in flight was answered.", err=True)
