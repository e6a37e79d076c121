"""The `localjudge` command line. Errors become one-line messages: exit 2 for user errors, 1 otherwise.

`main` is the click group behind the `localjudge` script (and `python -m localjudge`); each
command lives in its own module here and is added to the group on import. Only click and
localjudge's errors load with it: a command imports what it runs (torch, the judges) when it runs.
"""

from __future__ import annotations

import logging
import os
import sys

import click

from localjudge.errors import LocalJudgeError
from localjudge.version import __version__

__all__ = ["main"]


class _Group(click.Group):
    """Turns localjudge's errors into messages at the boundary, never tracebacks."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:  # click's own: the same one line as localjudge's errors
            _usage_error(exc)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except LocalJudgeError as exc:
            # one line, even when the message quotes a multi-line parser error
            click.echo(f"Error: {' '.join(str(exc).split())}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            _interrupted(ctx)
        except BrokenPipeError:  # `localjudge models | head`: the reader left; nothing is wrong
            _reader_gone()
        except Exception as exc:  # the boundary: report, exit 1
            if _wrapped_interrupt(exc):
                _interrupted(ctx)
            if os.environ.get("LOCALJUDGE_DEBUG"):
                raise
            click.echo(f"Error: {type(exc).__name__}: {exc} (set LOCALJUDGE_DEBUG=1 for a traceback)", err=True)
            ctx.exit(1)


def _usage_error(exc: click.UsageError) -> None:
    """A click usage error (bad option, missing argument) as one line naming the help to read; exit 2.

    An error in the arguments (one missing, one too many) also quotes the usage line, which is where
    the arguments are listed: "Missing argument 'JUDGE'; usage: localjudge inspect [OPTIONS] JUDGE".
    """
    where = exc.ctx.command_path if exc.ctx is not None else "localjudge"
    message = " ".join(exc.format_message().split()).rstrip(".")
    if exc.ctx is not None and _about_arguments(exc):
        usage = " ".join(exc.ctx.get_usage().split()).removeprefix("Usage: ")
        message += f"; usage: {usage}"
    click.echo(f"Error: {message} (see `{where} --help`)", err=True)
    sys.exit(exc.exit_code)


def _about_arguments(exc: click.UsageError) -> bool:
    if isinstance(exc, click.MissingParameter):
        return isinstance(exc.param, click.Argument)
    return type(exc) is click.UsageError and "unexpected extra argument" in exc.message


def _reader_gone() -> None:
    """Stdout's reader closed the pipe: exit quietly, with Python's own flush at exit sent nowhere."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(1)


def _interrupted(ctx: click.Context) -> None:
    click.echo("Interrupted; results written so far are kept (rerun with --resume).", err=True)
    ctx.exit(130)


def _wrapped_interrupt(exc: Exception) -> bool:
    """A Ctrl-C that pydantic wrapped: a KeyboardInterrupt raised while a serializer callback of a record (its
    detail layout) runs reaches the boundary as `PydanticSerializationError("Error calling function ...:
    KeyboardInterrupt")`."""
    from pydantic_core import PydanticSerializationError

    return isinstance(exc, PydanticSerializationError) and "KeyboardInterrupt" in str(exc)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "show_default": True})
@click.version_option(__version__, prog_name="localjudge")
@click.option("-v", "--verbose", is_flag=True, help="Log what the engine does.")
def main(verbose: bool) -> None:
    """Trustworthy LLM-as-a-judge scoring with local models (exact score distributions)."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(message)s")
    if not verbose:
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def _register() -> None:
    from localjudge.cli.bias import bias_cmd, generate_cmd
    from localjudge.cli.cache import cache_group
    from localjudge.cli.calibrate import calibrate
    from localjudge.cli.commands import eval_cmd, metrics_cmd, score_cmd, steps_cmd
    from localjudge.cli.demo import demo_cmd
    from localjudge.cli.inspection import inspect_cmd
    from localjudge.cli.models import models_cmd
    from localjudge.cli.rank import rank_cmd
    from localjudge.cli.report import report_cmd
    from localjudge.cli.serve import serve_cmd
    from localjudge.cli.tune import tune_cmd

    for cmd in (
        models_cmd,
        metrics_cmd,
        inspect_cmd,
        score_cmd,
        eval_cmd,
        report_cmd,
        rank_cmd,
        steps_cmd,
        calibrate,
        tune_cmd,
        generate_cmd,
        bias_cmd,
        demo_cmd,
        serve_cmd,
        cache_group,
    ):
        main.add_command(cmd)


_register()

if __name__ == "__main__":
    sys.exit(main())
