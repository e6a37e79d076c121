"""The packed layout of the batch-invariant engine: every row's tokens back to back, no padding.

A forward over B rows (each after a cached prefix of S tokens) followed by the same T tail tokens
(a score tree's nodes) runs one sequence of N tokens:

    [row 0 | its tail | row 1 | its tail | ... | row B-1 | its tail | pad to a multiple of G]

so the linear layers, norms and activations see only real tokens (a handful of grid pads at the
end). Attention runs in query blocks (`engine.attention`) whose keys and masks this module plans
from the layout alone: block j of a row holds its queries [jG, (j+1)G) and attends to the prefix
and the row's key slots [0, (j+1)G); the tail attends to the prefix, the row's slots up to
round_up(n, G) and its own ancestors. A slot of a row past its last token is a *masked* key
(exact zero weight), a query slot past it a dummy whose output is dropped, so each block has the
shape a run of the row alone gives it, whatever its companions: that is what makes results
bitwise batch-invariant.

Key slots are numbered [cached prefix 0..S-1 | this forward's N tokens | tokens decoded later].
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch


def round_up(n: int, grid: int) -> int:
    """n rounded up to a multiple of grid."""
    return -(-n // grid) * grid


@dataclass(frozen=True)
class Packing:
    """Where each row's tokens sit in a packed forward.

    Examples:
        >>> p = Packing.of([3, 1], tail=2, shared=0, grid=4)
        >>> p.starts.tolist(), p.tails.tolist(), p.total
        ([0, 5], [3, 6], 8)
    """

    lengths: tuple[int, ...]
    """n_b, real tokens of each row after the prefix."""
    tail: int
    """T, tokens appended to every row (a score tree's nodes)."""
    shared: int
    """S, tokens of the cached prefix before every row (a multiple of the grid)."""
    grid: int
    """G, the query block size."""
    starts: np.ndarray
    """(B,) slot of each row's first token in this forward."""
    total: int
    """N, tokens of the forward, grid pads at the end included."""

    @staticmethod
    def of(lengths: Sequence[int], tail: int, shared: int, grid: int) -> Packing:
        """The packing of rows of these lengths, each followed by `tail` tokens."""
        sizes = np.asarray(lengths, dtype=np.int64) + tail
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        return Packing(tuple(int(n) for n in lengths), tail, shared, grid, starts, round_up(int(sizes.sum()), grid))

    @property
    def tails(self) -> np.ndarray:
        """(B,) slot of each row's first tail token."""
        return self.starts + np.asarray(self.lengths, dtype=np.int64)

    def ids(self, rows: Sequence[Sequence[int]], tail: np.ndarray | None, pad_id: int) -> torch.Tensor:
        """(1, N) token ids: each row then the tail, pads at the end."""
        flat = np.full(self.total, pad_id, dtype=np.int64)
        for b, row in enumerate(rows):
            flat[self.starts[b] : self.tails[b]] = row
            if self.tail:
                assert tail is not None  # a packing with tail tokens is given them
                flat[self.tails[b] : self.tails[b] + self.tail] = tail
        return torch.from_numpy(flat)[None]

    def positions(self, depths: np.ndarray | None) -> torch.Tensor:
        """(1, N) position ids: S + i for row token i, S + n - 1 + depth for a tail token (pads 0)."""
        pos = np.zeros(self.total, dtype=np.int64)
        for b, n in enumerate(self.lengths):
            pos[self.starts[b] : self.tails[b]] = self.shared + np.arange(n)
            if self.tail:
                assert depths is not None
                pos[self.tails[b] : self.tails[b] + self.tail] = self.shared + n - 1 + depths
        return torch.from_numpy(pos)[None]


@dataclass(frozen=True)
class Group:
    """Query blocks of one shape, q queries over k keys each (n blocks)."""

    queries: torch.Tensor
    """(n, q) query slot of each block query (a dummy repeats a real slot of its row)."""
    keys: torch.Tensor
    """(n, k) key slot of each block key (a masked one points at slot 0)."""
    allowed: torch.Tensor
    """(n, q, k) bool: the query may attend to the key, before any sliding window."""
    distance: torch.Tensor
    """(n, q, k) query position minus key position, for sliding windows."""
    write: torch.Tensor
    """(m,) flat index into the (n, q) block queries of each real query, in slot order below."""
    slots: torch.Tensor
    """(m,) the query slot each real query writes."""


@dataclass(frozen=True)
class Blocks:
    """Every query block of a forward, grouped by shape, and the masks built from them."""

    groups: tuple[Group, ...]
    markers: dict[int, int | None] = field(default_factory=dict, compare=False, repr=False)
    """data_ptr of each mask marker the model is given -> the attention window it stands for."""
    masks: dict = field(default_factory=dict, compare=False, repr=False)
    """(group, window, heads per key head) -> (n, 1, rep * q, k) mask, built once per forward."""

    def mask(self, k: int, window: int | None, rep: int) -> torch.Tensor:
        """Group k's mask under a sliding window (None: full attention), its rows repeated per query head."""
        memo = (k, window, rep)
        if memo not in self.masks:
            g = self.groups[k]
            m = g.allowed if window is None else g.allowed & (g.distance < window)  # (n, q, k)
            n, q, kk = m.shape
            self.masks[memo] = m[:, None, None].expand(n, 1, rep, q, kk).reshape(n, 1, rep * q, kk)
        return self.masks[memo]

    def marker(self, window: int | None, device: torch.device) -> torch.Tensor:
        """A (1, 1, 1, 1) tensor passed as the model's attention mask for layers of this window.

        The model hands it to the attention function untouched (a 4D mask is used as given), which
        reads the window back from it; the real masks are the blocks' own.
        """
        t = torch.zeros((1, 1, 1, 1), dtype=torch.bool, device=device)
        self.markers[t.data_ptr()] = window
        return t


@dataclass(frozen=True)
class _Member:
    """One block being planned: its query and key slots, positions and validity (numpy arrays)."""

    qslot: np.ndarray  # (q,)
    qpos: np.ndarray  # (q,)
    qreal: np.ndarray  # (q,) bool
    kslot: np.ndarray  # (k,)
    kpos: np.ndarray  # (k,)
    kreal: np.ndarray  # (k,) bool
    anc: np.ndarray | None = None  # (q, k) who sees whom among tail tokens; None: causal by position


def _row_keys(p: Packing, b: int, upto: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Key slots, positions and validity of the prefix and row b's slots [0, upto)."""
    n, s = p.lengths[b], p.shared
    i = np.arange(upto)
    real = i < n
    slot = np.concatenate([np.arange(s), np.where(real, s + p.starts[b] + i, 0)])
    pos = np.concatenate([np.arange(s), s + i])
    return slot, pos, np.concatenate([np.ones(s, dtype=bool), real])


def plan_forward(
    p: Packing, ancestry: np.ndarray | None = None, depths: np.ndarray | None = None, device: str | torch.device = "cpu"
) -> Blocks:
    """The query blocks of a packed forward (`Packing`): each row's blocks, then its tail's.

    Args:
        p: the layout.
        ancestry: (T, T) bool, which tail tokens each tail token sees (itself included).
        depths: (T,) depth of each tail token below its row's last token.
        device: where the plan's tensors live (the model's device).

    Examples:
        >>> b = plan_forward(Packing.of([3], tail=1, shared=0, grid=2), np.ones((1, 1), bool), np.array([1]))
        >>> [(tuple(g.queries.shape), tuple(g.keys.shape)) for g in b.groups]
        [((1, 2), (1, 2)), ((1, 2), (1, 4)), ((1, 1), (1, 5))]
    """
    members: dict[tuple[int, int], list[_Member]] = defaultdict(list)
    g, s = p.grid, p.shared
    for b, n in enumerate(p.lengths):
        first = p.starts[b]
        for start in range(0, n, g):
            i = start + np.arange(g)
            real = i < n
            qslot = first + np.where(real, i, n - 1)
            kslot, kpos, kreal = _row_keys(p, b, start + g)
            members[(g, len(kslot))].append(_Member(qslot, s + i, real, kslot, kpos, kreal))
        if p.tail:
            assert ancestry is not None and depths is not None
            kslot, kpos, kreal = _row_keys(p, b, round_up(n, g))
            tslot = s + p.tails[b] + np.arange(p.tail)
            tpos = s + n - 1 + depths
            anc = np.concatenate([np.ones((p.tail, len(kslot)), dtype=bool), ancestry], axis=1)
            member = _Member(
                p.tails[b] + np.arange(p.tail),
                tpos,
                np.ones(p.tail, dtype=bool),
                np.concatenate([kslot, tslot]),
                np.concatenate([kpos, tpos]),
                np.concatenate([kreal, np.ones(p.tail, dtype=bool)]),
                anc,
            )
            members[(p.tail, len(member.kslot))].append(member)
    return _blocks(members, device)


def plan_step(p: Packing, fed: int, device: str | torch.device = "cpu") -> Blocks:
    """The blocks of one decoding step: a new token per row, after `fed` tokens decoded before.

    Row b's new token (query slot b of the step) attends to the prefix, its row's slots up to
    round_up(n, G) and its own decoded tokens, which sit after the forward's N slots, one per row
    per step: slot S + N + j * B + b for the j-th (this step's is j = fed).
    """
    members: dict[tuple[int, int], list[_Member]] = defaultdict(list)
    rows = len(p.lengths)
    for b, n in enumerate(p.lengths):
        kslot, kpos, kreal = _row_keys(p, b, round_up(n, p.grid))
        j = np.arange(fed + 1)
        new_pos = p.shared + n + j
        member = _Member(
            np.array([b]),
            new_pos[-1:],
            np.ones(1, dtype=bool),
            np.concatenate([kslot, p.shared + p.total + j * rows + b]),
            np.concatenate([kpos, new_pos]),
            np.concatenate([kreal, np.ones(fed + 1, dtype=bool)]),
        )
        members[(1, len(member.kslot))].append(member)
    return _blocks(members, device)


def plan_fresh_step(p: Packing, fed: int, device: str | torch.device = "cpu") -> Blocks:
    """The blocks of one decoding step laid out as a fresh forward over the row would lay out its last token.

    Row b's new token sits at row position m = n + fed; a forward over the row's m + 1 tokens puts
    it in query block j = m // G, G queries at [jG, (j+1)G) over the prefix and the row's positions
    [0, (j+1)G), in position order, those past m masked (`plan_forward`). This step gives it that
    block: the same G query rows (the others dummies repeating it, their outputs dropped) and the
    same keys in the same order, the row's own slots, then its decoded tokens' slots (as in
    `plan_step`), then masked ones. The attention call then has the forward's shape and operands,
    so the new token's state is bitwise a fresh forward's (a step reads G queries, not one).
    """
    members: dict[tuple[int, int], list[_Member]] = defaultdict(list)
    rows, g, s = len(p.lengths), p.grid, p.shared
    for b, n in enumerate(p.lengths):
        m = n + fed
        start = m - m % g
        i = np.arange(start + g)  # row positions of the block's keys
        given, decoded = i < n, (i >= n) & (i <= m)
        slot = np.where(given, s + p.starts[b] + i, np.where(decoded, s + p.total + (i - n) * rows + b, 0))
        q = start + np.arange(g)
        member = _Member(
            np.full(g, b),
            s + q,
            q == m,
            np.concatenate([np.arange(s), slot]),
            np.concatenate([np.arange(s), s + i]),
            np.concatenate([np.ones(s, dtype=bool), given | decoded]),
        )
        members[(g, len(member.kslot))].append(member)
    return _blocks(members, device)


def _blocks(members: dict[tuple[int, int], list[_Member]], device: str | torch.device) -> Blocks:
    groups = []
    for group in members.values():
        qpos = np.stack([m.qpos for m in group])  # (n, q)
        kpos = np.stack([m.kpos for m in group])  # (n, k)
        kreal = np.stack([m.kreal for m in group])
        allowed = kreal[:, None, :] & (kpos[:, None, :] <= qpos[:, :, None])  # (n, q, k) causal by position
        for i, m in enumerate(group):
            if m.anc is not None:
                allowed[i] = kreal[i][None, :] & m.anc
        qreal = np.stack([m.qreal for m in group])
        qslot = np.stack([m.qslot for m in group])
        parts = (
            qslot,
            np.stack([m.kslot for m in group]),
            allowed,
            qpos[:, :, None] - kpos[:, None, :],
            np.flatnonzero(qreal),
            qslot[qreal],
        )
        groups.append(Group(*(torch.from_numpy(x).to(device) for x in parts)))
    return Blocks(tuple(groups))
