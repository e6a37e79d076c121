"""`tune`: trains a judge's reading of a metric on labelled cases and writes a tuned judge folder.

The loop: labels checked and the split drawn before any weight loads; the judge's prompts packed
per group (`tune.packing`), their features computed once (`tune.features`); then epochs of one
optimiser step per pack through the top layers (`tune.model`) and the exact reading
(`tune.reading`), validation agreement after each, early stopping on it, a checkpoint every few
steps (`tune.checkpoint`). The adapter kept is the best epoch's whose validation valid mass stays
above the guard; a tune with none has failed and says so.
"""

from __future__ import annotations

import resource
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from localjudge.errors import ConfigError, LocalJudgeError, clip
from localjudge.io.cases import TestCase
from localjudge.judges.adapters import ADAPTER, MANIFEST, TuneFigures, TuneManifest
from localjudge.kinds import Metric, kind_of
from localjudge.labels import Labels, agreement, agreement_name, read_labels
from localjudge.tune import checkpoint
from localjudge.tune.examples import TuneData, build_data
from localjudge.tune.features import load_features
from localjudge.tune.job import TuneJob
from localjudge.tune.model import SplitJudgeModel
from localjudge.tune.options import TuneOptions
from localjudge.tune.packing import Pack, plan_packs
from localjudge.tune.reading import TreeIndex, outcome_logmass
from localjudge.tune.split import TuneSplit, validation_split
from localjudge.version import __version__
from localjudge.weights.hashes import sha256_file

CHECKPOINT_STEPS = 4
"""Optimiser steps between checkpoints (each epoch's end is one too)."""


class TuneFailedError(LocalJudgeError):
    """The tune ran but produced no judge worth keeping (it stopped answering with a score)."""


@dataclass
class _Task:
    """One metric's part of a tune: its examples, their reading, packs and cached features."""

    data: TuneData
    index: TreeIndex
    train_packs: list[Pack]
    val_packs: list[Pack]
    train_feats: list[torch.Tensor] = field(default_factory=list)
    val_feats: list[torch.Tensor] = field(default_factory=list)


def tune(
    cases: Sequence[TestCase], metric: Metric | Sequence[Metric], job: TuneJob, settings: TuneOptions
) -> TuneManifest:
    """Tunes `job.judge` to the human labels of `cases` for one metric or several; writes and returns its manifest.

    Several metrics (e.g. SummEval's four G-Eval dimensions) train one adapter: each epoch runs every
    metric's packs in one seeded order, and validation agreement is the metrics' mean (each one's in
    `per_metric`), the valid-mass guard holding for each.

    Raises:
        ConfigError, DataError: bad input, before any weight loads.
        TuneFailedError: no trained epoch beat the untuned judge's validation agreement with its valid mass at
            or above `settings.min_tuned_valid_mass`.

    Examples:
        >>> job = TuneJob(judge="qwen2.5-coder-0.5b", human="human_consistency", out="tuned", group="doc_id")
        >>> tune(load_cases("summeval.jsonl"), builtin_metric("consistency"), job, TuneOptions())  # doctest: +SKIP
    """
    started = time.time()
    out = job.out
    metrics: list[Metric] = list(metric) if isinstance(metric, (list, tuple)) else [metric]  # type: ignore[list-item]
    names = [m.name for m in metrics]
    if len(set(names)) < len(names):
        raise ConfigError(f"metric {clip(names[0])} is given twice; name each metric once")
    if job.prepare_out():
        return TuneManifest.model_validate_json((out / MANIFEST).read_text())
    labels = [_labels(m, cases, job, len(metrics) > 1) for m in metrics]
    split = validation_split(labels[0].groups, settings)
    judge = job.load()
    split_model = SplitJudgeModel(judge.backend.model, settings.layers)
    tasks = []
    for m, each in zip(metrics, labels):
        data = build_data(judge, m, cases, each)
        index = TreeIndex.of(data.tree, split_model.vocab)
        tasks.append(
            _Task(data, index, packs_of(data, split.train, settings), packs_of(data, split.validation, settings))
        )
    weights = judge.info.provenance
    every = [p for t in tasks for p in (*t.train_packs, *t.val_packs)]
    with job.bar(len(every), "features") as bar:
        feats = iter(load_features(split_model, every, job.features_folder, weights, settings.layers, bar.update))
    for t in tasks:
        t.train_feats = [next(feats) for _ in t.train_packs]
        t.val_feats = [next(feats) for _ in t.val_packs]
    steps = [(k, j) for k, t in enumerate(tasks) for j in range(len(t.train_packs))]  # (task, pack) pairs
    peft_model = split_model.add_lora(settings.lora_rank, settings.alpha, settings.seed)
    params = [p for p in peft_model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=settings.learning_rate, weight_decay=0.0)
    expect = {"settings": settings.model_dump(mode="json"), "data": job.data_sha256, "weights": weights}
    if len(tasks) > 1:
        expect["metrics"] = names
    if (out / checkpoint.FOLDER / "state.json").is_file():
        state, best = checkpoint.restore(out, peft_model, optimizer, expect)
    else:
        figures = _validate_all(split_model, tasks, split.validation, 0, None)
        state = {
            **expect,
            "epoch": 1,
            "step": 0,
            "history": [figures.model_dump()],
            "best": 0,
            "losses": [],
            "seconds": 0.0,
            "tokens": 0,
        }
        best = {}
    history = [TuneFigures(**h) for h in state["history"]]
    total = settings.epochs * len(steps)
    done = (state["epoch"] - 1) * len(steps) + state["step"]
    with job.bar(total, "tuning", initial=done) as bar:
        while state["epoch"] <= settings.epochs and not _stop(history, state["best"], settings.patience):
            epoch = state["epoch"]
            order = np.random.default_rng([settings.seed, epoch]).permutation(len(steps))
            for k in range(state["step"], len(steps)):
                t0 = time.time()
                task_k, j = steps[order[k]]
                task = tasks[task_k]
                pack, feat = task.train_packs[j], task.train_feats[j]
                loss = _loss(split_model, task.index, task.data, pack, feat, settings)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                state["losses"].append(float(loss.detach()))
                state["step"], state["seconds"], state["tokens"] = (
                    k + 1,
                    state["seconds"] + time.time() - t0,
                    state["tokens"] + pack.n_tokens,
                )
                bar.update(1)
                bar.set_postfix(loss=f"{np.mean(state['losses']):.3f}", val=_fmt(history[-1].agreement))
                if (k + 1) % CHECKPOINT_STEPS == 0 and k + 1 < len(steps):
                    checkpoint.save(out, peft_model, optimizer, best, state)
            figures = _validate_all(split_model, tasks, split.validation, epoch, float(np.mean(state["losses"])))
            history.append(figures)
            if _better(figures, history[state["best"]], settings.min_tuned_valid_mass):
                state["best"], best = epoch, checkpoint.adapter_tensors(peft_model)
            state.update(epoch=epoch + 1, step=0, losses=[], history=[h.model_dump() for h in history])
            bar.set_postfix(loss=f"{figures.train_loss:.3f}", val=_fmt(figures.agreement))
            checkpoint.save(out, peft_model, optimizer, best, state)
    if state["best"] == 0 or not best:  # no trained epoch was kept (epoch 0 is the untuned judge)
        why = _why_none_kept(history, settings.min_tuned_valid_mass)
        where = out / checkpoint.FOLDER / "state.json"
        raise TuneFailedError(
            f"the tune of {judge.info.name} kept no adapter: {why} (history in {where}); "
            "try a lower --learning-rate, more labels, or --mass-weight"
        )
    manifest = _write(out, best, judge, [t.data for t in tasks], split, settings, history, state, job, started)
    shutil.rmtree(out / checkpoint.FOLDER, ignore_errors=True)
    if job.features is None:
        shutil.rmtree(job.features_folder, ignore_errors=True)
    return manifest


def _labels(metric: Metric, cases: Sequence[TestCase], job: TuneJob, several: bool) -> Labels:
    """The metric's labels, once its kind says its reading can be trained."""
    kind_of(metric).check_trainable(metric)
    return read_labels(metric, cases, job.human_field(metric.name, several), job.human_scale, job.group)


def packs_of(data: TuneData, cases: list[int], settings: TuneOptions) -> list[Pack]:
    """The packs of the examples of `cases`, one group each (cut at `settings.pack_tokens`)."""
    keep = set(cases)
    chosen = [i for i, ex in enumerate(data.examples) if ex.case in keep]
    rows = [data.examples[i].ids for i in chosen]
    groups = [data.groups[data.examples[i].case] for i in chosen]
    packs = plan_packs(rows, groups, data.tree, settings.pack_tokens)
    # members index the examples themselves
    return [Pack(p.ids, p.positions, p.mask, p.reads, tuple(chosen[m] for m in p.members)) for p in packs]


def _loss(
    model: SplitJudgeModel, index: TreeIndex, data: TuneData, pack: Pack, feat: torch.Tensor, settings: TuneOptions
) -> torch.Tensor:
    lm = outcome_logmass(index, model.logits(pack, feat))  # (M, V)
    valid = torch.logsumexp(lm, dim=1)  # (M,) log valid mass
    logp = lm - valid[:, None]  # (M, V) normalised over valid outcomes
    target = torch.from_numpy(np.stack([data.examples[m].target for m in pack.members])).float()  # (M, V)
    values = torch.from_numpy(data.values).float()  # (V,)
    ce = -torch.where(target > 0, target * logp, torch.zeros_like(logp)).sum(1)  # (M,)
    span = float(values.max() - values.min())
    mse = ((logp.exp() @ values - target @ values) / span) ** 2  # (M,)
    terms = {"ce": ce.mean(), "mse": mse.mean()}
    if "rank" in settings.loss:
        terms["rank"] = _rank_loss(logp.exp() @ values / span, target @ values, settings.rank_temperature)
    fit = sum(terms[t] for t in settings.loss.split("+"))
    return fit - settings.mass_weight * valid.mean()


def _rank_loss(score: torch.Tensor, human: torch.Tensor, temperature: float) -> torch.Tensor:
    """Pairwise logistic loss on (M,) scores of one group's members, over pairs whose (M,) labels differ.

    Each pair weighs by how far apart people put it; a pack holds one group, so every pair is
    within a group, as per-group agreement is measured.
    """
    gap = human[:, None] - human[None, :]  # (M, M) > 0 where i is rated above j
    above = gap > 1e-6
    if not above.any():
        return score.sum() * 0.0
    margin = (score[:, None] - score[None, :]) / temperature  # (M, M)
    weight = gap.clamp(min=0)[above]
    return (weight * torch.nn.functional.softplus(-margin[above])).sum() / weight.sum()


def read_packs(
    model: SplitJudgeModel, index: TreeIndex, n: int, packs: Sequence[Pack], feats: Sequence[torch.Tensor]
) -> tuple[np.ndarray, np.ndarray]:
    """(n, V) normalised distributions and (n,) valid masses of the examples the packs hold (NaN elsewhere)."""
    dists = np.full((n, index.n_values), np.nan)
    mass = np.full(n, np.nan)
    with torch.no_grad():
        for pack, feat in zip(packs, feats):
            lm = outcome_logmass(index, model.logits(pack, feat)).double()  # (M, V)
            valid = torch.logsumexp(lm, dim=1)
            dists[list(pack.members)] = torch.exp(lm - valid[:, None]).numpy()
            mass[list(pack.members)] = torch.exp(valid).numpy()
    return dists, mass


def _validate(
    model, index, data: TuneData, packs, feats, cases: list[int], epoch: int, loss: float | None
) -> TuneFigures:
    dists, mass = read_packs(model, index, len(data.examples), packs, feats)
    scores = data.case_scores(np.nan_to_num(dists))  # cases outside validation read as NaN below
    keep = np.array(cases)
    held = [i for i, ex in enumerate(data.examples) if ex.case in set(cases)]
    return TuneFigures(
        epoch=epoch,
        train_loss=loss,
        agreement=agreement(data.metric, scores[keep], data.labels, keep).value,
        valid_mass=float(np.mean(mass[held])),
    )


def _validate_all(model, tasks: list[_Task], cases: list[int], epoch: int, loss: float | None) -> TuneFigures:
    """One epoch's figures: a single metric's own, or several metrics' mean agreement and least valid mass."""
    each = [_validate(model, t.index, t.data, t.val_packs, t.val_feats, cases, epoch, loss) for t in tasks]
    if len(each) == 1:
        return each[0]
    known = [f.agreement for f in each if f.agreement is not None]
    return TuneFigures(
        epoch=epoch,
        train_loss=loss,
        agreement=float(np.mean(known)) if len(known) == len(each) else None,
        valid_mass=min(f.valid_mass for f in each),
        per_metric={t.data.metric.name: f.agreement for t, f in zip(tasks, each)},
    )


def _better(new: TuneFigures, old: TuneFigures, guard: float) -> bool:
    if new.valid_mass < guard or new.agreement is None:
        return False
    return old.agreement is None or new.agreement > old.agreement


def _why_none_kept(history: list[TuneFigures], guard: float) -> str:
    """Why no trained epoch beat the untuned judge (`history[0]`): the mass guard, or agreement."""
    trained = history[1:]
    if trained and all(h.valid_mass < guard for h in trained):
        highest = max(h.valid_mass for h in trained)
        return f"every epoch's validation valid mass stayed below the guard {guard:g} (highest {highest:.2f})"
    untuned = history[0].agreement
    return f"no epoch agreed with the labels better than the untuned judge ({_fmt(untuned)} on validation)"


def _stop(history: list[TuneFigures], best: int, patience: int) -> bool:
    return len(history) - 1 - best >= patience and len(history) > 1


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.3f}"


def _write(
    out: Path,
    best: dict,
    judge: Any,
    data: list[TuneData],
    split: TuneSplit,
    settings: TuneOptions,
    history,
    state,
    job: TuneJob,
    started: float,
) -> TuneManifest:
    from safetensors.torch import save_file

    tmp = out / (ADAPTER + ".tmp")
    save_file(best, tmp, metadata={"format": "localjudge-lora"})
    tmp.replace(out / ADAPTER)
    modules = sorted({k.rsplit(".", 1)[0] for k in best})
    layers = sorted({int(m.split("layers.")[1].split(".")[0]) for m in modules})
    base_info = judge.info
    manifest = TuneManifest(
        name=job.name or out.name,
        base=job.base_name(),
        base_provenance=base_info.provenance,
        family=base_info.family,
        adapter_sha256=sha256_file(out / ADAPTER),
        rank=settings.lora_rank,
        alpha=settings.alpha,
        layers=layers,
        targets=sorted({m.rsplit(".", 1)[-1] for m in modules}),
        metrics=[d.metric.model_dump(mode="json") for d in data],
        human_field=job.human,
        human_scale=list(job.human_scale) if job.human_scale else None,
        data_sha256=job.data_sha256,
        trained_on=job.trained_on or f"{split.train_groups} groups ({len(split.train)} cases) of {job.data_name}",
        never_shown=job.never_shown,
        train_cases=len(split.train),
        validation_cases=len(split.validation),
        groups=[split.train_groups, split.validation_groups],
        settings=settings.model_dump(mode="json"),
        agreement_name=agreement_name(data[0].labels.kind)
        if len(data) == 1
        else f"mean over {', '.join(d.metric.name for d in data)} of: {agreement_name(data[0].labels.kind)}",
        history=history,
        best_epoch=state["best"],
        wall_seconds=round(time.time() - started, 1),
        tokens_per_second=round(state["tokens"] / max(state["seconds"], 1e-9), 1),
        peak_memory_gib=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
        localjudge_version=__version__,
    )
    (out / MANIFEST).write_text(manifest.model_dump_json(indent=1) + "\n")
    return manifest


__all__ = ["TuneFailedError", "packs_of", "read_packs", "tune"]
