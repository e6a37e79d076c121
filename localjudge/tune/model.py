"""A judge's model split for tuning: frozen lower layers run once, LoRA on the top layers trained.

Backpropagating through a whole 0.5B judge costs ~30 s per 600-token sequence on two cores. Only
the top `layers` decoder layers carry adapters, so the hidden states entering them (the
*features*) never change during a tune: they are computed once per pack, without gradients, and
every training step runs the top layers alone. The model's own decoder code runs both halves
(its masks, rotary positions, final norm): the lower layers are stopped by a hook, then stood in
for by pass-throughs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn

from localjudge.errors import ConfigError
from localjudge.tune.packing import Pack

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
"""Linear layers of a decoder layer that carry an adapter (Llama, Qwen2, Gemma 3 names)."""


class _Captured(Exception):
    """Raised by the hook that stops the lower half once it has the features."""

    def __init__(self, states: torch.Tensor):
        self.states = states


class _Pass(nn.Module):
    """A decoder layer that hands its input on unchanged (the lower half, already run)."""

    def forward(self, hidden_states: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        return hidden_states


class SplitJudgeModel:
    """A causal LM whose top `layers` decoder layers are tuned and the rest read once.

    Args:
        model: a transformers causal LM, fp32, on the CPU or a GPU.
        layers: number of top decoder layers that carry adapters (1..all).
    """

    def __init__(self, model: Any, layers: int):
        self.model = model
        self.decoder = model.get_decoder()
        self.layers: nn.ModuleList = self.decoder.layers
        total = len(self.layers)
        if not 1 <= layers <= total:
            raise ConfigError(f"--layers {layers}: the judge has {total} decoder layers; give 1..{total}")
        self.first = total - layers
        """Index of the first tuned layer; the features are its input."""
        self.head = model.get_output_embeddings()
        config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
        self.cap = getattr(config, "final_logit_softcapping", None)
        self.window = getattr(config, "sliding_window", None)
        self.layer_types = tuple(getattr(config, "layer_types", None) or ())
        self.vocab = self.head.weight.shape[0]

    def add_lora(self, rank: int, alpha: float, seed: int) -> Any:
        """Wraps the top layers' linear layers with LoRA adapters (peft), seeded; returns the peft model."""
        from peft import LoraConfig, get_peft_model

        names = {n.rsplit(".", 1)[-1] for n, m in self.layers[self.first].named_modules() if isinstance(m, nn.Linear)}
        targets = sorted(names & set(LORA_TARGETS))
        if not targets:
            raise ConfigError(f"no linear layer named {', '.join(LORA_TARGETS)} in this judge's decoder layers")
        torch.manual_seed(seed)
        config = LoraConfig(
            r=rank,
            lora_alpha=alpha,  # type: ignore[arg-type]  # peft scales by alpha / r in floats
            lora_dropout=0.0,
            target_modules=targets,
            layers_to_transform=list(range(self.first, len(self.layers))),
            bias="none",
        )
        for p in self.model.parameters():
            p.requires_grad_(False)
        return get_peft_model(self.model, config)

    def _mask(self, pack: Pack) -> Any:
        """The pack's mask as the decoder takes it: one, or one per attention layer type."""
        full = torch.from_numpy(pack.mask)[None, None]  # (1, 1, T, T)
        if self.window is None or "sliding_attention" not in self.layer_types:
            return full
        pos = torch.from_numpy(pack.positions)
        near = (pos[:, None] - pos[None, :]) < self.window  # (T, T)
        sliding = full & near[None, None]
        if set(self.layer_types) == {"sliding_attention"}:
            return sliding
        return {"full_attention": full, "sliding_attention": sliding}

    def features(self, pack: Pack) -> torch.Tensor:
        """(T, H) hidden states entering the first tuned layer, computed without gradients."""
        device = self.head.weight.device

        def stop(_module: nn.Module, args: tuple, kwargs: dict) -> None:
            raise _Captured(args[0] if args else kwargs["hidden_states"])

        hook = self.layers[self.first].register_forward_pre_hook(stop, with_kwargs=True)
        try:
            with torch.inference_mode():
                self.decoder(
                    input_ids=torch.from_numpy(pack.ids)[None].to(device),
                    attention_mask=_to(self._mask(pack), device),
                    position_ids=torch.from_numpy(pack.positions)[None].to(device),
                    use_cache=False,
                )
        except _Captured as got:
            return got.states[0].float().clone()
        finally:
            hook.remove()
        raise AssertionError("the decoder never reached its tuned layers")

    def logits(self, pack: Pack, features: torch.Tensor) -> torch.Tensor:
        """(M, N, V) logits at every member's root and tree nodes, through the tuned layers."""
        device = self.head.weight.device
        with self._lower_half_skipped():
            states = self.decoder(
                inputs_embeds=features[None].to(device),
                attention_mask=_to(self._mask(pack), device),
                position_ids=torch.from_numpy(pack.positions)[None].to(device),
                use_cache=False,
            ).last_hidden_state[0]  # (T, H)
        read = states[torch.from_numpy(pack.reads).to(device)]  # (M, N, H)
        logits = self.head(read.to(self.head.weight.dtype)).float()
        return torch.tanh(logits / self.cap) * self.cap if self.cap else logits

    @contextmanager
    def _lower_half_skipped(self) -> Iterator[None]:
        kept = [self.layers[i] for i in range(self.first)]
        for i in range(self.first):
            self.layers[i] = _Pass()
        try:
            yield
        finally:
            for i, layer in enumerate(kept):
                self.layers[i] = layer


def _to(mask: Any, device: torch.device) -> Any:
    return {k: v.to(device) for k, v in mask.items()} if isinstance(mask, dict) else mask.to(device)
