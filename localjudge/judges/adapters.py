"""Tuned judges: a base judge plus a LoRA adapter, described by a manifest and merged at load.

A tune folder (`localjudge tune --out DIR`) holds `adapter.safetensors` and `tune.json`. Loading
it loads the base judge, refuses a base whose weights are not the ones tuned (their hash), and
adds each adapter's low-rank update to its layer's weight before the engine wraps the model, so
the tuned judge runs through the same batch-invariant engine as every other judge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from localjudge.errors import ConfigError, ModelUnavailableError, clip
from localjudge.weights.hashes import sha256_file

MANIFEST = "tune.json"
ADAPTER = "adapter.safetensors"
LORA_A, LORA_B = "lora_A", "lora_B"


class TuneFigures(BaseModel):
    """Validation figures of one epoch (epoch 0: the judge before tuning)."""

    model_config = ConfigDict(extra="forbid")

    epoch: int = Field(description="Epoch after which they were read; 0 before any training.")
    train_loss: float | None = Field(description="Mean training loss over the epoch; None for epoch 0.")
    agreement: float | None = Field(description="Validation agreement with the human labels (see `agreement_name`).")
    valid_mass: float = Field(description="Mean valid mass on the validation cases (the least over several metrics).")
    per_metric: dict[str, float | None] = Field(
        default_factory=dict, description="With several metrics, each one's agreement (`agreement` is their mean)."
    )


class TuneManifest(BaseModel):
    """What a tuned judge is: its base, its adapter, what it was trained on and how well it did."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The tuned judge's name, recorded as the judge of its results.")
    base: str = Field(description="The base judge: a registry name, model directory or GGUF file.")
    base_provenance: str = Field(
        description="The base weights' provenance (sha256 of the GGUF) the adapter was tuned on."
    )
    family: str = Field(description="The base judge's model family.")
    adapter_sha256: str = Field(description="SHA-256 of adapter.safetensors.")
    rank: int = Field(description="LoRA rank.")
    alpha: float = Field(description="LoRA alpha; each update is scaled by alpha / rank.")
    layers: list[int] = Field(description="Decoder layers that carry adapters.")
    targets: list[str] = Field(description="Linear layers adapted in each of those layers.")
    metrics: list[dict[str, Any]] = Field(description="Spec of each metric tuned for (as records carry it).")
    human_field: str = Field(description="The case field holding the human labels.")
    human_scale: list[float] | None = Field(
        description="The labels' scale, mapped onto the metric's; None: the metric's."
    )
    data_sha256: str = Field(description="SHA-256 of the labelled cases file(s) trained on.")
    trained_on: str = Field(description="What the adapter was shown, in words.")
    never_shown: str = Field(default="", description="What it was never shown (held-out data), in words.")
    train_cases: int = Field(description="Cases trained on.")
    validation_cases: int = Field(description="Cases held out for validation and early stopping.")
    groups: list[int] = Field(description="Groups (documents, inputs) in training and in validation.")
    settings: dict[str, Any] = Field(description="Every tuning setting (`TuneOptions`).")
    agreement_name: str = Field(description="What `agreement` measures on the validation cases.")
    history: list[TuneFigures] = Field(description="Validation figures per epoch, epoch 0 first.")
    best_epoch: int = Field(description="The epoch whose adapter was kept.")
    wall_seconds: float = Field(description="Wall time of the tune, features included.")
    tokens_per_second: float = Field(description="Packed tokens through the tuned layers per second of training.")
    peak_memory_gib: float = Field(description="Peak resident memory of the tuning process.")
    localjudge_version: str = Field(description="localjudge version that tuned it.")


def is_tune_folder(path: Path) -> bool:
    """Whether `path` is a folder holding a tuned judge."""
    return (path / MANIFEST).is_file()


def read_manifest(folder: Path) -> TuneManifest:
    """The manifest of a tune folder.

    Raises:
        ModelUnavailableError: the folder lacks its manifest or adapter, or the manifest is not one.
    """
    from localjudge.io.files import parse_json, read_text

    path = folder / MANIFEST
    if not (folder / ADAPTER).is_file():
        raise ModelUnavailableError(f"{folder} has {MANIFEST} but no {ADAPTER}; the tune did not finish: rerun it")
    data = parse_json(read_text(path, "tune manifest"), path)
    try:
        return TuneManifest.model_validate(data)
    except ValueError as exc:
        raise ModelUnavailableError(f"{path} is not a tune manifest: {clip(exc, 300)}") from None


def merge_adapter(model: Any, folder: Path, manifest: TuneManifest, provenance: str) -> str:
    """Adds the adapter's updates to the base model's weights in place; returns the tuned judge's provenance.

    W ← W + (alpha / rank) · B A, computed in fp32 and stored in the weight's dtype.

    Raises:
        ConfigError: the base weights are not those the adapter was tuned on, or the adapter does
            not fit the model.
    """
    import torch
    from safetensors.torch import load_file

    if provenance != manifest.base_provenance:
        raise ConfigError(
            f"tuned judge {clip(manifest.name)} was tuned on {manifest.base} with weights {manifest.base_provenance}, "
            f"but those loaded are {provenance}; install the base it names (`localjudge models --install`)"
        )
    digest = sha256_file(folder / ADAPTER)
    if digest != manifest.adapter_sha256:
        raise ConfigError(
            f"{folder / ADAPTER} does not match its manifest's sha256; the folder was changed: tune again"
        )
    tensors = load_file(folder / ADAPTER)
    modules = dict(model.named_modules())
    scale = manifest.alpha / manifest.rank
    with torch.no_grad():
        for key in sorted(k for k in tensors if k.endswith(LORA_A)):
            where = key.removesuffix("." + LORA_A)
            layer = modules.get(where)
            if layer is None or not hasattr(layer, "weight"):
                raise ConfigError(f"adapter layer {clip(where)} is not in the base model; is this the right base?")
            a, b = tensors[key].float(), tensors[f"{where}.{LORA_B}"].float()  # (r, in), (out, r)
            if (b.shape[0], a.shape[1]) != tuple(layer.weight.shape):
                raise ConfigError(f"adapter layer {clip(where)} has another shape than the base model's")
            merged = layer.weight.float() + scale * (b @ a)
            layer.weight.copy_(merged.to(layer.weight.dtype))
    return f"{provenance}+adapter:sha256:{digest}"
