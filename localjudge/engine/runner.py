"""The one place that builds a forward pass: layout, masks, prefix cache, output layer.

Two layouts, one interface (`Forward`):

- **packed** (the batch-invariant engine): every row's tokens back to back with no padding,
  attention in query blocks planned from the layout (`engine.packing`, `engine.attention`), and
  linear layers that only ever run fixed GEMM shapes (`engine.invariant`). An item's results are
  then bitwise the same alone, in any batch, under any token budget and prefix plan.
- **padded** (stock): rows right-padded to a common width W, each followed by the appended tokens,
  [cached prefix S | row, pad to W | appended T], under a 4D mask (`engine.masks`) with the model's
  own attention and layers: results agree with a row alone to float rounding.

The output layer is applied apart from the decoder, only at the positions that are read, and in
fp32 (`fp32_head`): one bf16 step of a logit near 16 is 0.06, which alone moves a 1-5 expected
score by ~0.1; in fp32 the rows read cost little next to the body.

Every pass can be observed (`engine.observe`): an observer sees a `ForwardCall` before the model
runs, for tracing or profiling; without one, a pass costs one check of an empty list.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
import torch

from localjudge.engine import masks
from localjudge.engine.observe import ForwardCall, Observers
from localjudge.engine.packing import Packing, plan_forward, plan_fresh_step, plan_step, round_up
from localjudge.engine.prefix import PrefixStore, expand_cache

ROW_BYTES = 8 * 2**20
"""Logit rows computed at once are capped near this many bytes (rows × V × 4) when rows run in no fixed
chunks: the log-sum-exp over the vocabulary then reads its rows from the cache, not from memory."""
HEAD_ROWS = 16
"""Rows per output-layer call of the batch-invariant engine (one fixed shape: 3 MB of fp32 logits for
a 49k vocabulary, 16 MB for 262k; a multiple of every GEMM plan's remainder chunk)."""

Head = Callable[[torch.Tensor], torch.Tensor]
"""(K, H) final hidden states -> (K, V) fp32 logits."""


class Forward(NamedTuple):
    """What a forward pass returns: final states of every slot, and where each row's tokens are."""

    states: torch.Tensor
    """(R, H) final hidden states of every slot, rows flattened; the model's logits when it cannot be split."""
    starts: np.ndarray
    """(B,) index in `states` of each row's first token (token i of row b: starts[b] + i)."""
    tails: np.ndarray
    """(B,) index in `states` of each row's first appended token."""
    cache: Any
    """The KV cache after the pass (prefix included), when asked for; else None."""
    layout: Any
    """The packed layout (`Packing`), or the padded one's (lengths, width, shared); decoding steps read it."""
    hidden: torch.Tensor | None = None
    """(K, R, H) the states after each of the K decoder layers asked for (`layers`), slots as in `states`;
    None when none was asked."""


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
        grid: attention block size: cached prefixes (and padded widths) are multiples of it (1: no rounding).
        chunks: (big, small) fixed row chunks for the output layer and its reductions; None:
            one call over all rows (not batch-invariant).
        blocks: the packed layout with attention in query blocks of `grid` (`engine.attention`);
            the model must use that attention implementation. False: the padded layout.
        pad_id: token id written at padded slots.
        logit_width: rows of the output layer (the vocabulary, maybe padded).
        head_rows: rows per output-layer call where a log-probability or a greedy token is read
            at many positions (a multiple of the small chunk on which the layer's rows are the
            same bits); None: the big chunk.
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
        head_rows: int | None = None,
    ):
        config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
        self.model, self.decoder, self.head = model, decoder, head
        self.grid, self.chunks, self.pad_id, self.logit_width = grid, chunks, pad_id, logit_width
        self.head_rows = head_rows or (chunks[0] if chunks else 0)
        self.device = next(model.parameters()).device
        self.layer_types = tuple(getattr(config, "layer_types", None) or ())
        self.window = getattr(config, "sliding_window", None)
        self.blocks = blocks
        self.eager = getattr(config, "_attn_implementation", "sdpa") == "eager" and not blocks
        import inspect

        self.cache_kw = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        self.observers = Observers()
        """Called on every pass, before the model runs (`engine.observe`)."""
        self.prefixes = PrefixStore()
        """KV caches of shared prefixes (`engine.loop`); none kept between calls unless its `keep` says."""

    def copy(self) -> Runner:
        """The same runner (model, layers, settings) with no observers or kept prefixes of its own."""
        out = copy.copy(self)
        out.observers, out.prefixes = Observers(), PrefixStore()
        return out

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
        layers: Sequence[int] = (),
    ) -> Forward:
        """One forward over rows, each followed by the same tail tokens, after a cached prefix.

        Args:
            rows: token ids of each row after the cached prefix.
            tail: (T,) token ids appended to every row (a score tree's nodes), or None.
            depths: (T,) depth of each tail token below its row's last token.
            ancestry: (T, T) bool, which tail tokens each tail token sees (itself included).
            cache: KV cache of a prefix of `shared` tokens that every row follows (batch of one).
            shared: its length (a multiple of the grid).
            keep_cache: return the cache after the pass (prefill, decoding).
            layers: decoder layers whose output states to return as `Forward.hidden` (1 is the
                first layer's output, the number of layers the final normed state).
        """
        return self._forward("batch", rows, tail, depths, ancestry, cache, shared, keep_cache, layers)

    def _forward(
        self,
        kind: str,
        rows,
        tail=None,
        depths=None,
        ancestry=None,
        cache=None,
        shared: int = 0,
        keep_cache=False,
        layers: Sequence[int] = (),
    ) -> Forward:
        from transformers import DynamicCache

        if self.observers:
            appended = 0 if tail is None else len(tail)
            self.observers.notify(ForwardCall(kind, tuple(len(r) for r in rows), shared, appended))
        if cache is not None:
            cache = expand_cache(cache, 1 if self.blocks else len(rows))
        elif keep_cache:
            cache = DynamicCache()  # no config: sliding layers keep every key, our masks apply windows
        kw: dict[str, Any] = {"use_cache": cache is not None}
        if cache is not None:
            kw[self.cache_kw] = cache
        t = 0 if tail is None else len(tail)
        if self.blocks:
            pack = Packing.of([len(r) for r in rows], t, shared, self.grid)
            ids, positions = pack.ids(rows, tail, self.pad_id), pack.positions(depths)
            kw["localjudge_blocks"] = blocks = plan_forward(pack, ancestry, depths, self.device)
            attn = self.attention(lambda w: blocks.marker(w, self.device))
            fwd = Forward(torch.empty(0), pack.starts, pack.tails, None, pack)
        else:
            ids, positions, attn, fwd = self._padded(rows, tail, depths, ancestry, shared)
        if layers:
            states, hidden = self._run_layers(ids, attn, positions, kw, layers)
            fwd = fwd._replace(hidden=hidden.reshape(len(layers), -1, hidden.shape[-1]))
        else:
            states = self._run(ids, attn, positions, kw)
        return fwd._replace(states=states.reshape(-1, states.shape[-1]), cache=cache if keep_cache else None)

    def _padded(self, rows, tail, depths, ancestry, shared: int):
        """Inputs of a padded forward: (B, W + T) ids and positions, its 4D mask, where rows sit."""
        b, lengths = len(rows), [len(r) for r in rows]
        width = round_up(max(lengths), self.grid)
        t = 0 if tail is None else len(tail)
        ids = masks.pad_rows(rows, self.pad_id, side="right", width=width).ids  # (B, W)
        if t:
            ids = torch.cat([ids, torch.as_tensor(tail, dtype=torch.long).expand(b, t)], 1)  # (B, W + T)
        kpos, kreal = masks.layout(lengths, width, np.zeros(0, int) if depths is None else depths, shared)
        anc = np.zeros((t, t), dtype=bool) if ancestry is None else ancestry
        attn = self.attention(lambda w: masks.tree_mask(lengths, width, anc, kpos, kreal, w, shared))
        starts = np.arange(b, dtype=np.int64) * (width + t)
        layout = (lengths, width, shared)
        return ids, kpos[:, shared:], attn, Forward(torch.empty(0), starts, starts + width, None, layout)

    def _run(self, ids: torch.Tensor, attn: Any, positions: torch.Tensor, kw: dict[str, Any]) -> torch.Tensor:
        """The model (or its decoder) over (B, L) ids: (B, L, H) final states, or logits."""
        with torch.inference_mode():
            ids, positions = ids.to(self.device), positions.to(self.device)
            if self.decoder is not None:
                return self.decoder(input_ids=ids, attention_mask=attn, position_ids=positions, **kw).last_hidden_state
            return self.model(input_ids=ids, attention_mask=attn, position_ids=positions, **kw).logits

    def _run_layers(
        self, ids: torch.Tensor, attn: Any, positions: torch.Tensor, kw: dict[str, Any], layers: Sequence[int]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """`_run` that also keeps the states after each layer of `layers`: (B, L, H) and (K, B, L, H)."""
        with torch.inference_mode():
            ids, positions = ids.to(self.device), positions.to(self.device)
            net = self.decoder if self.decoder is not None else self.model
            out = net(input_ids=ids, attention_mask=attn, position_ids=positions, output_hidden_states=True, **kw)
            # hidden_states[0] is the embedding, [i] layer i's output; the last one carries the final norm
            every = out.hidden_states
            if max(layers) >= len(every) or min(layers) < 1:
                raise ValueError(f"layers {list(layers)} outside 1..{len(every) - 1}")
            final = out.last_hidden_state if self.decoder is not None else out.logits
            return final, torch.stack([every[i] for i in layers])

    def prefill(self, prefix: Sequence[int]) -> Any:
        """KV cache of a shared prefix (batch of one; its length is a multiple of the grid)."""
        return self._forward("prefill", [list(prefix)], keep_cache=True).cache

    def step(self, tokens: torch.Tensor, rows: Forward, fed: int, fresh: bool = False) -> torch.Tensor:
        """One decoding step: (B,) new tokens, one per row, after `fed` decoded before -> (B, H) final states.

        Args:
            tokens: (B,) the token each row adds, at position S + n_b + fed.
            rows: the forward over the rows that the decoding follows (its cache holds every key
                slot before these tokens).
            fed: tokens each row was given in earlier steps.
            fresh: in the packed layout, attend in the block a fresh forward over the row would give
                the token (`plan_fresh_step`): its state is then bitwise that forward's, for a
                block of `grid` queries instead of one. The padded layout has one step.
        """
        if self.observers:
            prefix = rows.layout.shared if self.blocks else rows.layout[2]
            self.observers.notify(ForwardCall("step", (1,) * len(tokens), prefix, 0))
        kw: dict[str, Any] = {"use_cache": True, self.cache_kw: rows.cache}
        if self.blocks:
            pack: Packing = rows.layout
            kw["localjudge_blocks"] = blocks = (plan_fresh_step if fresh else plan_step)(pack, fed, self.device)
            attn = self.attention(lambda w: blocks.marker(w, self.device))
            positions = (pack.shared + torch.tensor(pack.lengths) + fed)[None]  # (1, B)
            return self._run(tokens[None], attn, positions, kw)[0]  # (B, H)
        lengths, width, shared = rows.layout
        kpos, kreal = masks.layout(lengths, width, np.zeros(0, dtype=int), shared)  # (B, S + W) each
        new = shared + torch.tensor(lengths)[:, None] + torch.arange(fed + 1)[None]  # (B, fed + 1) decoded tokens
        kpos, kreal = torch.cat([kpos, new], 1), torch.cat([kreal, torch.ones_like(new, dtype=torch.bool)], 1)
        qpos = kpos[:, -1]  # (B,)

        def build(window: int | None) -> torch.Tensor:
            m = kreal & (kpos <= qpos.unsqueeze(1))
            if window is not None:
                m &= (qpos.unsqueeze(1) - kpos) < window
            return m[:, None, None, :]  # (B, 1, 1, K)

        return self._run(tokens.unsqueeze(1), self.attention(build), qpos.unsqueeze(1), kw)[:, -1]

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
        out = self.copy()
        out.decoder, out.head = None, _identity
        return out

    def map_head(self, reduce: Callable[..., torch.Tensor], states: torch.Tensor, *rows: torch.Tensor) -> torch.Tensor:
        """`reduce(logits, *rows)` over fp32 logits of (K, H) states, joined over K.

        With fixed chunks the output layer runs on `head_rows` rows per call where it can (its own
        GEMM plan's big chunk, probed bitwise against the small one, so a row's logits are the same
        bits either way) and `reduce` always sees slices of the small chunk: each weight row is
        streamed once per `head_rows` rows read, and every reduction keeps its one shape.
        """
        if self.chunks is None:
            return self.map_rows(lambda h, *r: (reduce(self.head(h).float(), *r),), states, *rows)[0]
        small = self.chunks[1]

        def fn(h: torch.Tensor, *r: torch.Tensor) -> tuple[torch.Tensor, ...]:
            logits = self.head(h).float()  # (C, V), C = head_rows or small
            return (
                torch.cat(
                    [reduce(logits[s : s + small], *(x[s : s + small] for x in r)) for s in range(0, len(h), small)]
                ),
            )

        return map_rows(fn, (states, *rows), (self.head_rows, small), 0)[0]

    def logprobs_at(self, states: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """(K,) float64 log P(target) from (K, H) states: fp32 logits, x - logsumexp(x)."""

        def reduce(logits: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
            lse = torch.logsumexp(logits, dim=-1)  # (C,)
            return (logits.gather(1, t[:, None])[:, 0] - lse).double()

        return self.map_head(reduce, states, targets.to(states.device))

    def top_logprobs_at(self, states: torch.Tensor, targets: torch.Tensor, k: int) -> torch.Tensor:
        """(K, 1 + 2k) float64 from (K, H) states: log P(target), then the k most likely tokens' log P, then
        their ids (the first of equal logits first), all from one fp32 log-softmax over the whole vocabulary."""

        def reduce(logits: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
            lse = torch.logsumexp(logits, dim=-1)  # (C,)
            values, ids = logits.topk(k, dim=-1)  # (C, k), most likely first
            picked = logits.gather(1, t[:, None]) - lse[:, None]  # (C, 1)
            return torch.cat([picked, values - lse[:, None], ids.to(logits.dtype)], dim=1).double()

        return self.map_head(reduce, states, targets.to(states.device))

    def argmax_at(self, states: torch.Tensor) -> torch.Tensor:
        """(K,) greedy token of each of (K, H) states (the first of equal logits)."""
        return self.map_head(lambda logits: logits.argmax(-1), states)
