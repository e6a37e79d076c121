"""The one place that builds a forward pass: canonical layout, masks, prefix cache, output layer.

Every forward of the engine (tree scoring, likelihood, greedy decoding, prefix prefill) has the
layout of `masks.layout`: [cached prefix S | row, right-padded to W | appended tokens T], with W a
multiple of the grid and S a multiple of it too (`prefix.shared_prefix_len`). A row's real tokens
then sit at the same key slots, in the same attention blocks, whatever its batch companions are,
and the slots they do not use are masked keys that add exact zeros. Together with linear layers
that only ever run fixed GEMM shapes (`engine.invariant`), that makes an item's results bitwise
the same alone, in any batch, under any token budget and prefix plan.

The output layer is applied apart from the decoder, only at the positions that are read, and in
fp32 (`fp32_head`): one bf16 step of a logit near 16 is 0.06, which alone moves a 1-5 expected
score by ~0.1; in fp32 the rows read cost little next to the body.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
import torch

from localjudge.engine import masks
from localjudge.engine.attention import plan_blocks
from localjudge.engine.invariant import live_rows
from localjudge.engine.prefix import expand_cache

ROW_BYTES = 256 * 2**20
"""Logit rows computed at once are capped near this many bytes (rows × V × 4)."""

Head = Callable[[torch.Tensor], torch.Tensor]
"""(K, H) final hidden states -> (K, V) fp32 logits."""


class Forward(NamedTuple):
    """What a forward pass returns."""

    states: torch.Tensor
    """(B, W + T, H) final hidden states; the model's logits when it cannot be split."""
    width: int
    """W, the padded row width (a multiple of the grid)."""
    cache: Any
    """The KV cache after the pass (prefix included), when asked for; else None."""


def round_up(n: int, grid: int) -> int:
    """n rounded up to a multiple of grid."""
    return -(-n // grid) * grid


def row_chunks(m: int, big: int, small: int) -> Iterator[tuple[int, int, int]]:
    """(start, stop, padded size) of the fixed-shape chunks that cover m rows.

    Examples:
        >>> list(row_chunks(40, big=16, small=8))
        [(0, 16, 16), (16, 32, 16), (32, 40, 8)]
        >>> list(row_chunks(3, big=16, small=8))
        [(0, 3, 8)]
    """
    full = m - m % big
    yield from ((s, s + big, big) for s in range(0, full, big))
    yield from ((s, min(s + small, m), small) for s in range(full, m, small))


def map_rows(
    fn: Callable[..., tuple[torch.Tensor, ...]],
    rows: Sequence[torch.Tensor],
    chunks: tuple[int, int] | None,
    cap: int,
) -> tuple[torch.Tensor, ...]:
    """`fn` over tensors with K rows each, in row chunks; its outputs joined over K.

    `fn` takes (C, ...) chunks and returns tensors whose first dim is C. With `chunks` (big, small)
    every call has one of two fixed shapes (zero rows pad the last): row reductions such as a
    log-sum-exp over the vocabulary then cannot depend on how many rows a call has. With None,
    chunks of `cap` rows only bound the memory, the last one short.
    """
    m = len(rows[0])
    if chunks is None:
        spans = [(s, min(s + cap, m), min(s + cap, m) - s) for s in range(0, m, cap)]
    else:
        spans = list(row_chunks(m, *chunks))
    if not spans:
        return fn(*rows)
    parts = [fn(*(pad_to(r[s:e], size) for r in rows)) for s, e, size in spans]
    return tuple(torch.cat([p[i][: e - s] for p, (s, e, _) in zip(parts, spans)]) for i in range(len(parts[0])))


def _identity(x: torch.Tensor) -> torch.Tensor:
    return x


def pad_to(x: torch.Tensor, rows: int) -> torch.Tensor:
    """x (K, ...) with zero rows appended up to `rows`."""
    if len(x) == rows:
        return x
    return torch.cat([x, x.new_zeros(rows - len(x), *x.shape[1:])])


class Runner:
    """Builds and runs the forwards of one model.

    Args:
        model: the transformers causal LM (linear layers made invariant or not).
        decoder: its decoder (final hidden states), or None when its logits are not its output
            layer over its decoder; then `head` is the identity and states are logits.
        head: fp32 logits from final hidden states.
        grid: row widths and cached prefixes are multiples of it (1: no rounding).
        chunks: (big, small) fixed row chunks for the output layer and its reductions; None:
            one call over all rows (not batch-invariant).
        blocks: run attention in query blocks of `grid` (`engine.attention`); the model must use
            that attention implementation.
        pad_id: token id written at padded slots.
        logit_width: rows of the output layer (the vocabulary, maybe padded).
    """

    def __init__(
        self,
        model,
        decoder,
        head: Head,
        grid: int,
        chunks: tuple[int, int] | None,
        pad_id: int,
        logit_width: int,
        blocks: bool = False,
    ):
        config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
        self.model, self.decoder, self.head = model, decoder, head
        self.grid, self.chunks, self.pad_id, self.logit_width = grid, chunks, pad_id, logit_width
        self.device = next(model.parameters()).device
        self.layer_types = tuple(getattr(config, "layer_types", None) or ())
        self.window = getattr(config, "sliding_window", None)
        self.blocks = blocks
        self.eager = getattr(config, "_attn_implementation", "sdpa") == "eager" and not blocks
        import inspect

        self.cache_kw = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"

    # -- the pass ----------------------------------------------------------------------------------

    def forward(
        self,
        rows: Sequence[Sequence[int]],
        tail: np.ndarray | None = None,
        depths: np.ndarray | None = None,
        ancestry: np.ndarray | None = None,
        cache: Any = None,
        shared: int = 0,
        keep_cache: bool = False,
    ) -> Forward:
        """One forward over rows (right-padded to the grid), each followed by the same tail tokens.

        Args:
            rows: token ids of each row after the cached prefix.
            tail: (T,) token ids appended to every row (a score tree's nodes), or None.
            depths: (T,) depth of each tail token below its row's last token.
            ancestry: (T, T) bool, which tail tokens each tail token sees (itself included).
            cache: KV cache of a prefix of `shared` tokens that every row follows (batch of one).
            shared: its length.
            keep_cache: return the cache after the pass (prefill, decoding).
        """
        from transformers import DynamicCache

        b, lengths = len(rows), [len(r) for r in rows]
        width = round_up(max(lengths), self.grid)
        t = 0 if tail is None else len(tail)
        ids = masks.pad_rows(rows, self.pad_id, side="right", width=width).ids  # (B, W)
        if t:
            ids = torch.cat([ids, torch.as_tensor(tail, dtype=torch.long).expand(b, t)], 1)  # (B, W + T)
        kpos, kreal = masks.layout(lengths, width, np.zeros(0, int) if depths is None else depths, shared)
        anc = np.zeros((t, t), dtype=bool) if ancestry is None else ancestry
        attn = self.attention(lambda w: masks.tree_mask(lengths, width, anc, kpos, kreal, w, shared))
        if cache is not None:
            cache = expand_cache(cache, b)
        elif keep_cache:
            cache = DynamicCache()  # no config: sliding layers keep every key, our masks apply windows
        kw: dict[str, Any] = {"use_cache": cache is not None}
        if cache is not None:
            kw[self.cache_kw] = cache
        if self.blocks:
            kw["localjudge_blocks"] = plan_blocks(lengths, width, t, shared, self.grid)
        positions = kpos[:, shared:].to(self.device)  # (B, W + T)
        live = self._live(lengths, width, t) if self.blocks else contextlib.nullcontext()
        with torch.inference_mode(), live:
            if self.decoder is not None:
                out = self.decoder(input_ids=ids.to(self.device), attention_mask=attn, position_ids=positions, **kw)
                states = out.last_hidden_state
            else:
                states = self.model(input_ids=ids.to(self.device), attention_mask=attn, position_ids=positions, **kw)
                states = states.logits
        return Forward(states, width, cache if keep_cache else None)

    def _live(self, lengths: Sequence[int], width: int, tail: int):
        """Only the real slots of a right-padded batch go through the (invariant) linear layers."""
        if all(n == width for n in lengths):
            return contextlib.nullcontext()
        real = np.arange(width + tail)[None, :] < np.asarray(lengths)[:, None]  # (B, W + T)
        real[:, width:] = True
        return live_rows(real.size, torch.from_numpy(np.flatnonzero(real)).to(self.device))

    def prefill(self, prefix: Sequence[int]) -> Any:
        """KV cache of a shared prefix (batch of one; its length is a multiple of the grid)."""
        return self.forward([list(prefix)], keep_cache=True).cache

    def step(
        self, tokens: torch.Tensor, cache: Any, kpos: torch.Tensor, kreal: torch.Tensor, rows: Forward, lengths, shared
    ) -> torch.Tensor:
        """One decoding step: (B,) new tokens at the last key slot -> (B, H) final states.

        Args:
            tokens: (B,) the token each row adds.
            cache: the KV cache of every slot before it.
            kpos: (B, K) position of every key slot, the new one last.
            kreal: (B, K) whether each key slot holds a real token.
            rows: the forward over the rows that the decoding follows (its width).
            lengths: real length of each row; shared: the cached prefix before them.
        """
        qpos = kpos[:, -1]  # (B,)

        def build(window: int | None) -> torch.Tensor:
            m = kreal & (kpos <= qpos.unsqueeze(1))
            if window is not None:
                m &= (qpos.unsqueeze(1) - kpos) < window
            return m[:, None, None, :]  # (B, 1, 1, K)

        attn = self.attention(build)
        kw = {"use_cache": True, self.cache_kw: cache, "position_ids": qpos.unsqueeze(1).to(self.device)}
        if self.blocks:
            generated = kpos.shape[1] - shared - rows.width - 1
            kw["localjudge_blocks"] = plan_blocks(lengths, rows.width, 1, shared, self.grid, generated)
        with torch.inference_mode():
            if self.decoder is not None:
                return self.decoder(input_ids=tokens.unsqueeze(1).to(self.device), attention_mask=attn, **kw)[0][:, -1]
            return self.model(input_ids=tokens.unsqueeze(1).to(self.device), attention_mask=attn, **kw).logits[:, -1]

    def attention(self, build: Callable[[int | None], torch.Tensor]) -> Any:
        """`build(window)` as the model takes it: one mask, or one per attention layer type."""

        def ready(window: int | None) -> torch.Tensor:
            m = build(window)
            return (masks.additive(m, self.model.dtype) if self.eager else m).to(self.device)

        kinds = set(self.layer_types)
        if len(kinds) > 1:
            return {"full_attention": ready(None), "sliding_attention": ready(self.window)}
        if kinds == {"sliding_attention"} or (not kinds and self.window):
            return ready(self.window)
        return ready(None)

    # -- the output layer --------------------------------------------------------------------------

    def map_rows(self, fn: Callable[..., tuple[torch.Tensor, ...]], *rows: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """`map_rows` with this runner's chunks."""
        return map_rows(fn, rows, self.chunks, max(1, ROW_BYTES // (4 * self.logit_width)))

    def plain(self) -> Runner:
        """The same runner on the model's own forward: logits at every slot, no split output layer."""
        out = copy.copy(self)
        out.decoder, out.head = None, _identity
        return out

    def logprobs_at(self, states: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """(K,) float64 log P(target) from (K, H) states: fp32 logits, x - logsumexp(x)."""

        def fn(h: torch.Tensor, t: torch.Tensor) -> tuple[torch.Tensor, ...]:
            logits = self.head(h).float()  # (C, V)
            lse = torch.logsumexp(logits, dim=-1)  # (C,)
            return ((logits.gather(1, t[:, None])[:, 0] - lse).double(),)

        return self.map_rows(fn, states, targets.to(states.device))[0]

    def argmax_at(self, states: torch.Tensor) -> torch.Tensor:
        """(K,) greedy token of each of (K, H) states (the first of equal logits)."""
        return self.map_rows(lambda h: (self.head(h).float().argmax(-1),), states)[0]
