"""What the held-out tune studies share: a base judge split for reading, a half tuned, a half read.

Readings here use the trainer's packed reading (`localjudge.tune.trainer.read_packs`, fp32) over
features (the hidden states entering the tuned layers) cached by content under one folder, so the
untuned and tuned readings of a case, and every study of one judge and layer count, share them.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import numpy as np


def reader(judge_name: str, layers: int):
    """A base judge in fp32 on stock layers, split for reading; loaded once."""
    from localjudge.tune.job import TuneJob
    from localjudge.tune.model import SplitJudgeModel

    judge = TuneJob(judge=judge_name, human="-", out=Path("/nonexistent"), progress=False).load()
    return judge, SplitJudgeModel(judge.backend.model, layers)


def read(
    judge, split, metric, cases, label: tuple[str, tuple[float, float] | None, str | None], features, settings, folder
):
    """The `TuneData` of `cases` and its examples' (E, V) distributions and (E,) valid masses.

    `label` is (human field, its scale or None, group field or None), as `localjudge tune` takes
    them. Read by the base judge, or with the adapter in `folder` merged (and unmerged after).
    """
    import torch

    from localjudge.judges.adapters import merge_adapter, read_manifest
    from localjudge.labels import read_labels
    from localjudge.tune.examples import build_data
    from localjudge.tune.features import load_features
    from localjudge.tune.reading import TreeIndex
    from localjudge.tune.trainer import packs_of, read_packs

    field, scale, group = label
    data = build_data(judge, metric, cases, read_labels(metric, cases, field, scale, group))
    packs = packs_of(data, list(range(len(cases))), settings)
    feats = load_features(split, packs, features, judge.info.provenance, settings.layers)
    kept = None
    if folder is not None:
        kept = {k: v.clone() for k, v in split.model.state_dict().items() if "layers." in k}
        merge_adapter(split.model, folder, read_manifest(folder), judge.info.provenance)
    try:
        dists, mass = read_packs(split, TreeIndex.of(data.tree, split.vocab), len(data.examples), packs, feats)
    finally:
        if kept is not None:
            with torch.no_grad():
                split.model.load_state_dict(kept, strict=False)
    return data, dists, mass


def tune_half(job: dict, metrics: list, train, settings, half: int, name: str, never_shown: str) -> tuple[dict, bool]:
    """Tunes on `train` (resuming what is in `job["out"]`); the run's figures, and whether it kept an adapter.

    `job` holds the `TuneJob` fields that differ between studies (judge, human, out, group...).
    """
    from localjudge.tune import TuneFailedError, TuneJob, tune

    sha = hashlib.sha256(json.dumps([c.model_dump() for c in train], sort_keys=True).encode()).hexdigest()
    tune_job = TuneJob(**job, resume=True, data_sha256=sha, data_name=name, never_shown=never_shown)
    t0 = time.time()
    try:
        manifest = tune(train, metrics if len(metrics) > 1 else metrics[0], tune_job, settings)
    except TuneFailedError as exc:  # recorded: its held-out cases have no tuned reading
        return {"half": half, "seconds": round(time.time() - t0, 1), "failed": str(exc)}, False
    kept = {"best_epoch", "tokens_per_second", "peak_memory_gib", "train_cases", "validation_cases"}
    run = {
        "half": half,
        "seconds": round(time.time() - t0, 1),
        **manifest.model_dump(include=kept),
        "history": [x.model_dump() for x in manifest.history],
    }
    return run, True


def alternate_groups(cases, key) -> tuple[list, list]:
    """Two halves of `cases`: alternate groups (`key(case)`) in order of first appearance."""
    groups = list(dict.fromkeys(key(c) for c in cases))
    first = set(groups[0::2])
    return [c for c in cases if key(c) in first], [c for c in cases if key(c) not in first]


def cell(x: float | None) -> str:
    return "n/a" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.3f}"
