"""The fast tier stays fast: a test that uses a real judge must carry the `slow` marker."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
CONFTEST = (Path(__file__).resolve().parents[1] / "conftest.py").read_text()


@pytest.mark.parametrize("fixture", ["smollm_judge", "gemma_judge"])
def test_real_judge_without_slow_marker_is_refused(pytester: pytest.Pytester, fixture):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(f"""
        import pytest

        @pytest.fixture
        def wrapped({fixture}):
            return {fixture}

        def test_direct({fixture}):
            pass

        def test_through_a_fixture(wrapped):
            pass

        @pytest.mark.slow
        def test_marked({fixture}):
            pass
    """)
    result = pytester.runpytest("--collect-only", "-q")
    assert result.ret != 0
    text = result.stdout.str() + result.stderr.str()
    assert "test_direct" in text and "test_through_a_fixture" in text
    assert "test_marked" not in text.split("not marked")[-1]


def test_marked_real_judge_tests_collect(pytester: pytest.Pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile("""
        import pytest

        @pytest.mark.slow
        def test_marked(smollm_judge):
            pass
    """)
    result = pytester.runpytest("--collect-only", "-q")
    assert result.ret == 0
