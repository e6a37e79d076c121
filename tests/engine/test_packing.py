"""The packed layout and its attention blocks (pure index math, no model).

What makes results batch-invariant is that a row's blocks have the same shapes and masks whatever
its companions and whatever prefix was cached: checked here on the plans themselves; the bitwise
tests check the results.
"""

from __future__ import annotations

import numpy as np
import pytest

from localjudge.engine.packing import Packing, plan_forward, plan_step


def _by_position(blocks, pack: Packing, row: int) -> dict[int, tuple]:
    """Row `row`'s blocks keyed by the position of their first query: (shape, allowed, distance)."""
    out = {}
    lo, hi = pack.starts[row], pack.starts[row] + pack.lengths[row] + pack.tail
    for g in blocks.groups:
        for i in range(len(g.queries)):
            first = int(g.queries[i, 0])
            if lo <= first < hi:
                offset = first - pack.starts[row]
                pos = pack.shared + offset if offset < pack.lengths[row] else -1 - (offset - pack.lengths[row])
                out[pos] = (tuple(g.keys[i].shape), g.allowed[i].numpy(), g.distance[i].numpy())
    return out


def test_layout_of_rows_and_tails():
    p = Packing.of([3, 2], tail=2, shared=32, grid=4)
    assert p.starts.tolist() == [0, 5] and p.tails.tolist() == [3, 7] and p.total == 12
    ids = p.ids([[1, 2, 3], [4, 5]], np.array([8, 9]), pad_id=0)
    assert ids.tolist() == [[1, 2, 3, 8, 9, 4, 5, 8, 9, 0, 0, 0]]
    pos = p.positions(np.array([1, 2]))
    assert pos.tolist() == [[32, 33, 34, 35, 36, 32, 33, 34, 35, 0, 0, 0]]


@pytest.mark.parametrize("grid", [2, 4, 8])
def test_a_rows_blocks_do_not_depend_on_companions_or_the_cached_prefix(grid):
    rng = np.random.default_rng(0)
    tail, anc, depths = 3, np.tril(np.ones((3, 3), bool)), np.array([1, 2, 2])
    shared, n = 2 * grid, 11
    alone = Packing.of([shared + n], tail, 0, grid)
    alone_blocks = _by_position(plan_forward(alone, anc, depths), alone, 0)
    others = [int(x) for x in rng.integers(1, 20, size=4)]
    batched = Packing.of([*others[:2], n, *others[2:]], tail, shared, grid)
    got = _by_position(plan_forward(batched, anc, depths), batched, 2)
    assert got.keys() <= alone_blocks.keys() and -1 in got
    for pos, (shape, allowed, distance) in got.items():
        want_shape, want_allowed, want_distance = alone_blocks[pos]
        assert shape == want_shape
        assert np.array_equal(allowed, want_allowed) and np.array_equal(distance, want_distance)


def test_masks_hide_other_rows_pads_and_future_keys():
    p = Packing.of([3, 5], tail=0, shared=0, grid=4)
    blocks = plan_forward(p)
    for g in blocks.groups:
        for i in range(len(g.queries)):
            row = int(np.searchsorted(p.starts, int(g.queries[i, 0]), side="right") - 1)
            lo, hi = p.starts[row], p.starts[row] + p.lengths[row]
            seen = g.keys[i][g.allowed[i].any(0)]
            assert all(lo <= int(k) < hi for k in seen)  # only the row's own real keys
            real_q = (g.queries[i] >= lo) & (g.queries[i] < hi)
            assert g.allowed[i][real_q].any(1).all()  # every query sees at least one key


def test_sliding_window_masks_use_positions():
    p = Packing.of([10], tail=0, shared=0, grid=4)
    blocks = plan_forward(p)
    last = len(blocks.groups) - 1
    m = blocks.mask(last, window=3, rep=1)[0, 0]  # the block of positions 8..11
    assert m[1].nonzero().flatten().tolist() == [7, 8, 9]  # position 9 sees 7, 8, 9


def test_decoding_steps_see_the_row_and_its_own_new_tokens():
    p = Packing.of([3, 6], tail=0, shared=4, grid=4)
    blocks = plan_step(p, fed=2)
    for g in blocks.groups:
        b = int(g.queries[0, 0])
        keys = g.keys[0][g.allowed[0, 0]].tolist()
        row = [4 + p.starts[b] + i for i in range(p.lengths[b])]
        new = [4 + p.total + j * 2 + b for j in range(3)]
        assert keys == [0, 1, 2, 3, *row, *new]
