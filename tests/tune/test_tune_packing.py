"""Packs lay each member out exactly as it would be alone: same positions, same visible tokens."""

from __future__ import annotations

import numpy as np
import pytest

from localjudge.scoring.trie import build_score_tree
from localjudge.tune.packing import build_pack, common_prefix, plan_packs

SURFACES = ["1", "0", "10", " ", "a", "b", "c", "d"]
TREE = build_score_tree(SURFACES, 0, 10)


def _alone(row: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Positions of a row then its tree, and, for each slot, the set of (token, position) it sees."""
    n = len(row)
    pos = np.concatenate([np.arange(n), n - 1 + TREE.depths[1:]])
    return pos, n


@pytest.mark.parametrize(
    "rows",
    [
        [[4, 5, 6, 7], [4, 5, 7], [4, 6]],
        [[4, 5], [4, 5]],  # identical rows keep one token each
        [[7, 6, 5, 4, 4, 4]],
    ],
)
def test_members_see_what_they_would_see_alone(rows):
    pack = build_pack(rows, TREE, list(range(len(rows))))
    for m, row in enumerate(rows):
        root = pack.reads[m, 0]
        seen = np.flatnonzero(pack.mask[root])
        # the root (last prompt token) sees exactly its own prompt, in order, at positions 0..n-1
        assert pack.ids[seen].tolist() == list(row)
        assert pack.positions[seen].tolist() == list(range(len(row)))
        for node in range(1, TREE.n_nodes):
            slot = pack.reads[m, node]
            assert pack.ids[slot] == TREE.token_ids[node]
            assert pack.positions[slot] == len(row) - 1 + TREE.depths[node]
            visible = set(np.flatnonzero(pack.mask[slot]).tolist())
            ancestors = {pack.reads[m, a] for a in TREE.ancestors(node)}
            assert visible == set(seen.tolist()) | ancestors


def test_common_prefix_leaves_every_row_a_token():
    assert common_prefix([[1, 2, 3], [1, 2, 4]]) == 2
    assert common_prefix([[1, 2], [1, 2, 3]]) == 1
    assert common_prefix([[9], [9]]) == 0


def test_plan_packs_groups_and_caps_tokens():
    rows = [[4, 5, 6, 7, 6], [4, 5, 6, 7, 5], [4, 5, 6, 4, 4], [7, 7, 7]]
    groups = ["a", "a", "a", "b"]
    packs = plan_packs(rows, groups, TREE, max_tokens=10_000)
    assert sorted(sorted(p.members) for p in packs) == [[0, 1, 2], [3]]
    small = plan_packs(rows, groups, TREE, max_tokens=2 * (5 + TREE.n_nodes - 1))
    assert all(p.n_tokens <= 2 * (5 + TREE.n_nodes - 1) for p in small)
    assert sorted(m for p in small for m in p.members) == [0, 1, 2, 3]
    assert len(small) == 3  # the article of three splits, the other stays alone
