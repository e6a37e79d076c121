"""benchmarks/speed/llamacpp.py's pure helpers (`_logprobs.py`), and its refusal without llama-cpp-python.

The benchmark's own self-check, beside it: nothing here needs llama.cpp or a model.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from benchmarks.speed._logprobs import common_prefix_len, compare_logprobs, target_logprobs, tokenisation_agreement


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_target_logprobs_is_a_float64_log_softmax(dtype):
    rng = np.random.default_rng(0)
    logits = (rng.normal(size=(5, 7)) * 30).astype(dtype)  # large logits: a naive exp would overflow in fp32
    targets = [0, 6, 3, 3, 1]
    got = target_logprobs(logits, targets)
    x = logits.astype(np.float64)
    want = [x[i, t] - np.log(np.exp(x[i] - x[i].max()).sum()) - x[i].max() for i, t in enumerate(targets)]
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert np.all(got <= 0)


def test_target_logprobs_of_shifted_logits_are_the_same():
    logits = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(target_logprobs(logits + 1000, [2, 1]), target_logprobs(logits, [2, 1]), atol=1e-12)
    assert target_logprobs(logits[1:], [1])[0] == pytest.approx(np.log(1 / 3))


@pytest.mark.parametrize(
    ("rows", "n"),
    [([], 0), ([[1, 2, 3]], 3), ([[1, 2, 3], [1, 2, 4]], 2), ([[1, 2], [1, 2, 3]], 2), ([[5], [6]], 0)],
)
def test_common_prefix_len(rows, n):
    assert common_prefix_len(rows) == n


def test_compare_logprobs_figures():
    ref = [np.array([-1.0, -2.0]), np.array([-3.0]), np.array([])]
    other = [np.array([-1.5, -2.0]), np.array([-2.0]), np.array([])]
    c = compare_logprobs(ref, other)
    assert (c["tokens"], c["items"]) == (3, 2)  # the empty item is left out
    assert c["max_abs"] == pytest.approx(1.0)
    assert c["mean_abs"] == pytest.approx(0.5)
    assert c["max_abs_item_mean"] == pytest.approx(1.0)  # item means -1.5 / -1.75 and -3 / -2
    assert c["item_mean_pearson"] == pytest.approx(1.0)
    same = compare_logprobs(ref, ref)
    assert same["max_abs"] == 0 and same["item_mean_pearson"] == pytest.approx(1.0)


def test_compare_logprobs_without_spread_has_no_correlation():
    c = compare_logprobs([np.array([-1.0])], [np.array([-1.2])])
    assert c["item_mean_pearson"] is None


@pytest.mark.parametrize(
    ("ref", "other"),
    [([np.array([-1.0])], []), ([np.array([-1.0, -2.0])], [np.array([-1.0])]), ([np.array([])], [np.array([])])],
)
def test_compare_logprobs_refuses_mismatched_or_empty_input(ref, other):
    with pytest.raises(ValueError):
        compare_logprobs(ref, other)


def test_tokenisation_agreement_finds_the_first_difference():
    t = tokenisation_agreement([[1, 2, 3], [4, 5], [6]], [[1, 2, 3], [4, 7, 8], [9]])
    assert t == {"texts": 3, "identical": 1, "first_difference": {"item": 1, "position": 1, "lengths": [2, 3]}}
    assert tokenisation_agreement([[1]], [[1]])["first_difference"] is None


def _script():
    from benchmarks.speed import llamacpp

    return llamacpp


def test_script_without_llama_cpp_says_how_to_build_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import llama_cpp raises ImportError
    script = _script()
    with pytest.raises(SystemExit) as exit_:
        script.main(["--help"])
    assert exit_.value.code == 0 and "llama-cpp-python" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        script.main(["--judges", "smollm2-135m"])
    message = str(exit_.value.code)
    assert "llama-cpp-python is not installed" in message
    assert "pip install --no-binary llama-cpp-python llama-cpp-python==" in message
