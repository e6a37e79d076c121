"""The transformers backend: a loaded model made into the engine, and the public `Backend` on it.

Loading probes and swaps the layers (`engine.invariant`, `engine.mixed`, `engine.attention`) and
builds the `Runner` (`engine.runner`) that runs every forward pass. The operations are peers
that run on it through one batch loop (`engine.loop`): exact tree scoring (`engine.tree`), greedy
generation, with each step's top tokens where asked (`engine.decoding`), and continuation
log-likelihoods (`engine.likelihood`); this class
tokenises, checks lengths, and hands each its inputs. Its counters are read through `stats`, its
forward passes observed through `observe_forwards`.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from localjudge.engine import decoding, features, likelihood
from localjudge.engine import tree as tree_scoring
from localjudge.engine.attention import use_block_attention
from localjudge.engine.backend import ContinuationFeatures, Generation, GenerationRequest
from localjudge.engine.batching import BatchPlan
from localjudge.engine.invariant import (
    GemmPlan,
    InvariantLinear,
    make_invariant,
    read_layer,
    restore_weights,
    slow_dtype,
)
from localjudge.engine.loop import Context
from localjudge.engine.mixed import lower_linears
from localjudge.engine.observe import ForwardCall, Observer
from localjudge.engine.options import RUNTIME_FIELDS, EngineOptions
from localjudge.engine.runner import HEAD_ROWS, Runner
from localjudge.engine.stats import Counters, EngineStats
from localjudge.engine.tree_head import split_model
from localjudge.engine.vocab import continuation_ids, token_surfaces
from localjudge.errors import ConfigError, ContextLengthError, ModelUnavailableError, clip
from localjudge.scoring.distribution import TreeLogprobs
from localjudge.scoring.trie import TokenTree

Progress = Callable[[int], None]
log = logging.getLogger(__name__)


def _identity(x):
    return x


class HFBackend:
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
        self._counters = Counters()  # read through `stats`
        self.device = next(model.parameters()).device
        config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
        unknown = set(getattr(config, "layer_types", None) or ()) - {"full_attention", "sliding_attention"}
        if unknown:
            raise ModelUnavailableError(
                f"attention layer types {sorted(unknown)} are not supported by the tree scorer; "
                "use a model with full or sliding-window attention"
            )
        self._pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
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
            restore_weights(model)  # layers an earlier judge over this model packed and let go
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
        twin._counters = self._counters.copy()  # it counts on from here, on its own
        twin.runner = self.runner.copy()  # with observers of its own
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

    # -- the operations ----------------------------------------------------------------------------

    @property
    def stats(self) -> EngineStats:
        """Output-layer rows computed so far and the latest batch plan, as they are now (a snapshot)."""
        return self._counters.snapshot()

    def keep_prefixes(self, n: int) -> int:
        """Keeps the `n` latest shared-prefix KV caches between calls (`engine.prefix.PrefixStore`); the count before.

        Results are the same bits; memory holds up to `n` prefixes' keys and values after a call.
        """
        before, self.runner.prefixes.keep = self.runner.prefixes.keep, n
        self.runner.prefixes.trim(n)
        return before

    def observe_forwards(self, fn: Observer | None = None) -> AbstractContextManager[list[ForwardCall]]:
        """Records every forward pass this backend makes inside the block, calling `fn` on each first.

        For tracing and profiling: each `ForwardCall` says the kind of pass ("prefill", "batch",
        "step"), the tokens of each row, the cached prefix and the appended tree tokens. `fn` runs
        before the model and may raise to stop the pass (an out-of-memory error is then halved and
        retried as a real one is). A backend from `with_options` has observers of its own.

        Examples:
            >>> with judge.backend.observe_forwards() as calls:  # doctest: +SKIP
            ...     judge.score_texts(texts, 1, 5)
            >>> [len(c.lengths) for c in calls if c.kind == "batch"]  # rows per batch  # doctest: +SKIP
            [8, 3]
        """
        return self.runner.observers.observe(fn)

    def _context(self) -> Context:
        return Context(self.runner, self.options, self._counters, self.ending)

    def tree_logprobs(
        self, ids: Sequence[Sequence[int]], tree: TokenTree, progress: Progress | None = None
    ) -> TreeLogprobs:
        """Edge and end log-probabilities at every tree node for every prompt, in input order."""
        self.check_lengths(ids)
        return tree_scoring.tree_logprobs(self._context(), ids, tree, progress)

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: int,
        progress: Progress | None = None,
        share_prefix: bool = False,
    ) -> list[str]:
        """Greedy continuations of each prompt (deterministic), in input order.

        With `share_prefix`, prompts that share a long prefix (a metric's instructions, an
        article) are batched together and the prefix is computed once, as in scoring, when the
        options' `reuse_prefix` is on (as every record says); otherwise, or when it is off, the
        prompts run whole in length-sorted batches.
        """
        ids = [self.encode(p) for p in prompts]
        self.check_lengths(ids)

        def decode(tokens: list[list[int]]) -> list[str]:
            return self.tokenizer.batch_decode(tokens, skip_special_tokens=True)

        return decoding.generate(self._context(), ids, max_new_tokens, self._eos_ids(), decode, progress, share_prefix)

    def generate_logprobs(self, requests: Sequence[GenerationRequest], top: int) -> list[Generation]:
        """`Backend.generate_logprobs`: the prompts checked, then decoded by the engine
        (`engine.decoding.generate_logprobs`, whose docstring says how the steps are read).

        Raises:
            ContextLengthError: a prompt is empty or too long, or a generation would run past the
                judge's context before it ends.
        """
        ids = [list(r.ids) for r in requests]
        self.check_lengths(ids)
        # a step reads the prompt and the tokens before it: at most the context's worth in all
        room = [min(r.max_new_tokens, self.max_context - len(i)) for r, i in zip(requests, ids)]
        capped = [r._replace(max_new_tokens=n) for r, n in zip(requests, room)]
        got = decoding.generate_logprobs(self._context(), capped, top, self._eos_ids(), self.token_surfaces())
        for i, (r, g, n) in enumerate(zip(requests, got, room)):
            if n < r.max_new_tokens and g.finish_reason == "length":
                raise ContextLengthError(
                    f"prompt {i} ({len(ids[i])} tokens) and {r.max_new_tokens} tokens to generate run past the "
                    f"judge's context of {self.max_context}; ask for fewer tokens or shorten the prompt"
                )
        return got

    def eos_ids(self) -> set[int]:
        """Token ids that end a generation (what a client's tokenizer needs to know)."""
        return self._eos_ids()

    def _eos_ids(self) -> set[int]:
        """Token ids that end a generation: the tokenizer's and the generation config's EOS."""
        ids = {self.tokenizer.eos_token_id}
        extra = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        ids |= set(extra) if isinstance(extra, (list, tuple)) else {extra}
        return {i for i in ids if i is not None}

    def token_logprobs(
        self,
        prompts: Sequence[Sequence[int]],
        continuations: Sequence[Sequence[int]],
        progress: Progress | None = None,
        top: int = 0,
    ) -> list[np.ndarray]:
        """`Backend.token_logprobs`: every prompt (and prompt + continuation) checked against the context,
        then read by the engine (`engine.likelihood.token_logprobs`, whose docstring says what comes back)."""
        rows = [list(p) + list(c) for p, c in zip(prompts, continuations)]
        self.check_lengths(prompts)  # a continuation needs a prompt to follow
        self.check_lengths(rows, [f"item {i} (prompt + continuation)" for i in range(len(rows))])
        return likelihood.token_logprobs(self._context(), prompts, continuations, progress, top)

    @property
    def layer_count(self) -> int:
        """Decoder layers of the model (the deepest layer `continuation_features` reads)."""
        config = self.model.config
        config = config.get_text_config() if hasattr(config, "get_text_config") else config
        return int(config.num_hidden_layers)

    def continuation_features(
        self,
        prompts: Sequence[Sequence[int]],
        continuations: Sequence[Sequence[int]],
        layers: Sequence[int],
        progress: Progress | None = None,
    ) -> list[ContinuationFeatures]:
        """`Backend.continuation_features`: lengths checked as for `token_logprobs`, then one engine pass
        (`engine.features.continuation_features`)."""
        rows = [list(p) + list(c) for p, c in zip(prompts, continuations)]
        self.check_lengths(prompts)
        self.check_lengths(rows, [f"item {i} (prompt + continuation)" for i in range(len(rows))])
        return features.continuation_features(self._context(), prompts, continuations, layers, progress)

    def plan_continuations(
        self, prompts: Sequence[Sequence[int]], continuations: Sequence[Sequence[int]]
    ) -> tuple[BatchPlan, list[list[int]]]:
        """The batches `token_logprobs` runs, over the items with a non-empty continuation.

        Returns:
            The plan (indices into those items) and, per item, the tokens a batch may share.
        """
        return likelihood.plan_continuations(self._context(), prompts, continuations)

    def encode_continuation(self, text: str) -> list[int]:
        """Token ids of `text` on its own, no special tokens, spelling exactly `text` (`vocab.continuation_ids`).

        Raises:
            DataError: no anchor gives tokens that spell the text (start it with a space).
        """
        return continuation_ids(self.tokenizer, text)
