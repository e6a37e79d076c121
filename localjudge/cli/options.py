"""Options shared by the commands that load a judge."""

from __future__ import annotations

from typing import NamedTuple

import click

_JUDGE = click.option(
    "--judge",
    "judge_name",
    default=None,
    help="Registry name, model dir, .gguf file or hub id (default: the registry default).",
)
_LOAD = [
    click.option("--device", default=None, help="cpu, cuda, cuda:1... (default: CUDA if available)."),
    click.option(
        "--dtype",
        default=None,
        type=click.Choice(["float32", "bfloat16", "float16"]),
        help="Default: bf16 on CUDA, fp32 on CPU.",
    ),
    click.option(
        "--trust-remote-code",
        is_flag=True,
        default=None,
        help="Run the model repository's own code (only for sources you trust).",
    ),
    click.option("--allow-pickle", is_flag=True, help="Allow pickle-based checkpoints (.bin/.pt), which can run code."),
    click.option(
        "--models",
        "registry",
        type=click.Path(dir_okay=False),
        default=None,
        help="A models.yaml other than the bundled one.",
    ),
]


def judge_options(fn):
    """--judge, --device, --dtype, --trust-remote-code, --allow-pickle, --models."""
    return _JUDGE(judge_load_options(fn))


def judge_load_options(fn):
    """--device, --dtype, --trust-remote-code, --allow-pickle, --models (for a command naming its judge)."""
    for opt in reversed(_LOAD):
        fn = opt(fn)
    return fn


class Scale(NamedTuple):
    """A numeric scale (low, high) or a label scale (labels), as the command line gave it."""

    low: int | None
    high: int | None
    labels: list[str] | None


def read_scale(low: int | None, high: int | None, labels: str | None, default: tuple[int, int] | None = None) -> Scale:
    """Checks --low/--high or --labels before any model loads; `default` when none is given."""
    from localjudge.errors import ConfigError
    from localjudge.scoring.trie import label_spellings, validate_scale

    if labels is not None:
        if low is not None or high is not None:
            raise ConfigError("give either a scale (--low, --high) or --labels, not both")
        label_list = [s.strip() for s in labels.split(",")]
        label_spellings(label_list)
        return Scale(None, None, label_list)
    if low is None and high is None and default is not None:
        low, high = default
    if low is None or high is None:
        raise ConfigError("give a scale with --low and --high, or labels with --labels")
    validate_scale(low, high)
    return Scale(low, high, None)


def load_from_options(judge_name, device, dtype, trust_remote_code, allow_pickle, registry, progress=True):
    """Loads the judge the options name, with a note on stderr (loading takes a while).

    `progress` False (--no-progress) hides the loader's own progress bars; they never show
    when stderr is not a terminal.
    """
    from pathlib import Path

    from localjudge.judges.loading import load_judge
    from localjudge.judges.registry import load_registry

    if registry:
        load_registry(Path(registry))  # a broken registry is reported before the load note
    click.echo(f"Loading judge {judge_name or '(default)'}...", err=True)
    judge = load_judge(
        judge_name,
        device=device,
        dtype=dtype,
        trust_remote_code=trust_remote_code,
        allow_pickle=allow_pickle,
        registry_path=registry,
        progress=progress,
    )
    click.echo(f"Judge: {judge.info.name} [{judge.info.dtype}, {judge.info.device}]", err=True)
    return judge


def judge_inputs(judge_name: str | None, registry: str | None) -> list[tuple[str, str | None]]:
    """The files a judge load reads that a command must not overwrite: registry, model file or folder."""
    from localjudge.io.files import is_dir, is_file

    model = judge_name if judge_name and (is_file(judge_name) or is_dir(judge_name)) else None
    return [("judge registry", registry), ("judge model", model)]
