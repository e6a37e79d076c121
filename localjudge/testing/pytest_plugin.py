"""The localjudge pytest plugin: a session-wide judge for your own test suites.

Registered through the `pytest11` entry point, so it is active wherever localjudge is installed.
It adds the `localjudge_judge` fixture, which loads the judge named by `--localjudge-judge`
(default: the registry's default judge) once per session, and only in sessions that use it;
`import localjudge` stays light, so suites that do not use the fixture pay nothing. The
`localjudge_scripted` fixture makes every judge loaded during one test a scripted one, by name.

Examples:
    >>> # test_answers.py, run with `pytest --localjudge-judge smollm2-135m`
    >>> from localjudge.testing import assert_passes
    >>> def test_capital(localjudge_judge):  # doctest: +SKIP
    ...     assert_passes({"input": "Capital of France?", "actual_output": "Paris",
    ...                    "expected_output": "Paris"}, "correctness", localjudge_judge)
    >>> from localjudge.testing import fake_judge
    >>> def test_my_pipeline(localjudge_scripted):  # doctest: +SKIP
    ...     localjudge_scripted.add("grader", fake_judge(lambda prompt: {"5": 1.0}))
    ...     my_pipeline(judge_name="grader")  # loads "grader" with load_judge, as it would a real judge
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from localjudge.judges.scripted import ScriptedJudges, scripted_judges


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("localjudge", "localjudge judge for the localjudge_judge fixture")
    group.addoption(
        "--localjudge-judge",
        default=None,
        metavar="NAME",
        help="registry name, model directory, .gguf file or hub id (default: the registry default)",
    )
    group.addoption(
        "--localjudge-device",
        default=None,
        metavar="DEVICE",
        help="cpu, cuda, cuda:1... (default: CUDA when available)",
    )
    group.addoption(
        "--localjudge-dtype",
        default=None,
        metavar="DTYPE",
        help="float32, bfloat16 or float16 (default: bf16 on CUDA, fp32 on CPU)",
    )


@pytest.fixture(scope="session")
def localjudge_judge(request: pytest.FixtureRequest):
    """The judge chosen on the command line, loaded once for the whole session."""
    from localjudge.judges.loading import load_judge

    opt = request.config.getoption
    return load_judge(
        opt("--localjudge-judge"), device=opt("--localjudge-device"), dtype=opt("--localjudge-dtype"), progress=False
    )


@pytest.fixture
def localjudge_scripted() -> Iterator[ScriptedJudges]:
    """For one test, every judge loaded by name is a scripted one: add them with `.add(name, judge)`.

    A load of a name not added raises `UnscriptedLoad`, so no real model loads during the test;
    `.loads` lists what was asked for, `.judges` what each load returned.
    """
    with scripted_judges() as table:
        yield table
