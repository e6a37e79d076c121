"""The transformers backend: one batched forward over prompt + token tree per batch.

For a batch of B prompts and a tree of N nodes (root + T tokens), the model sees every prompt
followed by the T tree tokens (`engine.runner` builds every forward: packed back to back in the
batch-invariant engine, right-padded under a 4D mask in the stock one). The state at each
prompt's last token and at its T tree tokens are the final hidden states at the root and at every
tree node, which is all the exact score math needs: no per-score or per-example forward pass. `tree_head.read_tree`
applies the output layer only at the nodes that can move the score."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from localjudge.engine import masks
from localjudge.engine.attention import use_block_attention
from localjudge.engine.batching import plan_batches
from localjudge.engine.decoding import GreedyDecoding
from localjudge.engine.invariant import GemmPlan, InvariantLinear, make_invariant, read_layer, slow_dtype
from localjudge.engine.likelihood import ContinuationScoring
from localjudge.engine.mixed import lower_linears
from localjudge.engine.oom import run_with_backoff
from localjudge.engine.options import RUNTIME_FIELDS, EngineOptions
from localjudge.engine.overflow import check_finite
from localjudge.engine.prefix import plan_prefix_batches, shared_prefix_len
from localjudge.engine.runner import HEAD_ROWS, Runner
from localjudge.engine.tree_head import read_tree, split_model
from localjudge.engine.vocab import token_surfaces
from localjudge.errors import ConfigError, ContextLengthError, DataError, ModelUnavailableError, clip
from localjudge.scoring.distribution import TreeLogprobs
from localjudge.scoring.trie import TokenTree

Progress = Callable[[int], None]
log = logging.getLogger(__name__)


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

        assert options.resolved, "resolve the options first (EngineOptions.resolve)"
        if options.dtype != "float32" and options.mixed_precision is None:
            # options not resolved by `load_judge`: the model runs as it was given, every op in its dtype
            options = options.model_copy(update={"mixed_precision": False})
        self.model = model
        self.tokenizer = tokenizer
        self.max_context = max_context
        self.options = options
        self.head_rows = 0  # output-layer rows computed by tree scoring, for the statistics
        self.last_plan = None  # the BatchPlan of the latest scoring call, for padding statistics
        self.device = next(model.parameters()).device
        config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
        unknown = set(getattr(config, "layer_types", None) or ()) - {"full_attention", "sliding_attention"}
        if unknown:
            raise ModelUnavailableError(
                f"attention layer types {sorted(unknown)} are not supported by the tree scorer; "
                "use a model with full or sliding-window attention"
            )
        self._pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self._torch = torch
        self._surfaces: list[str] | None = None
        head = model.get_output_embeddings()
        self._logit_width = head.weight.shape[0] if head is not None else config.vocab_size
        self.threads = torch.get_num_threads()
        self.gemm: GemmPlan | None = None
        """The fixed-shape GEMM plan the probe chose (None: stock layers, not batch-invariant)."""
        self.uncovered = any(p.dim() > 2 for p in model.parameters())
        """Weights the fixed-shape layers do not cover (fused mixture-of-experts tensors): no bitwise claim."""
        if options.batch_invariant and self.device.type == "cuda":
            # cuBLAS split-K with reduced-precision reductions changes a row with the row count;
            # process-wide flags, so set for every judge on CUDA (unchecked until the GPU script runs)
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
        if options.mixed_precision:
            # the linear layers in the compute dtype, the rest in fp32 (`engine.mixed`); the output
            # layer stays fp32, as the engine reads it anyway
            lower_linears(model, getattr(torch, str(options.dtype)), keep=model.get_output_embeddings())
        with torch.inference_mode():
            split = split_model(model, self.encode("Score: 5 of 10"))
            if options.batch_invariant:
                # the output layer is swapped too when it is not read apart (the plain forward)
                self.gemm = make_invariant(split.decoder if split is not None else model)
                if self.gemm is not None:
                    use_block_attention(model)
            invariant = self.gemm is not None
            head_rows = HEAD_ROWS
            if split is None:
                decoder, read_head = None, _identity
            else:
                decoder = split.decoder
                layer = read_layer(split.layer, options.fp32_head, invariant)
                read_head = split.head(layer)
                if isinstance(layer, InvariantLinear) and layer.plan.big % HEAD_ROWS == 0:
                    head_rows = layer.plan.big  # one weight pass per big chunk of rows read
        slow = slow_dtype(model)
        if slow:
            log.warning(slow)
        chunks = (HEAD_ROWS, HEAD_ROWS) if self.gemm is not None else None
        self.runner = Runner(
            model,
            decoder,
            read_head,
            options.row_grid,
            chunks,
            self._pad_id,
            self._logit_width,
            invariant,
            head_rows=head_rows,
        )

    @property
    def pad_id(self) -> int:
        """The token id this backend right-pads batches with (the tokenizer's pad token, else 0)."""
        return self._pad_id

    @property
    def bitwise(self) -> bool:
        """Whether results are claimed bitwise batch-invariant.

        The invariant options, a passed GEMM probe, and a device where the block attention was
        verified end to end: the CPU (the tests); CUDA only once the GPU script has checked it.
        """
        return (
            self.options.batch_invariant and self.gemm is not None and self.device.type == "cpu" and not self.uncovered
        )

    def record(self) -> dict[str, Any]:
        """What the engine probed and runs with, for `JudgeInfo` (so every result records it)."""
        return {
            "tree_tolerance": self.options.tree_tolerance,
            "token_budget": self.options.token_budget,
            "reuse_prefix": self.options.reuse_prefix,
            "batch_invariant": self.options.batch_invariant,
            "bitwise": self.bitwise,
            "gemm": self.gemm.describe() if self.gemm is not None else "none",
            "grid": self.runner.grid,
            "threads": self.threads,
            "fp32_head": self.options.fp32_head,
            "mixed_precision": self.options.mixed_precision,
        }

    def with_options(self, options: EngineOptions) -> HFBackend:
        """This backend (the same model, tokenizer, layers and caches) run with other run-time options.

        Raises:
            ConfigError: a setting other than `RUNTIME_FIELDS` changes (it shapes the layers, the
                dtype or the device: load the judge again), or the token budget is left open.
        """
        fixed = [
            f
            for f in EngineOptions.model_fields
            if f not in RUNTIME_FIELDS and getattr(options, f) != getattr(self.options, f)
        ]
        if fixed:
            raise ConfigError(
                f"{', '.join(fixed)} is fixed when a judge loads (it shapes the model it runs); load it again with "
                "load_judge(..., options=judge.options.replace(...))"
            )
        if not options.resolved:
            raise ConfigError("give the token budget a value (a number of tokens); None picks one only at load")
        twin = copy.copy(self)
        twin.options = options
        return twin

    @property
    def token_budget(self) -> int:
        """Padded tokens per forward batch (`options.token_budget`)."""
        assert self.options.token_budget is not None
        return self.options.token_budget

    # -- tokens ---------------------------------------------------------------------------------

    def ending(self, ids: Sequence[int], tokens: int = 8) -> str:
        """The last few tokens of a prompt as text, quoted, to name an item in a message."""
        return clip(self.tokenizer.decode(list(ids[-tokens:])), 40)

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
        # a model that cannot be split gives logits at every slot: one row per batch
        vocab_rows = 256 if self.runner.decoder is not None else 1
        grid = self.runner.grid
        if self.options.reuse_prefix and len(ids) > 1:
            plan = plan_prefix_batches(ids, self.token_budget, n - 1, vocab_rows, grid)
        else:
            plan = plan_batches([len(r) + n - 1 for r in ids], self.token_budget, max_batch=vocab_rows)
        self.last_plan = plan
        edge = np.zeros((len(ids), n))
        end = np.zeros((len(ids), n))
        prefix_memo: dict[tuple[int, ...], Any] = {}

        def run(batch: Sequence[int]) -> list[tuple[np.ndarray, np.ndarray]]:
            rows = [ids[i] for i in batch]

            def ending(i: int) -> str:
                return self.ending(ids[i])

            shared = shared_prefix_len(rows, grid) if self.options.reuse_prefix else 0
            if not shared:
                return self._tree_batch(rows, tree, ancestry, ends_mask, items=batch, ending=ending)
            cache = self._cached_prefill(prefix_memo, rows[0][:shared])
            return self._tree_batch(
                [r[shared:] for r in rows], tree, ancestry, ends_mask, cache, shared, items=batch, ending=ending
            )

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
        return self.runner.prefill(prefix)

    def _tree_batch(self, rows, tree, ancestry, ends_mask, prefix_cache=None, shared: int = 0, items=None, ending=None):
        """Logits at the root and every tree node for a batch, optionally after a cached prefix.

        `items` (the call's index of each row) and `ending` (an item's prompt end) name an item
        whose states overflowed (`engine.overflow`).
        """
        torch = self._torch
        fwd = self.runner.forward(rows, tree.token_ids[1:], tree.depths[1:], ancestry, prefix_cache, shared)
        lengths = np.array([len(r) for r in rows])
        root = fwd.starts + lengths - 1  # (B,) each row's last token
        nodes = fwd.tails[:, None] + np.arange(tree.n_nodes - 1)[None]  # (B, T)
        index = torch.from_numpy(np.concatenate([root[:, None], nodes], 1)).to(fwd.states.device)  # (B, N)
        states = fwd.states[index]  # (B, N, H)
        b, n = index.shape
        check_finite(
            states.reshape(b * n, -1),
            np.repeat(np.arange(b), n),
            items if items is not None else range(b),
            self.options.dtype or "?",
            ending or (lambda i: "?"),
        )
        with torch.inference_mode():
            read = read_tree(states, self.runner.head, tree, ends_mask, self.options.tree_tolerance, self.runner.chunks)
        self.head_rows += read.rows
        return [(read.edge[b], read.end[b]) for b in range(len(rows))]

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
