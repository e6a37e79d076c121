"""The model backend interface: what a judge needs from a language model, and nothing more."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

import numpy as np

from localjudge.engine.options import EngineOptions
from localjudge.scoring.distribution import TreeLogprobs
from localjudge.scoring.trie import TokenTree

Progress = Callable[[int], None]


class ContinuationFeatures(NamedTuple):
    """What a judge's hidden states say about one continuation (`engine.features`)."""

    pooled: np.ndarray
    """(K, H) float64: each asked layer's states averaged over the continuation's tokens."""
    logprobs: np.ndarray
    """(c,) float64: log P of each continuation token given everything before it."""


class GenerationRequest(NamedTuple):
    """One prompt to continue greedily with each step's distribution read (`Backend.generate_logprobs`)."""

    ids: Sequence[int]
    """The prompt's token ids (not empty)."""
    max_new_tokens: int
    """Most tokens to generate (0: none, only the prompt's readings when `echo`)."""
    stops: tuple[str, ...] = ()
    """Generation ends once the generated text contains one of these (the token that completes it kept)."""
    echo: bool = False
    """Also read the prompt's tokens after the first (each given the tokens before it)."""


class Generation(NamedTuple):
    """A greedy continuation and the full softmax's readings along it (`Backend.generate_logprobs`).

    A reading is a row as `Backend.token_logprobs` with `top` gives it: the token's log P, then the
    `top` most likely tokens' log P and their ids (as floats).
    """

    prompt: np.ndarray
    """(len(ids) - 1, 1 + 2 * top) readings of the prompt's tokens after the first with `echo`, else none."""
    tokens: list[int]
    """The generated token ids; an end-of-sequence token that ended the generation is not among them."""
    readings: np.ndarray
    """(len(tokens), 1 + 2 * top): each generated token's reading (the greedy token is the first of the top)."""
    finish_reason: str
    """"stop" (an end-of-sequence token or a stop string) or "length" (`max_new_tokens` reached)."""


class Backend(Protocol):
    """A causal language model seen through token ids.

    `HFBackend` (transformers) is the real one; `localjudge.testing.FakeBackend` is a scripted one
    for fast tests.
    """

    max_context: int

    @property
    def options(self) -> EngineOptions | None:
        """The resolved engine options it runs with, held here only; None for a backend without an engine."""

    def record(self) -> dict[str, Any]:
        """`JudgeInfo` fields on what the engine runs with (options and what it probed); {} without one."""

    def with_options(self, options: EngineOptions) -> Backend:
        """The same model and tokenizer run with other run-time options (`RUNTIME_FIELDS`)."""

    def encode(self, text: str) -> list[int]:
        """Token ids exactly as the tokenizer gives them for `text` (default special tokens)."""

    def token_surfaces(self) -> list[str]:
        """Text each token id adds when it follows other text, indexed by token id."""

    def tree_logprobs(
        self, ids: Sequence[Sequence[int]], tree: TokenTree, progress: Progress | None = None
    ) -> TreeLogprobs:
        """Edge and end log-probabilities at every tree node for each prompt, in input order."""

    def apply_chat_template(self, messages: list[dict[str, str]]) -> str:
        """The conversation in the model's chat format, ending where the model's turn begins."""

    def generate(
        self, prompts: Sequence[str], max_new_tokens: int, progress: Progress | None = None, share_prefix: bool = False
    ) -> list[str]:
        """Greedy, deterministic continuations of each prompt.

        `share_prefix` asks for a prefix the prompts share to be computed once; the options'
        `reuse_prefix` decides whether it is (off: every prompt is computed whole).
        """

    def generate_logprobs(self, requests: Sequence[GenerationRequest], top: int) -> list[Generation]:
        """Greedy continuations of token-id prompts, each step's `top` (at least 1) most likely tokens read
        from the full softmax, in input order.

        Each reading is bitwise the one `token_logprobs` gives at the end of the prompt and the tokens
        generated before it (where the backend's results are bitwise), so a step equals a fresh read.
        """

    def encode_continuation(self, text: str) -> list[int]:
        """Token ids of `text` on its own (no special tokens), spelling exactly `text`."""

    def token_logprobs(
        self,
        prompts: Sequence[Sequence[int]],
        continuations: Sequence[Sequence[int]],
        progress: Progress | None = None,
        top: int = 0,
    ) -> list[np.ndarray]:
        """log P(token | all before it) of every continuation token after its prompt, in input order.

        With `top`, each item's array is (len(continuation), 1 + 2 * top): the token's log P, then the
        `top` most likely tokens' log P and their ids (as floats), from the full softmax.
        """

    def eos_ids(self) -> set[int]:
        """Token ids that end a generation."""
