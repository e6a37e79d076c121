"""The transformers backend: one batched forward over prompt + token tree per batch.

For a batch of B prompts and a tree of N nodes (root + T tokens), the model sees the prompts
left-padded to width P followed by the T tree tokens, with the mask of `masks.tree_mask`. The last
T + 1 positions hold the final hidden states at the root and at every tree node, which is all the
exact score math needs: no per-score or per-example forward pass. `tree_head.read_tree` applies
the output layer only at the nodes that can move the score."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from localjudge.engine import masks
from localjudge.engine.batching import plan_batches
from localjudge.engine.decoding import GreedyDecoding
from localjudge.engine.likelihood import ContinuationScoring
from localjudge.engine.oom import run_with_backoff
from localjudge.engine.options import EngineOptions
from localjudge.engine.prefix import expand_cache, plan_prefix_batches, shared_prefix_len
from localjudge.engine.tree_head import read_tree, split_model
from localjudge.engine.vocab import token_surfaces
from localjudge.errors import ContextLengthError, DataError, ModelUnavailableError, clip
from localjudge.scoring.distribution import TreeLogprobs
from localjudge.scoring.trie import TokenTree

log = logging.getLogger("localjudge")

Progress = Callable[[int], None]


def _identity(x):
    return x


class HFBackend(GreedyDecoding, ContinuationScoring):
    """Runs a transformers causal LM for exact tree scoring, greedy generation and log-likelihoods.

    Args:
        model: a loaded `PreTrainedModel` in eval mode, on its device.
        tokenizer: its tokenizer.
        max_context: longest prompt allowed, in tokens.
        options: resolved engine options: `token_budget` padded tokens per forward batch (prompt +
            tree); `reuse_prefix` computes a prefix shared by a batch's prompts once (KV cache);
            `tree_tolerance` is the path probability a tree node may carry and still be left
            unread, relative to the valid mass (`engine.tree_head`), 0 reads every node.
    """

    def __init__(self, model: Any, tokenizer: Any, max_context: int, options: EngineOptions):
        import torch

        assert options.token_budget is not None, "resolve the options first (EngineOptions.resolve)"
        self.model = model
        self.tokenizer = tokenizer
        self.max_context = max_context
        self.options = options
        self.head_rows = 0  # output-layer rows computed by tree scoring, for the statistics
        self._split: Any = None  # (decoder, head), False when they do not reproduce the logits
        self.last_plan = None  # the BatchPlan of the latest scoring call, for padding statistics
        self.device = next(model.parameters()).device
        config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
        self._layer_types = tuple(getattr(config, "layer_types", None) or ())
        self._window = getattr(config, "sliding_window", None)
        unknown = set(self._layer_types) - {"full_attention", "sliding_attention"}
        if unknown:
            raise ModelUnavailableError(
                f"attention layer types {sorted(unknown)} are not supported by the tree scorer; "
                "use a model with full or sliding-window attention"
            )
        self._eager = getattr(config, "_attn_implementation", "sdpa") == "eager"
        self._cache_kw = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        self._pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self._torch = torch
        self._surfaces: list[str] | None = None
        head = model.get_output_embeddings()
        self._logit_width = head.weight.shape[0] if head is not None else config.vocab_size

    @property
    def token_budget(self) -> int:
        """Padded tokens per forward batch (`options.token_budget`)."""
        assert self.options.token_budget is not None
        return self.options.token_budget

    # -- tokens ---------------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        """Token ids exactly as `tokenizer(text)` gives them (default special tokens)."""
        return list(self.tokenizer(text)["input_ids"])

    def token_surfaces(self) -> list[str]:
        """Text each token id adds when it follows other text, indexed by token id."""
        if self._surfaces is None:
            self._surfaces = token_surfaces(self.tokenizer)
        return self._surfaces

    def apply_chat_template(self, messages: list[dict[str, str]]) -> str:
        """The conversation rendered by the tokenizer's chat template, ready for the judge's turn."""
        text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        bos = self.tokenizer.bos_token
        # tokenizer(text) adds BOS itself when the template also writes it: keep only one
        if bos and text.startswith(bos) and self.encode("x")[:1] == [self.tokenizer.bos_token_id]:
            text = text[len(bos) :]
        return text

    def check_lengths(self, ids: Sequence[Sequence[int]], names: Sequence[str] | None = None) -> None:
        """Raises `ContextLengthError` naming the first prompt that is empty or too long."""
        for i, row in enumerate(ids):
            label = names[i] if names else f"prompt {i}"
            if not row:
                raise ContextLengthError(f"{label} is empty after tokenisation; give it some text")
            if len(row) > self.max_context:
                raise ContextLengthError(
                    f"{label} has {len(row)} tokens, more than the judge's context of "
                    f"{self.max_context}; shorten it or pass --truncate"
                )

    # -- exact tree scoring -----------------------------------------------------------------------

    def tree_logprobs(
        self, ids: Sequence[Sequence[int]], tree: TokenTree, progress: Progress | None = None
    ) -> TreeLogprobs:
        """Edge and end log-probabilities at every tree node for every prompt, in input order."""
        self.check_lengths(ids)
        n = tree.n_nodes
        ancestry = masks.tree_ancestry(tree)
        # models may pad their output layer beyond the tokenizer (Qwen2.5: 152064 vs 151665);
        # those ids are never produced as text, so they count as ending the outcome
        cont = np.ones(self._logit_width, dtype=bool)
        cont[tree.continue_ids[tree.continue_ids < self._logit_width]] = False  # True where a token ends it
        ends_mask = self._torch.from_numpy(cont).to(self.device)
        # the plain forward keeps N × V logits per row: cap the batch like tokens of hidden state
        with self._torch.inference_mode():
            read_apart = self._split_head() is not None
        vocab_rows = 256 if read_apart else max(1, (64 * 2**20) // (n * self._logit_width))
        if self.options.reuse_prefix and len(ids) > 1:
            plan = plan_prefix_batches(ids, self.token_budget, n - 1, vocab_rows)
        else:
            plan = plan_batches([len(r) + n - 1 for r in ids], self.token_budget, max_batch=vocab_rows)
        self.last_plan = plan
        edge = np.zeros((len(ids), n))
        end = np.zeros((len(ids), n))
        prefix_memo: dict[tuple[int, ...], Any] = {}

        def run(batch: Sequence[int]) -> list[tuple[np.ndarray, np.ndarray]]:
            rows = [ids[i] for i in batch]
            shared = shared_prefix_len(rows) if self.options.reuse_prefix else 0
            if not shared:
                return self._tree_batch(rows, tree, ancestry, ends_mask)
            cache = self._cached_prefill(prefix_memo, rows[0][:shared])
            return self._tree_batch([r[shared:] for r in rows], tree, ancestry, ends_mask, cache, shared)

        for batch in plan.batches:
            rows = run_with_backoff(batch, run)
            for i, (e, f) in zip(batch, rows):
                edge[i], end[i] = e, f
            if progress:
                progress(len(batch))
        return TreeLogprobs(edge, end)

    def _cached_prefill(self, memo: dict[tuple[int, ...], Any], prefix: Sequence[int]):
        """The KV cache of `prefix`, computed unless it is the one in `memo` (one alive at a time)."""
        key = tuple(prefix)
        if key not in memo:
            memo.clear()
            memo[key] = self._prefill(list(key))
        return memo[key]

    def _prefill(self, prefix: list[int]):
        """KV cache of a shared prefix (batch of one), full length on every layer."""
        from transformers import DynamicCache

        torch = self._torch
        positions = torch.arange(len(prefix)).unsqueeze(0)
        real = torch.ones_like(positions, dtype=torch.bool)
        no_tree = np.zeros((0, 0), dtype=bool)
        attn = self._attention([len(prefix)], len(prefix), no_tree, positions, real)
        cache = DynamicCache()  # no config: sliding layers keep every key, our masks apply windows
        with torch.inference_mode():
            self.model(
                input_ids=torch.tensor([prefix], device=self.device),
                attention_mask=attn,
                position_ids=positions.to(self.device),
                use_cache=True,
                logits_to_keep=1,
                **{self._cache_kw: cache},
            )
        return cache

    def _tree_batch(self, rows, tree, ancestry, ends_mask, prefix_cache=None, shared: int = 0):
        """Logits at the root and every tree node for a batch, optionally after a cached prefix."""
        torch = self._torch
        lengths = [len(r) for r in rows]
        width = max(lengths)
        t = tree.n_nodes - 1
        prompts = masks.pad_rows(rows, self._pad_id).ids  # (B, P)
        nodes = torch.as_tensor(tree.token_ids[1:], dtype=torch.long).expand(len(rows), t)  # (B, T)
        ids = torch.cat([prompts, nodes], 1)  # (B, P + T)
        positions, real = masks.layout(lengths, width, tree)
        kw: dict[str, Any] = {"use_cache": False}
        if prefix_cache is not None:
            positions = positions + shared
            # the prefix occupies key slots 0..shared-1 at positions 0..shared-1, seen by all rows
            ppos = torch.arange(shared).expand(len(rows), shared)
            attn = self._attention(
                lengths,
                width,
                ancestry,
                torch.cat([ppos, positions], 1),
                torch.cat([torch.ones_like(ppos, dtype=torch.bool), real], 1),
                shared,
            )
            kw = {"use_cache": True, self._cache_kw: expand_cache(prefix_cache, len(rows))}
        else:
            attn = self._attention(lengths, width, ancestry, positions, real)
        with torch.inference_mode():
            split = self._split_head()
            if split is not None:
                decoder, head = split
                out = decoder(
                    input_ids=ids.to(self.device), attention_mask=attn, position_ids=positions.to(self.device), **kw
                )
                states = out.last_hidden_state[:, -(t + 1) :]  # (B, N, H)
            else:
                # the model's own logits at every node; the reader's output layer is then the identity
                states = self.model(
                    input_ids=ids.to(self.device),
                    attention_mask=attn,
                    position_ids=positions.to(self.device),
                    logits_to_keep=t + 1,
                    **kw,
                ).logits
                head = _identity
            read = read_tree(states, head, tree, ends_mask, self.options.tree_tolerance)
        self.head_rows += read.rows if split is not None else states.shape[0] * states.shape[1]
        return [(read.edge[b], read.end[b]) for b in range(len(rows))]

    def _split_head(self):
        """(decoder, output layer) when applying them apart reproduces the model's logits, else None."""
        if self._split is None:
            self._split = split_model(self.model, self.encode("Score: 5 of 10")) or False
        return self._split or None

    def _attention(self, lengths, width, ancestry, positions, real, shared: int = 0):
        """The mask in the form the model takes: one tensor, or one per attention layer type."""

        def build(window):
            m = masks.tree_mask(lengths, width, ancestry, positions, real, window, shared)
            m = masks.additive(m, self.model.dtype) if self._eager else m
            return m.to(self.device)

        return self._per_layer_type(build)

    def _per_layer_type(self, build: Callable[[int | None], Any]):
        """One mask for the model, or one per attention layer type when full and sliding layers mix."""
        kinds = set(self._layer_types)
        if len(kinds) > 1:
            return {"full_attention": build(None), "sliding_attention": build(self._window)}
        if kinds == {"sliding_attention"} or (not kinds and self._window):
            return build(self._window)
        return build(None)

    # -- likelihood --------------------------------------------------------------------------------

    def encode_continuation(self, text: str) -> list[int]:
        """Token ids of `text` tokenised on its own, no special tokens, spelling exactly `text`.

        A tokenizer that puts a space in front of text on its own (SentencePiece's dummy prefix:
        "It" -> "▁It") is given the text after an anchor ("\n", then "a") whose tokens are dropped.

        Raises:
            DataError: no anchor gives tokens that spell the text (start it with a space).
        """
        if not text:
            return []
        ids = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        if self._spelled(ids) != " " + text:
            return ids
        for anchor_text in ("\n", "a"):
            anchor = list(self.tokenizer(anchor_text, add_special_tokens=False)["input_ids"])
            joined = list(self.tokenizer(anchor_text + text, add_special_tokens=False)["input_ids"])
            if joined[: len(anchor)] == anchor and self._spelled(joined[len(anchor) :]) == text:
                return joined[len(anchor) :]
        raise DataError(
            f"cannot tokenise the continuation {clip(text, 40)} apart from its prompt without adding a "
            "space; start it with a space"
        )

    def _spelled(self, ids: Sequence[int]) -> str:
        """The text token ids add when they follow other text."""
        kw = {"skip_special_tokens": False, "clean_up_tokenization_spaces": False}
        anchor = self.tokenizer("a", add_special_tokens=False)["input_ids"][-1:]
        head = self.tokenizer.decode(anchor, **kw)
        text = self.tokenizer.decode(anchor + list(ids), **kw)
        return text[len(head) :] if text.startswith(head) else text
