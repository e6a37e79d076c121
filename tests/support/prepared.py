"""What the prepared-copy tests compare: a judge's numbers as exact arrays, and the copies a cache holds."""

from __future__ import annotations

from pathlib import Path

import numpy as np

PROMPTS = ["Score: 1", "the answer is good. Rating", "Total 10 and"]


def fingerprint(judge) -> dict:
    """Everything a judge's numbers depend on, as exact arrays: prompts, score mass, log-likelihoods."""
    rendered = [judge.render("Judge it.", p, "Score:") for p in PROMPTS]
    dists = judge.score_texts(rendered, 0, 10, min_valid_mass=0.0)
    ll = judge.loglikelihood(PROMPTS, [" good", " 10 and 7", " yes"])
    return {
        "provenance": judge.info.provenance,
        "rendered": rendered,
        "probs": np.array([[d.probs[s] for s in range(11)] for d in dists]),
        "mass": np.array([d.valid_mass for d in dists]),
        "raw_mass": np.array([d.valid_mass for d in judge.score_texts(PROMPTS, 0, 10, min_valid_mass=0.0)]),
        "logprobs": [np.array(x.logprobs) for x in ll],
        "ids": [x.token_ids for x in ll],
    }


def assert_same(a: dict, b: dict) -> None:
    assert a["provenance"] == b["provenance"] and a["rendered"] == b["rendered"] and a["ids"] == b["ids"]
    assert np.array_equal(a["probs"], b["probs"]) and np.array_equal(a["mass"], b["mass"])
    assert np.array_equal(a["raw_mass"], b["raw_mass"])
    assert all(np.array_equal(x, y) for x, y in zip(a["logprobs"], b["logprobs"]))


def copies(root: Path) -> list[Path]:
    return sorted((root / "weights").iterdir()) if (root / "weights").is_dir() else []
