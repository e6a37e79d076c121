"""The README runs: every shell and Python block, in order, in one temporary folder (tests/support/readme_blocks.py).

Blocks where a real judge would take minutes run with the scripted fake judge (marked
`<!-- readme-test: fake -->` above the block); blocks that install packages, need a GPU or run the
whole suite are marked skip with the reason. A command that fails or a name that does not import
fails this test, naming the README line.
"""

from __future__ import annotations

from pathlib import Path

from readme_blocks import blocks, first_failure

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_readme_block_runs_in_order(tmp_path):
    failure = first_failure(README.read_text(encoding="utf-8"), tmp_path)
    assert failure is None, failure


def test_most_blocks_run_and_every_skip_says_why():
    found = blocks(README.read_text(encoding="utf-8"))
    skipped = [b for b in found if b.mode == "skip"]
    assert all(b.reason for b in skipped), [b.line for b in skipped if not b.reason]
    assert len(found) - len(skipped) >= 10 and len(skipped) <= 6, [(b.line, b.mode) for b in found]
    assert {b.lang for b in found if b.mode != "skip"} == {"bash", "python"}


def test_a_planted_broken_command_fails_naming_its_line(tmp_path):
    text = README.read_text(encoding="utf-8")
    first = next(b for b in blocks(text) if b.mode != "skip" and b.lang == "bash")
    planted = first.code + "localjudge eval cases.jsonl --metric no_such_metric\n"
    failure = first_failure(text.replace(first.code, planted, 1)[: text.index(first.code) + len(planted)], tmp_path)
    assert failure is not None and failure.startswith(f"README.md:{first.line} (bash, ")
    assert "no_such_metric" in failure


def test_a_planted_name_that_does_not_import_fails(tmp_path):
    text = "<!-- readme-test: fake -->\n```python\nfrom localjudge import NoSuchName\n```\n"
    failure = first_failure(text, tmp_path)
    assert failure is not None and "ImportError" in failure and "NoSuchName" in failure
