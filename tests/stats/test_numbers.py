"""`finite` and `finite_json`: the one place NaN and infinities become None for strict JSON."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from localjudge.stats.numbers import finite, finite_json


@pytest.mark.parametrize(
    ("x", "want"),
    [
        (None, None),
        (math.nan, None),
        (math.inf, None),
        (-math.inf, None),
        (np.float64("nan"), None),
        (np.float32("inf"), None),
        (0.25, 0.25),
        (-0.0, -0.0),
        (3, 3.0),
        (np.float32(0.1), float(np.float32(0.1))),
    ],
)
def test_finite_is_a_python_float_or_none(x, want):
    got = finite(x)
    if want is None:
        assert got is None
    else:
        assert type(got) is float and got.hex() == float(want).hex()


def test_finite_json_clears_every_depth_and_keeps_the_rest():
    value = {"a": [1.5, math.nan, ("x", -math.inf)], "b": {"c": math.inf, "d": True, "e": None}, "f": 2}
    got = finite_json(value)
    assert got == {"a": [1.5, None, ["x", None]], "b": {"c": None, "d": True, "e": None}, "f": 2}
    json.dumps(got, allow_nan=False)  # strict JSON now
    assert value["a"][1] != value["a"][1], "the input is left as it was"


def test_finite_loads_no_scipy():
    # records and the CLI take `finite` from stats on every run; the statistics load only when used
    code = "import sys, localjudge.stats.numbers, localjudge.kinds.records\nassert 'scipy' not in sys.modules"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
