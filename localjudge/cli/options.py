"""Options shared by the commands that load a judge."""

from __future__ import annotations

import functools
from typing import NamedTuple

import click

from localjudge.cli.flags import Flag, settings_flags


def engine_options(fn):
    """One flag per `EngineOptions` field (`settings_flags`), passed to the command as `engine`.

    A field added to `EngineOptions` is a flag of every command that loads a judge; --device is
    also checked as torch reads it, before any load.
    """
    from localjudge.engine.options import EngineOptions

    @functools.wraps(fn)
    def command(*args, engine, **kwargs):
        if "device" in engine.model_fields_set:
            _check_device(engine.device)
        return fn(*args, engine=engine, **kwargs)

    return settings_flags(EngineOptions, "engine", help_text=_PLAIN_HELP)(command)


_PARAM = "engine_"


def _check_device(device: str) -> None:
    """--device as torch reads it, before any load: a misspelt device is a user error (exit 2), not torch's
    RuntimeError from deep inside the load (exit 1)."""
    import torch

    from localjudge.errors import ConfigError, clip

    try:
        torch.device(device)
    except RuntimeError:
        raise ConfigError(
            f"--device: {clip(device)} is not a device; use cpu, cuda or cuda:N (N: a GPU's index)"
        ) from None


# The engine flags' help in plain words; a field without an entry here shows its own description.
_PLAIN_HELP = {
    "device": "Where the judge runs: cpu, cuda, cuda:1... [default: CUDA when available, else the CPU]",
    "dtype": "Number format of the computation: float32 (fp32), bfloat16 (bf16), float16 (fp16); auto: bf16 on "
    "CUDA, fp32 on the CPU [default: the registry entry's, else auto]",
    "token_budget": "Tokens per batch, padding included: lower it when memory runs out [default: 16384 on CUDA, "
    "4096 on the CPU]",
    "tree_tolerance": "Share of a score's probability that may go unread when negligible spellings of the scores "
    "are skipped; 0 reads them all",
    "reuse_prefix": "Compute a prompt start that several cases share (instructions, an article) once",
    "batch_invariant": "Give each case bitwise the same result whatever else is in its batch (checked when the "
    "judge loads, recorded); off: the stock transformers layers",
    "grid": "Batch rows and cached prompt starts are multiples of this many tokens [default: 32 with "
    "--batch-invariant, else 1]",
    "fp32_head": "Compute the output layer in fp32 where scores are read, whatever --dtype",
    "mixed_precision": "With --dtype bf16 or fp16: only the linear layers run in it, the rest in fp32 [default: on "
    "on the CPU, off on CUDA]",
}
ENGINE_SECTION = "Engine options (how the judge computes; the defaults suit most runs)"
MODEL_SECTION = "Model options (which model, and how it loads)"
HEAD_SECTION = "Head options (--method head)"
LORA_SECTION = "LoRA options (--method lora)"


_RUN_HELP = {
    "out": "Write the records to this JSONL file.",
    "resume": "Continue an interrupted run in --out without redoing finished items.",
    "overwrite": "Replace an existing --out.",
    "skip_invalid": "Skip malformed rows of the input, listing each one.",
    "progress": "Hide progress bars (also hidden when stderr is not a terminal).",
}
CASE_FILE_FLAGS = tuple(_RUN_HELP)
"""Every run flag: what a command that judges a file of cases into a records file takes (eval, rank)."""


def run_options(*names: str, out_required: bool = False, **help_text: str):
    """The flags of the `RunOptions` fields `names` (`settings_flags`), passed to the command as one `run`.

    The run flags have stood as they are since before they were generated: --out FILE, the one-way
    switches --resume, --overwrite and --skip-invalid, and --no-progress for `progress`. `help_text`
    rewords a flag's help for the command. A combination `RunOptions` refuses (--resume with
    --overwrite) exits 2 before anything runs.

    Examples:
        >>> @click.command()
        ... @run_options("out", "resume", "overwrite", out="Stream results here.")
        ... def cmd(run):
        ...     click.echo(run.mode)
    """
    from localjudge.runs.options import RunOptions

    unknown = set(names) - set(_RUN_HELP) | set(help_text) - set(names)
    assert not unknown, f"no run flag {unknown}"
    flags = {
        "out": Flag(type=click.Path(dir_okay=False), required=out_required),
        "resume": Flag(switch=True),
        "overwrite": Flag(switch=True),
        "skip_invalid": Flag(switch=True),
        "progress": Flag(name="--no-progress", switch=True),
    }
    texts = {n: help_text.get(n, _RUN_HELP[n]) for n in names}
    return settings_flags(RunOptions, "run", names, texts, {n: flags[n] for n in names})


_JUDGE = click.option(
    "--judge",
    "judge_name",
    default=None,
    help="Registry name, model dir, .gguf file or hub id (default: the registry default).",
)
_LOAD = [
    click.option(
        "--trust-remote-code",
        is_flag=True,
        default=None,
        help="Run the model repository's own code (only for sources you trust).",
    ),
    click.option("--allow-pickle", is_flag=True, help="Allow pickle-based checkpoints (.bin/.pt), which can run code."),
]


def registry_option(help_text: str = "A models.yaml other than the bundled one."):
    """--registry FILE, passed to the command as `registry`.

    Examples:
        >>> @click.command()
        ... @registry_option()
        ... def cmd(registry):
        ...     click.echo(registry)
    """
    return click.option("--registry", "registry", type=click.Path(dir_okay=False), default=None, help=help_text)


def judge_options(fn):
    """--judge, --trust-remote-code, --allow-pickle, --registry, and the engine options (`engine_options`)."""
    return _JUDGE(judge_load_options(fn))


def panel_judge_options(fn):
    """`judge_options` with --judge repeatable, passed as `judge_names`: twice or more, the judges form a panel."""
    fn = judge_load_options(fn)
    return click.option(
        "--judge",
        "judge_names",
        multiple=True,
        help="Registry name, model dir, .gguf file or hub id (default: the registry default); repeat it to judge "
        "as a panel (see --panel).",
    )(fn)


def judge_load_options(fn):
    """The options of `judge_options` but --judge (for a command naming its judge as an argument)."""
    fn = engine_options(fn)  # innermost: listed after the others in --help
    fn = registry_option()(fn)
    for opt in reversed(_LOAD):
        fn = opt(fn)
    return fn


class SectionedCommand(click.Command):
    """A command whose --help lists the model and engine options under their own headings."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        sections: dict[str, list[tuple[str, str]]] = {
            "Options": [],
            MODEL_SECTION: [],
            ENGINE_SECTION: [],
            HEAD_SECTION: [],
            LORA_SECTION: [],
        }
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None and not isinstance(param, click.Argument):  # arguments: in the usage line
                sections[option_section(param.name or "")].append(record)
        for title, rows in sections.items():
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def option_section(name: str) -> str:
    """The --help heading of a command parameter, by its name."""
    if name.startswith(_PARAM):
        return ENGINE_SECTION
    if name.startswith("head_"):  # tune's HeadOptions
        return HEAD_SECTION
    if name.startswith("lora_"):  # tune's TuneOptions
        return LORA_SECTION
    if name in (
        "judge_name",
        "judge_names",
        "judges",
        "models",
        "trust_remote_code",
        "allow_pickle",
        "registry",
        "family_specs",
    ):
        return MODEL_SECTION
    return "Options"


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


def load_from_options(judge_name, trust_remote_code, allow_pickle, registry, engine, progress=True):
    """Loads the judge the options name, with a note on stderr (loading takes a while).

    `engine` is the `EngineOptions` of the command's flags. `progress` False (--no-progress)
    hides the loader's own progress bars; they never show when stderr is not a terminal.
    """
    from pathlib import Path

    from localjudge.judges.loading import load_judge
    from localjudge.judges.registry import load_registry

    if registry:
        load_registry(Path(registry))  # a broken registry is reported before the load note
    click.echo(f"Loading judge {judge_name or '(default)'}...", err=True)
    judge = load_judge(
        judge_name,
        options=engine,
        trust_remote_code=trust_remote_code,
        allow_pickle=allow_pickle,
        registry_path=registry,
        progress=progress,
    )
    click.echo(f"Judge: {judge.info.name} [{judge.info.dtype}, {judge.info.device}]", err=True)
    return judge


def judge_inputs(judge_name: str | None, registry: str | None) -> list[tuple[str, str | None]]:
    """The files a judge load reads that a command must not overwrite: registry, model file or folder."""
    from localjudge.io.files import model_path_input

    return [("judge registry", registry), model_path_input(judge_name) if judge_name else ("judge model", None)]
