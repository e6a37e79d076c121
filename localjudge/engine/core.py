"""What the decoding and likelihood mixins use of `HFBackend`, declared so that mypy checks it.

`GreedyDecoding` and `ContinuationScoring` subclass `BackendCore`: every member they read or set
on `self` is declared here, and `HFBackend` provides it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from localjudge.engine.batching import BatchPlan
from localjudge.engine.options import EngineOptions
from localjudge.engine.runner import Runner


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
    runner: Runner
    """Builds and runs every forward (layout, masks, prefix cache, output layer)."""
    _logit_width: int
    """Rows of the output layer (may exceed the tokenizer's vocabulary)."""

    @property
    def token_budget(self) -> int:
        """Padded tokens per forward batch (`options.token_budget`, resolved)."""
        ...

    def encode(self, text: str) -> list[int]:
        """Token ids exactly as `tokenizer(text)` gives them."""
        ...

    def ending(self, ids: Sequence[int], tokens: int = 8) -> str:
        """The last few tokens of a prompt as text, quoted, to name an item in a message."""
        ...

    def check_lengths(self, ids: Sequence[Sequence[int]], names: Sequence[str] | None = None) -> None:
        """Raises `ContextLengthError` naming the first prompt that is empty or too long."""
        ...

    def _cached_prefill(self, memo: dict[tuple[int, ...], Any], prefix: Sequence[int]) -> Any:
        """The KV cache of `prefix`, computed unless it is the one in `memo`."""
        ...
