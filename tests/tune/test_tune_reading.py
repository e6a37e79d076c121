"""The differentiable reading equals the engine's exact distribution maths, against a float64 reference."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from localjudge.scoring.distribution import outcome_mass
from localjudge.scoring.trie import build_label_tree, build_score_tree
from localjudge.tune.reading import TreeIndex, outcome_logmass, soft_target

SURFACES = ["1", "0", "10", " ", "5", "Yes", "No", " yes", "x", "y", ".", "2"]


def _reference(tree, logits: np.ndarray) -> np.ndarray:
    """Edge and end log-probabilities as the engine defines them, in float64, then `outcome_mass`."""
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))  # (M, N, V)
    ends = np.ones(logits.shape[-1], dtype=bool)
    ends[tree.continue_ids] = False
    edge = np.zeros(logits.shape[:2])
    for node in range(1, tree.n_nodes):
        edge[:, node] = logp[:, tree.parents[node], tree.token_ids[node]]
    end = np.log(np.exp(logp)[:, :, ends].sum(-1))
    return outcome_mass(tree, edge, end)


@pytest.mark.parametrize(
    "tree",
    [build_score_tree(SURFACES, 0, 10), build_score_tree(SURFACES, 1, 5), build_label_tree(SURFACES, ["Yes", "No"])],
)
@pytest.mark.parametrize("seed", [0, 1])
def test_outcome_logmass_matches_the_engine_maths(tree, seed):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 3, size=(3, tree.n_nodes, len(SURFACES)))
    got = torch.exp(outcome_logmass(TreeIndex.of(tree, len(SURFACES)), torch.from_numpy(logits))).numpy()
    want = _reference(tree, logits)
    assert np.allclose(got, want, rtol=1e-5, atol=1e-7)
    assert (want.sum(1) < 1).all()  # some mass is off the scale: the reading is not normalised here


def test_ten_is_one_then_zero_not_one():
    """'10' spelled "1","0" feeds 10, and a "1" followed by "0" does not count as 1."""
    tree = build_score_tree(SURFACES, 0, 10)
    index = TreeIndex.of(tree, len(SURFACES))
    logits = np.full((1, tree.n_nodes, len(SURFACES)), -30.0)
    one, zero = SURFACES.index("1"), SURFACES.index("0")
    stop = SURFACES.index(".")
    logits[0, 0, one] = 10  # root: "1"
    node_1 = next(i for i in range(1, tree.n_nodes) if tree.texts[i] == "1")
    logits[0, node_1, zero] = 10  # after "1": "0"
    for i in range(1, tree.n_nodes):
        if tree.texts[i] == "10":
            logits[0, i, stop] = 10  # after "10": the numeral ends
    mass = torch.exp(outcome_logmass(index, torch.from_numpy(logits)))[0].numpy()
    assert mass[10] > 0.99 and mass[1] < 1e-6


def test_gradients_flow_to_the_logits():
    tree = build_score_tree(SURFACES, 1, 5)
    logits = torch.zeros((2, tree.n_nodes, len(SURFACES)), dtype=torch.float64, requires_grad=True)
    torch.logsumexp(outcome_logmass(TreeIndex.of(tree, len(SURFACES)), logits), 1).sum().backward()
    assert logits.grad is not None and logits.grad.abs().sum() > 0


@pytest.mark.parametrize(
    ("value", "want"),
    [(1.0, [1, 0, 0, 0, 0]), (5.0, [0, 0, 0, 0, 1]), (3.5, [0, 0, 0.5, 0.5, 0]), (11 / 3, [0, 0, 1 / 3, 2 / 3, 0])],
)
def test_soft_target_spreads_a_mean_rating_over_its_two_scores(value, want):
    assert np.allclose(soft_target(value, 1, 5), want)
