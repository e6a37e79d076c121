"""Checks of `summeval_split.py`'s aggregations of per-token readings."""

from __future__ import annotations

import numpy as np

from benchmarks.quality.faithfulness import summeval_split as S


def test_split_candidates_compute_what_they_say():
    c = S.candidates()
    g = np.array([-1.0, -9.0, -0.5, -2.0])
    n = np.array([-2.0, -3.0, -0.5, -1.0])
    surf = [" The", " cat", "s", " sat"]
    assert c["ll:mean"](g, n, surf) == g.mean()
    assert c["ll:clip4"](g, n, surf) == np.mean([-1.0, -4.0, -0.5, -2.0])
    assert c["ll:skip1"](g, n, surf) == np.mean(g[1:])
    assert c["ll:wordmean"](g, n, surf) == np.mean([-1.0, -9.5, -2.0])  # "cat" + "s" is one word
    # only tokens the document makes less likely are penalised: PMI -6 and -1 at tokens 2 and 4
    assert c["ll:floor1.0"](g, n, surf) == np.mean([-1.0, -15.0, -0.5, -3.0])
    assert c["ll:len^0.5"](g, n, surf) == g.sum() / 2.0
