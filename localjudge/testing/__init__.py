"""Testing with localjudge: a scripted fake judge for fast tests, and assertions for your own suites.

`fake_judge` / `FakeBackend` (`localjudge.judges.scripted`) need no weights, and `scripted_judges`
makes `load_judge` answer names with them; `assert_passes` /
`assert_fails` (`localjudge.testing.assertions`) check one case against a metric with any judge.
The pytest plugin (`localjudge.testing.pytest_plugin`, registered on install) adds the
`localjudge_judge` fixture and the `--localjudge-judge` option. `build_tiny_tokenizer`
(`localjudge.testing.tiny_tokenizer`) trains a small BPE tokenizer for random-weight models, and
`tiny_llama` / `tiny_gemma3` / `tiny_info` (`localjudge.testing.tiny_models`) build such models.
"""

from localjudge.judges.scripted import (
    FakeBackend,
    ScriptedJudges,
    ScriptedLoad,
    UnscriptedLoad,
    copy_lm,
    fake_judge,
    scripted_judges,
)
from localjudge.testing.assertions import assert_fails, assert_passes, describe, judge_case
from localjudge.testing.tiny_models import tiny_gemma3, tiny_info, tiny_llama
from localjudge.testing.tiny_tokenizer import build_tiny_tokenizer

__all__ = [
    "FakeBackend",
    "ScriptedJudges",
    "ScriptedLoad",
    "UnscriptedLoad",
    "assert_fails",
    "assert_passes",
    "build_tiny_tokenizer",
    "copy_lm",
    "describe",
    "fake_judge",
    "judge_case",
    "scripted_judges",
    "tiny_gemma3",
    "tiny_info",
    "tiny_llama",
]
