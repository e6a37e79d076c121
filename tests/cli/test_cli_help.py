"""The command line's help and usage errors: what it shows is what exists, and errors read the same everywhere."""

from __future__ import annotations

import re
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.cli.options import ENGINE_SECTION, MODEL_SECTION
from localjudge.engine.options import EngineOptions
from localjudge.metrics import builtin_names

COMMANDS = sorted(main.commands)


def _help(*command: str) -> str:
    result = CliRunner().invoke(main, [*command, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.output


def _all_helps() -> dict[str, str]:
    helps = {}
    for name, cmd in main.commands.items():
        helps[name] = _help(name)
        if isinstance(cmd, click.Group):
            for sub in cmd.commands:
                helps[f"{name} {sub}"] = _help(name, sub)
    return helps


def test_every_metric_an_example_names_exists():
    # `calibrate --help` once showed `--verdict consistency_min_pmi`, a metric that never existed
    named = []
    examples = [line for text in _all_helps().values() for line in text.splitlines() if "localjudge " in line]
    for line in examples:
        for flag, value in re.findall(r"--(metric|metrics) ([\w.,]+)", line):
            named += [(flag, m) for m in value.split(",") if not m.endswith((".yaml", ".json")) and m.islower()]
    assert named, "no example names a metric"
    unknown = [(flag, m) for flag, m in named if m not in builtin_names() and m not in ("name", "my_metric")]
    assert not unknown, f"help examples name metrics that do not exist: {unknown}"


@pytest.mark.parametrize("command", ["eval", "score", "steps", "demo", "inspect", "generate", "bias run"])
def test_engine_and_model_options_have_their_own_headings(command):
    text = _help(*command.split())
    assert f"{ENGINE_SECTION}:" in text and f"{MODEL_SECTION}:" in text
    engine_part = text[text.index(f"{ENGINE_SECTION}:") :]
    for name in EngineOptions.model_fields:
        flag = "--" + name.replace("_", "-")
        assert flag in engine_part, f"{command}: {flag} is not under its heading"
    own = text[text.index("\nOptions:") : text.index(f"{MODEL_SECTION}:")]
    assert "--device" not in own and "--registry" not in own
    assert "[TEXTS]" not in own and "DATA " not in own  # arguments stay in the usage line, as click puts them


def test_defaults_are_shown():
    assert "[default: 0.8]" in _help("calibrate", "agreement")  # --target
    assert "[default: 128" in _help("generate")  # --max-new-tokens
    assert "[default: consistency]" in _help("demo")  # --dimension


@pytest.mark.parametrize("command", ["eval", "models", "bias run", "generate"])
def test_the_registry_option_is_called_registry(command):
    text = _help(*command.split())
    assert "--registry FILE" in text and "--models" not in text


@pytest.mark.parametrize("command", ["models", "eval"])
def test_the_old_registry_option_name_is_gone(command):
    # a shim of a package never released (#48): --models was --registry's first name
    result = CliRunner().invoke(main, [command, "--models", "r.yaml"])
    assert result.exit_code == 2 and "No such option '--models'" in result.output


def test_generate_reads_models_as_a_misspelt_model_not_the_old_registry(tmp_path):
    # `generate --model a --models b` once took b for a registry file: "cannot read judge registry b"
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('{"id": "1", "input": "q"}\n')
    args = ["generate", str(prompts), "--model", "smollm2-135m", "--models", "gemma3-270m", "--out", "r.jsonl"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "No such option '--models'. Did you mean '--model'?" in result.output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["eval", "data.jsonl"], "Missing option '--metric' (see `main eval --help`)"),
        (["evl"], "No such command 'evl'"),
        (["eval", "--metrc", "x"], "No such option '--metrc'"),
        (["score", "--low", "one"], "'one' is not a valid integer"),
    ],
)
def test_usage_errors_are_one_line_naming_the_help(args, needle):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and needle in lines[0], result.output
    assert "--help`)" in lines[0]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["inspect"], "Missing argument 'JUDGE'; usage: main inspect [OPTIONS] JUDGE (see `main inspect --help`)"),
        (["eval"], "Missing argument 'DATA'; usage: main eval [OPTIONS] DATA (see `main eval --help`)"),
        (["metrics", "x"], "Got unexpected extra argument (x); usage: main metrics [OPTIONS] (see"),
    ],
)
def test_an_argument_error_quotes_the_usage_line(args, needle):
    # the arguments are listed only in the usage line (not under Options), so the error shows it
    result = CliRunner().invoke(main, args)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and needle in lines[0], result.output


def test_a_closed_pipe_is_not_an_error():
    # `localjudge models | head -1`: the reader goes away before the table is written (closed here at once)
    code = "import sys; from localjudge.cli import main; sys.argv = ['localjudge', 'models']; main()"
    reader = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert reader.stdout is not None
    reader.stdout.close()
    _, err = reader.communicate(timeout=60)
    assert reader.returncode == 1
    assert b"Error" not in err and b"Traceback" not in err and b"Exception" not in err, err
