"""What the decoding and likelihood mixins use of `HFBackend`, declared so that mypy checks it.

`GreedyDecoding` and `ContinuationScoring` subclass `BackendCore`: every member they read or set
on `self` is declared here, and `HFBackend` provides it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from localjudge.engine.batching import BatchPlan
from localjudge.engine.options import EngineOptions


class BackendCore(Protocol):
    """The model, tokenizer, masks and prefill of the transformers backend."""

    model: Any
    """The transformers causal LM, in eval mode on `device`."""
    tokenizer: Any
    """Its tokenizer."""
    options: EngineOptions
    """Resolved engine options (token budget, prefix reuse, tree tolerance)."""
    device: Any
    """The torch device of the model's parameters."""
    head_rows: int
    """Output-layer rows computed so far, for the statistics."""
    last_plan: BatchPlan | None
    """The batch plan of the latest call, for padding statistics."""
    _torch: Any
    """The torch module (imported when the backend is built, not when localjudge is)."""
    _pad_id: int
    """Token id written at padded slots."""
    _cache_kw: str
    """Name of the model's forward argument that takes a KV cache."""
    _eager: bool
    """Whether the model runs eager attention (additive float masks instead of boolean ones)."""
    _logit_width: int
    """Rows of the output layer (may exceed the tokenizer's vocabulary)."""

    @property
    def token_budget(self) -> int:
        """Padded tokens per forward batch (`options.token_budget`, resolved)."""
        ...

    def encode(self, text: str) -> list[int]:
        """Token ids exactly as `tokenizer(text)` gives them."""
        ...

    def check_lengths(self, ids: Sequence[Sequence[int]], names: Sequence[str] | None = None) -> None:
        """Raises `ContextLengthError` naming the first prompt that is empty or too long."""
        ...

    def _split_head(self) -> tuple[Any, Any] | None:
        """(decoder, output layer) when applying them apart reproduces the logits, else None."""
        ...

    def _cached_prefill(self, memo: dict[tuple[int, ...], Any], prefix: Sequence[int]) -> Any:
        """The KV cache of `prefix`, computed unless it is the one in `memo`."""
        ...

    def _attention(
        self, lengths: list[int], width: int, ancestry: np.ndarray, positions: Any, real: Any, shared: int = 0
    ) -> Any:
        """The mask in the form the model takes: one tensor, or one per attention layer type."""
        ...

    def _per_layer_type(self, build: Callable[[int | None], Any]) -> Any:
        """`build(window)` once, or once per attention layer type when full and sliding layers mix."""
        ...
