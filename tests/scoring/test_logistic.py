"""The two forms of the logistic function: both stable, equal but for the last bit and the far tail."""

from __future__ import annotations

import numpy as np
import pytest

from localjudge.scoring.logistic import sigmoid, tanh_sigmoid

X = np.concatenate([np.linspace(-800.0, 800.0, 20001), [0.0, -0.0, 5e-324, 1e308, -1e308, np.inf, -np.inf]])


@pytest.mark.parametrize("form", [sigmoid, tanh_sigmoid])
def test_no_overflow_and_symmetric(form):
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow to 0 is the right answer
        p = form(X)
    assert np.all((p >= 0) & (p <= 1)) and form(np.array([0.0])).tolist() == [0.5]
    assert np.allclose(p + form(-X), 1.0, rtol=0, atol=4.5e-16)


def test_the_forms_agree_but_for_the_last_bit_and_the_far_tail():
    a, b = sigmoid(X), tanh_sigmoid(X)
    assert np.max(np.abs(a - b)) <= 2.3e-16
    # the tanh form holds no relative precision far out on the left: σ(−40) ≈ 4.2e-18, not 0
    assert (
        sigmoid(np.array([-40.0]))[0] == pytest.approx(4.248354255291589e-18)
        and tanh_sigmoid(np.array([-40.0]))[0] == 0
    )
