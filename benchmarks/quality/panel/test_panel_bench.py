"""The panel study's own helpers: pair accuracy."""

from __future__ import annotations

import pytest

from benchmarks.quality.panel.panel_pairs import accuracy


def test_accuracy_counts_draws_half_and_leaves_unscored_out():
    out = accuracy([0.9, 0.2, 0.5, None], [1, 1, 2, 2])
    assert out == {"accuracy": pytest.approx(0.5), "scored": 3, "n": 4}
