"""The judge `eval` gets when none is named: a capable one for prompted kinds, never a silent switch."""

from __future__ import annotations

import pytest

from localjudge.runs.judge_choice import AT_CHANCE, CAPABLE, choose_judge


def _installed(*names: str):
    return lambda name: name in names


@pytest.mark.parametrize("kind", ["geval", "pairwise", "entailment"])
def test_a_prompted_kind_gets_the_best_installed_capable_judge(kind):
    both = choose_judge([kind], _installed(*CAPABLE))
    assert both.name == "qwen2.5-coder-1.5b"
    only_small = choose_judge(["likelihood", kind], _installed("qwen2.5-coder-0.5b"))
    assert only_small.name == "qwen2.5-coder-0.5b"
    assert only_small.notice.startswith("Judge qwen2.5-coder-0.5b picked for the ")
    assert "at chance" in only_small.notice and "\n" not in only_small.notice


def test_with_no_capable_judge_the_default_runs_and_one_line_says_what_to_install():
    choice = choose_judge(["geval", "pairwise"], _installed())
    assert choice.name is None
    assert choice.notice is not None and "\n" not in choice.notice
    assert "G-Eval and pairwise metrics at chance" in choice.notice
    assert "localjudge models --install qwen2.5-coder-1.5b" in choice.notice


@pytest.mark.parametrize("kinds", [["likelihood"], ["reference", "pairwise_likelihood"], []])
def test_likelihood_kinds_keep_the_default_and_say_nothing(kinds):
    assert choose_judge(kinds, _installed(*CAPABLE)) == (None, None)


def test_a_named_judge_is_always_the_judge_used():
    assert choose_judge(["geval"], _installed(*CAPABLE), named="smollm2-135m") == ("smollm2-135m", None)


def test_a_registry_whose_default_is_not_at_chance_keeps_its_default():
    assert "my-judge" not in AT_CHANCE
    assert choose_judge(["geval"], _installed(*CAPABLE), default="my-judge") == (None, None)
