"""The pytest plugin: registered on install, one judge per session, options reach load_judge."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

from localjudge.testing import fake_judge

pytest_plugins = ["pytester"]
PLUGIN = "localjudge.testing.pytest_plugin"  # loaded by its entry point in every run, inner ones too


def test_registered_as_a_pytest11_entry_point():
    assert any(ep.value == PLUGIN for ep in entry_points(group="pytest11"))


def test_help_lists_the_options(pytester: pytest.Pytester):
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*--localjudge-judge=NAME*", "*--localjudge-device=DEVICE*"])


def test_fixture_loads_the_named_judge_once(localjudge_scripted, pytester: pytest.Pytester):
    calls = []

    def load(asked):
        calls.append((asked.name, asked.device, asked.dtype, asked.progress))
        return fake_judge(lambda prompt: {"5": 1.0})

    localjudge_scripted.add_any(load)
    pytester.makepyfile(
        """
        from localjudge.testing import assert_passes, assert_fails

        CASE = {"input": "2+2?", "actual_output": "4", "expected_output": "4"}

        def test_pass(localjudge_judge):
            assert_passes(CASE, "correctness", localjudge_judge)

        def test_same_judge(localjudge_judge):
            assert localjudge_judge.info.name.startswith("fake")
        """
    )
    result = pytester.runpytest_inprocess("--localjudge-judge", "my-judge", "--localjudge-device", "cpu")
    result.assert_outcomes(passed=2)
    assert calls == [("my-judge", "cpu", None, False)]


def test_the_scripted_fixture_answers_a_users_loads_by_name(pytester: pytest.Pytester):
    pytester.makepyfile(
        """
        import pytest
        from localjudge import fake_judge, load_judge
        from localjudge.testing import UnscriptedLoad

        def test_my_pipeline(localjudge_scripted):
            localjudge_scripted.add("grader", fake_judge(lambda prompt: {"5": 0.8, "4": 0.2}))
            judge = load_judge("grader")
            assert judge.score_texts(["Rate 1-5. Score:"], low=1, high=5)[0].expected == pytest.approx(4.8)
            with pytest.raises(UnscriptedLoad):
                load_judge("smollm2-135m")

        def test_the_table_is_gone_after_its_test():
            from localjudge.judges.scripted import active_table
            assert active_table() is None
        """
    )
    pytester.runpytest_inprocess().assert_outcomes(passed=2)
