"""The README runs: every shell and Python block, in order, in one temporary folder (tests/support/readme_blocks.py).

The first evaluation and the RAG block run with the default judge, as a reader runs them after
`make demo`; blocks where a real judge would take minutes, or one `make test` does not install,
run with the scripted fake judge (marked `<!-- readme-test: fake (why) -->` above the block); blocks
that install packages, need a GPU or run the whole suite are marked skip with the reason. Python
blocks that define tests run under pytest. A command that fails, a name that does not import, a
test that fails, or a judge no earlier block installs fails this test, naming the README line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from readme_blocks import blocks, first_failure, uninstalled_judge

README = Path(__file__).resolve().parents[2] / "README.md"

SHOWN_EVAL = """\
case   metric       score  raw   outcome  note
-----  -----------  -----  ----  -------  ----
paris  correctness  0.574  3.30  pass
lyon   correctness  0.573  3.29  pass

judge: smollm2-135m
metric       n  mean score  pass rate  unscored  valid mass
-----------  -  ----------  ---------  --------  ----------
correctness  2  0.573       1.000      0         0.387
"""
"""What the README shows the first evaluation printing, as the default judge prints it (valid mass 39%)."""


def section(text: str, heading: str) -> str:
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


@pytest.mark.slow  # the first evaluation and the RAG block load the default judge
def test_every_readme_block_runs_in_order(tmp_path):
    text = README.read_text(encoding="utf-8")
    outputs: dict[int, str] = {}
    failure = first_failure(text, tmp_path, outputs)
    assert failure is None, failure
    first = next(b for b in blocks(text) if b.mode == "run" and "--report report.html" in b.code)
    assert SHOWN_EVAL in outputs[first.line].replace("\r", "")
    assert (tmp_path / "report.html").is_file() and (tmp_path / "demo.html").is_file()


def test_the_shown_output_is_the_first_evaluations():
    text = README.read_text(encoding="utf-8")
    assert f"```text\n{SHOWN_EVAL}```" in section(text, "Your first evaluation")


def test_the_first_evaluation_and_the_rag_block_run_with_a_real_judge():
    text = README.read_text(encoding="utf-8")
    for heading in ("Your first evaluation", "RAG answers"):
        real = [b for b in blocks(section(text, heading)) if b.mode == "run"]
        assert real and all("--judge smollm2-135m" in b.code for b in real), heading


def test_most_blocks_run_and_every_skip_or_fake_says_why():
    found = blocks(README.read_text(encoding="utf-8"))
    skipped = [b for b in found if b.mode == "skip"]
    assert all(b.reason for b in skipped), [b.line for b in skipped if not b.reason]
    named_judge = [b for b in found if b.mode == "fake" and "qwen2.5-coder-1.5b" in b.code]
    assert named_judge and all("1.5B" in b.reason for b in named_judge), [(b.line, b.reason) for b in named_judge]
    assert len(found) - len(skipped) >= 10 and len(skipped) <= 6, [(b.line, b.mode) for b in found]
    assert {b.lang for b in found if b.mode != "skip"} == {"bash", "python"}


def faked(text: str) -> str:
    """`text` with its real-judge blocks marked fake, line numbers kept (a mark takes the blank line above)."""
    lines = text.split("\n")
    for block in blocks(text):
        if block.mode == "run" and "--judge smollm2-135m" in block.code:
            assert lines[block.line - 3] == "", block.line
            lines[block.line - 3] = "<!-- readme-test: fake -->"
    return "\n".join(lines)


def test_a_planted_broken_command_fails_naming_its_line(tmp_path):
    text = README.read_text(encoding="utf-8")
    first = next(b for b in blocks(text) if b.mode == "fake" and b.lang == "bash")
    planted = first.code + "localjudge eval cases.jsonl --metric no_such_metric\n"
    failure = first_failure(
        faked(text.replace(first.code, planted, 1)[: text.index(first.code) + len(planted)]), tmp_path
    )
    assert failure is not None and failure.startswith(f"README.md:{first.line} (bash, ")
    assert "no_such_metric" in failure


def test_a_planted_name_that_does_not_import_fails(tmp_path):
    text = "<!-- readme-test: fake -->\n```python\nfrom localjudge import NoSuchName\n```\n"
    failure = first_failure(text, tmp_path)
    assert failure is not None and "ImportError" in failure and "NoSuchName" in failure


PYTEST_BLOCK = """\
```python
from pathlib import Path


def test_it_runs():
    Path("ran.txt").write_text("yes")
    assert {outcome}
```
"""


def test_a_pytest_block_runs_its_tests_under_pytest(tmp_path):
    assert first_failure(PYTEST_BLOCK.format(outcome="True"), tmp_path) is None
    assert (tmp_path / "ran.txt").read_text() == "yes"  # as a plain script, the test function would never run


def test_a_planted_broken_pytest_block_fails(tmp_path):
    failure = first_failure(PYTEST_BLOCK.format(outcome="0.1 + 0.2 == 0.3"), tmp_path)
    assert failure is not None and failure.startswith("README.md:2 (python, run) exited 1")
    assert "1 failed" in failure and "test_it_runs" in failure


def test_a_block_whose_judge_is_not_installed_fails(tmp_path):
    text = README.read_text(encoding="utf-8")
    assert uninstalled_judge(text) is None
    planted = text.replace(
        "## Metrics\n",
        "## Metrics\n\n<!-- readme-test: fake -->\n```bash\nlocaljudge eval cases.jsonl --metric correctness "
        "--judge gemma2-9b\n```\n",
        1,
    )
    failure = first_failure(planted, tmp_path)
    assert (
        failure is not None
        and "uses the judge gemma2-9b, which neither an earlier block nor the quick start" in failure
    )
    # the quick start's `make judges-qwen` is what installs the 1.5B the fake blocks name: without it, they fail
    without = text.replace("make judges-qwen   #", "true               #", 1)
    assert "uses the judge qwen2.5-coder-1.5b" in (uninstalled_judge(without) or "")
    # an install block counts, run or skipped, where make test installs the judge; a skipped one of another does not
    used = "<!-- readme-test: fake -->\n```bash\nlocaljudge eval c.jsonl --metric correctness --judge {judge}\n```\n"
    skipped_install = "<!-- readme-test: skip: downloads -->\n```bash\nlocaljudge models --install {judge}\n```\n"
    for judge, installed in (("qwen2.5-coder-0.5b", True), ("qwen2.5-coder-1.5b", False)):
        found = uninstalled_judge(skipped_install.format(judge=judge) + used.format(judge=judge))
        assert (found is None) == installed, (judge, found)
