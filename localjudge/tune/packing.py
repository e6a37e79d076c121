"""Packs: the prompts of one group laid out as one sequence, their shared prefix computed once.

The 16 summaries of an article share the G-Eval instructions and the article itself: hundreds of
tokens that a row per prompt would run 16 times. A pack holds the group's common token prefix
once, then each member's own tokens followed by the score tree:

    [prefix | seg 1 | tree 1 | seg 2 | tree 2 | ...]

A member's tokens see the prefix and their own earlier tokens; a tree node sees the prefix, its
member's whole segment and its own ancestors. Positions restart after the prefix for each member,
so every member is laid out exactly as it would be alone (`engine.masks` does the same for one
prompt and its tree). Pure: token ids and a tree in, index arrays out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from localjudge.engine.masks import tree_ancestry
from localjudge.scoring.trie import TokenTree


@dataclass(frozen=True)
class Pack:
    """One packed sequence of T tokens holding M members, each read at its tree's N nodes.

    Attributes:
        ids: (T,) token ids; tree nodes carry their node's token.
        positions: (T,) position id of every token.
        mask: (T, T) bool, True where query i may attend to key j.
        reads: (M, N) index into the sequence of each member's root (column 0: its last prompt
            token) and of its tree nodes 1..N-1.
        members: index of each member in the list the pack was built from.
    """

    ids: np.ndarray
    positions: np.ndarray
    mask: np.ndarray
    reads: np.ndarray
    members: tuple[int, ...]

    @property
    def n_tokens(self) -> int:
        return len(self.ids)


def common_prefix(rows: Sequence[Sequence[int]]) -> int:
    """Length of the token prefix every row shares, leaving each row at least one token of its own.

    Examples:
        >>> common_prefix([[1, 2, 3], [1, 2, 4, 5]])
        2
        >>> common_prefix([[1, 2], [1, 2]])  # identical rows keep their last token apart
        1
    """
    shortest = min(len(r) for r in rows)
    n = 0
    while n < shortest - 1 and all(r[n] == rows[0][n] for r in rows):
        n += 1
    return n


def build_pack(rows: Sequence[Sequence[int]], tree: TokenTree, members: Sequence[int]) -> Pack:
    """Lays out `rows` (each a whole prompt's token ids) and a tree behind each, sharing their prefix."""
    shared = common_prefix(rows) if len(rows) > 1 else len(rows[0]) - 1
    ancestry = tree_ancestry(tree)  # (N-1, N-1)
    n_tree = tree.n_nodes - 1
    depths = tree.depths[1:]  # (N-1,)
    tree_ids = tree.token_ids[1:]  # (N-1,)
    segs = [list(r[shared:]) for r in rows]
    total = shared + sum(len(s) + n_tree for s in segs)
    ids = np.empty(total, dtype=np.int64)
    positions = np.empty(total, dtype=np.int64)
    mask = np.zeros((total, total), dtype=bool)
    reads = np.empty((len(rows), tree.n_nodes), dtype=np.int64)
    ids[:shared] = rows[0][:shared]
    positions[:shared] = np.arange(shared)
    mask[:shared, :shared] = np.tri(shared, dtype=bool)
    at = shared
    for m, seg in enumerate(segs):
        s, start, tree_at = len(seg), at, at + len(seg)
        ids[start:tree_at] = seg
        positions[start:tree_at] = shared + np.arange(s)
        mask[start:tree_at, :shared] = True
        mask[start:tree_at, start:tree_at] = np.tri(s, dtype=bool)
        end = tree_at + n_tree
        ids[tree_at:end] = tree_ids
        positions[tree_at:end] = shared + s - 1 + depths
        mask[tree_at:end, :shared] = True
        mask[tree_at:end, start:tree_at] = True
        mask[tree_at:end, tree_at:end] = ancestry
        reads[m, 0] = tree_at - 1
        reads[m, 1:] = np.arange(tree_at, end)
        at = end
    return Pack(ids, positions, mask, reads, tuple(members))


def plan_packs(rows: Sequence[Sequence[int]], groups: Sequence[str], tree: TokenTree, max_tokens: int) -> list[Pack]:
    """Packs per group, in order of first appearance, each cut to at most `max_tokens` tokens where it can be.

    A member longer than `max_tokens` on its own gets a pack of its own.
    """
    by_group: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        by_group.setdefault(g, []).append(i)
    n_tree = tree.n_nodes - 1
    packs = []
    for members in by_group.values():
        members = sorted(members, key=lambda i: tuple(rows[i]))  # neighbours share the longest prefixes
        chunk: list[int] = []
        for i in members:
            trial = chunk + [i]
            if chunk and _packed_length([rows[j] for j in trial], n_tree) > max_tokens:
                packs.append(build_pack([rows[j] for j in chunk], tree, chunk))
                trial = [i]
            chunk = trial
        packs.append(build_pack([rows[j] for j in chunk], tree, chunk))
    return packs


def _packed_length(rows: Sequence[Sequence[int]], n_tree: int) -> int:
    shared = common_prefix(rows) if len(rows) > 1 else len(rows[0]) - 1
    return shared + sum(len(r) - shared + n_tree for r in rows)
