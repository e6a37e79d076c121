"""`localjudge`, or a README Python block, with every judge load answered by the scripted fake judge.

The README test (tests/project/test_readme_runs.py) runs the blocks marked `<!-- readme-test: fake -->`
through this module, where a real judge would take minutes: `python -m readme_fake ARGS...` is the
`localjudge` command, `python -m readme_fake --python FILE` runs a block's code, and
`python -m readme_fake --pytest ARGS...` runs pytest on a block of test functions. A load of any name
gives a fake judge of that name (marked as fake), with the registry entry's family, so the commands,
files and Python names of the block are exercised as a user runs them; only the judgments are scripted.
"""

from __future__ import annotations

import runpy
import sys

from localjudge.errors import LocalJudgeError
from localjudge.judges.judge import Judge
from localjudge.judges.registry import REGISTRY_PATH, load_registry
from localjudge.testing import ScriptedLoad, fake_judge, scripted_judges


def policy(prompt: str) -> dict[str, float]:
    """Probabilities of whole answers: scores 1-5 (and 1-10), labels A/B and 1/2, Yes/No."""
    return {"4": 0.35, "5": 0.25, "3": 0.1, " Yes": 0.1, "Yes": 0.1, "A": 0.02, "B": 0.02, "No": 0.02}


def scripted(asked: ScriptedLoad) -> Judge:
    """A fake judge named after what was asked for (marked as fake), with the family asked for or the registry's."""
    try:
        family = asked.family or load_registry(asked.registry_path or REGISTRY_PATH).get(asked.name).family
    except LocalJudgeError:
        family = "unknown"
    return fake_judge(policy, name=f"{asked.name} (scripted fake)", family=family)


def main(argv: list[str]) -> None:
    with scripted_judges() as table:
        table.add_any(scripted)
        if argv[:1] == ["--python"]:
            sys.argv = argv[1:]
            runpy.run_path(argv[1], run_name="__main__")
            return
        if argv[:1] == ["--pytest"]:
            import pytest

            sys.exit(pytest.main(argv[1:]))
        from localjudge.cli import main as cli

        cli(argv, prog_name="localjudge")


if __name__ == "__main__":
    main(sys.argv[1:])
