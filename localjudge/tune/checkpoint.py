"""Resumable state of a tune: adapter, optimiser moments and progress, written atomically as safetensors + JSON.

A killed tune resumes from its last checkpoint and, since the order of every epoch is a function
of the seed and the epoch alone, ends with the adapter an unkilled tune ends with.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localjudge.errors import ConfigError

if TYPE_CHECKING:
    import torch

FOLDER = "checkpoint"


def adapter_tensors(peft_model: Any) -> dict[str, torch.Tensor]:
    """The LoRA weights by base-model module path: `<module>.lora_A` (r, in) and `<module>.lora_B` (out, r)."""
    out = {}
    for name, p in peft_model.named_parameters():
        if p.requires_grad:
            # base_model.model.<module>.lora_A.default.weight -> <module>.lora_A
            core = name.removeprefix("base_model.model.").removesuffix(".default.weight")
            out[core] = p.detach().clone().contiguous()
    return out


def save(
    folder: Path, peft_model: Any, optimizer: torch.optim.Optimizer, best: dict[str, torch.Tensor], state: dict
) -> None:
    """Writes the checkpoint: trainable weights, Adam moments, the best adapter so far, and `state`."""
    import torch
    from safetensors.torch import save_file

    where = folder / FOLDER
    where.mkdir(parents=True, exist_ok=True)
    tensors = {}
    names = {id(p): n for n, p in peft_model.named_parameters() if p.requires_grad}
    for p, moments in optimizer.state.items():
        n = names[id(p)]
        tensors[f"adam/step/{n}"] = torch.as_tensor(moments["step"]).detach().clone().reshape(1)
        for key in ("exp_avg", "exp_avg_sq"):
            tensors[f"adam/{key}/{n}"] = moments[key].detach().clone()
    for n, p in peft_model.named_parameters():
        if p.requires_grad:
            tensors[f"weight/{n}"] = p.detach().clone().contiguous()
    _atomic(lambda tmp: save_file(tensors, tmp), where / "tensors.safetensors")
    if best:
        _atomic(lambda tmp: save_file(best, tmp), where / "best.safetensors")
    _atomic(lambda tmp: tmp.write_text(json.dumps(state, indent=1)), where / "state.json")


def restore(folder: Path, peft_model: Any, optimizer: torch.optim.Optimizer, expect: dict) -> tuple[dict, dict]:
    """Loads a checkpoint into the model and optimiser; returns (state, best adapter).

    Raises:
        ConfigError: the checkpoint was written by a tune of other data or settings.
    """
    import torch
    from safetensors.torch import load_file

    where = folder / FOLDER
    state = json.loads((where / "state.json").read_text())
    for key, value in expect.items():
        if state.get(key) != value:
            raise ConfigError(
                f"{folder} holds a tune with another {key}; resume with the same data and settings, or pass --overwrite"
            )
    tensors = load_file(where / "tensors.safetensors")
    params = dict(peft_model.named_parameters())
    with torch.no_grad():
        for n, p in params.items():
            if p.requires_grad:
                p.copy_(tensors[f"weight/{n}"])
    for group in optimizer.param_groups:
        for p in group["params"]:
            n = next(k for k, v in params.items() if v is p)
            optimizer.state[p] = {
                "step": tensors[f"adam/step/{n}"].reshape(()),
                "exp_avg": tensors[f"adam/exp_avg/{n}"],
                "exp_avg_sq": tensors[f"adam/exp_avg_sq/{n}"],
            }
    best_path = where / "best.safetensors"
    best = load_file(best_path) if best_path.is_file() else {}
    return state, best


def _atomic(write, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    write(tmp)
    tmp.replace(path)
