"""The features of each pack, computed once and kept on disk so a resumed tune never computes them again.

A pack's features are the hidden states entering the first tuned layer (`SplitJudgeModel.features`).
They depend on the judge's weights, the pack's tokens and layout, and the number of tuned layers,
and on nothing the tune changes; the file name is a hash of all four.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from localjudge.tune.model import SplitJudgeModel
from localjudge.tune.packing import Pack


def pack_key(pack: Pack, weights: str, layers: int) -> str:
    """Hex digest naming a pack's features: the judge's weights, the tuned layers, the pack's layout."""
    h = hashlib.sha256(f"{weights}|{layers}|".encode())
    for part in (pack.ids, pack.positions, pack.mask):
        h.update(part.tobytes())
    return h.hexdigest()[:32]


def load_features(
    split: SplitJudgeModel,
    packs: Sequence[Pack],
    folder: Path,
    weights: str,
    layers: int,
    progress: Callable[[int], None] | None = None,
) -> list[torch.Tensor]:
    """Each pack's features: read from `folder` when there, else computed and written there.

    Returns:
        (T, H) fp32 features of each pack, in order.
    """
    from safetensors.torch import load_file, save_file

    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for pack in packs:
        path = folder / f"{pack_key(pack, weights, layers)}.safetensors"
        if path.is_file():
            out.append(load_file(path)["features"])
        else:
            feats = split.features(pack)
            tmp = path.with_suffix(".tmp")
            save_file({"features": feats.contiguous()}, tmp)
            tmp.replace(path)
            out.append(feats)
        if progress is not None:
            progress(1)
    return out
