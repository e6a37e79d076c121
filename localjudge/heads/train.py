"""`fit_heads`: a judge learns a metric from labelled cases through heads on its own hidden states.

One feature pass through the batch-invariant engine (`kinds.head.features`, cached by content in
the job's features folder), then for each metric a grouped cross-validation over layers and L2
strength and a fit on every labelled case (`heads.choose`), in seconds. The head folder it writes
(`head.safetensors`, `head.json`) loads wherever a judge is named and answers those metrics.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from localjudge.errors import ConfigError, clip
from localjudge.heads.choose import Features, choose
from localjudge.heads.options import HeadOptions
from localjudge.heads.store import load_features
from localjudge.io.cases import TestCase
from localjudge.judges.heads import HEAD_MANIFEST, HEAD_WEIGHTS, HeadFit, HeadManifest, is_head_folder
from localjudge.kinds import Metric, kind_of
from localjudge.kinds.head.features import continuations, matrix, prompt_of
from localjudge.kinds.head.spec import FeatureSpec, HeadMetric
from localjudge.labels import Labels, agreement, read_labels
from localjudge.tune.job import TuneJob
from localjudge.version import __version__


def fit_heads(
    cases: Sequence[TestCase], metric: Metric | Sequence[Metric], job: TuneJob, options: HeadOptions | None = None
) -> HeadManifest:
    """Fits one head per metric on the judge's hidden states and writes the head judge to `job.out`.

    Args:
        cases: labelled cases (`job.human` names the label field, `job.group` the grouping field).
        metric: a metric, or several (one head each over one shared feature pass).
        job: the base judge, labels, output folder, features folder (as `tune` takes them).
        options: layers, strengths, folds, anchor, the prompt's fields (`HeadOptions`).

    Raises:
        ConfigError: a metric that cannot learn from labels, a judge without hidden states, or an
            output folder holding something else.
        DataError: a case lacks its label or group, or a label lies outside its scale.

    Examples:
        >>> from localjudge.metrics import builtin_metric
        >>> job = TuneJob(judge="smollm2-135m", human="human_{metric}", group="doc_id", out="heads")
        >>> fit_heads(cases, [builtin_metric("coherence"), builtin_metric("fluency")], job)  # doctest: +SKIP
    """
    started = time.perf_counter()
    options = options or HeadOptions()
    metrics: list[Metric] = list(metric) if isinstance(metric, (list, tuple)) else [metric]  # type: ignore[list-item]
    if not metrics:
        raise ConfigError("no metric to fit a head for; pass --metric")
    several = len(metrics) > 1
    labels = {
        m.name: read_labels(m, cases, job.human_field(m.name, several), job.human_scale, job.group) for m in metrics
    }
    _prepare_out(job)
    judge = _load(job)
    depth = judge.layer_count
    if depth is None:
        raise ConfigError(f"judge {clip(job.judge)} has no hidden states to read; fit heads on a model judge")
    layers = sorted({max(1, min(depth, round(f * depth))) for f in options.depths})
    spec = FeatureSpec(
        source_fields=options.source_fields,
        field_labels=options.field_labels,
        output_label=options.output_label,
        layers=layers,
        sentences=options.sentences,
    )
    outputs = {m.name: _output_fields(m, labels[m.name]) for m in metrics}
    _check_fields(cases, spec, outputs)
    prompts = [prompt_of(spec, c) for c in cases]
    items = sorted({(prompts[i], str(c.get(f))) for m in metrics for i, c in enumerate(cases) for f in outputs[m.name]})
    t0 = time.perf_counter()
    reads = continuations(spec, [p for p, _ in items], [o for _, o in items])  # with sentences, more than items
    with job.bar(len(reads), "features") as bar:
        feats, computed = load_features(judge, spec, items, job.features_folder, bar.update)
    feature_seconds = time.perf_counter() - t0
    by_item = dict(zip(items, feats))
    tensors: dict[str, np.ndarray] = {}
    fits = []
    for m in metrics:
        lab = labels[m.name]
        t1 = time.perf_counter()
        sets = _feature_sets(spec, cases, prompts, outputs[m.name], by_item)
        agree = _agreement(m, lab)
        chosen = choose(
            lab.kind,
            lab.scale,
            sets,
            lab.values,
            np.array(lab.groups),
            agree,
            options.alphas,
            options.folds,
            options.seed,
            options.anchor == "likelihood",
        )
        w = chosen.weights
        tensors |= {f"{m.name}.weight": w.weight, f"{m.name}.centre": w.centre, f"{m.name}.scale": w.scale}
        spec_of = HeadMetric(
            name=m.name,
            threshold=m.threshold,
            head="",
            head_sha256="",
            judge="",
            fitted_for=m.model_dump(mode="json"),
            output_fields=outputs[m.name],
            features=spec,
            reading=chosen.reading,
        )
        fits.append(
            HeadFit(
                metric=m.name,
                reading=spec_of.model_dump(mode="json", exclude={"head", "judge"}),
                human_field=lab.field,
                human_scale=None if job.human_scale is None else list(job.human_scale),
                labelled_cases=len(lab.values),
                groups=len(set(lab.groups)),
                agreement_name=agreement(m, np.full(len(lab.values), np.nan), lab).name,
                folds=chosen.folds,
                candidates=chosen.candidates,
                chosen=chosen.chosen.model_copy(update={"agreement": chosen.oof_agreement}),
                fit_seconds=round(time.perf_counter() - t1, 3),
            )
        )
    return _write(job, judge, spec, fits, tensors, options, feature_seconds, computed, started)


def _output_fields(metric: Metric, labels: Labels) -> list[str]:
    """The output a head reads: the case's output, or the two outputs a preference compares (its kind says)."""
    fields = kind_of(metric).outputs_read(metric)
    assert len(fields) == (2 if labels.kind == "preference" else 1), "a preference compares two outputs"
    return fields


def _check_fields(cases: Sequence[TestCase], spec: FeatureSpec, outputs: dict[str, list[str]]) -> None:
    need = [*spec.source_fields, *sorted({f for fs in outputs.values() for f in fs})]
    for c in cases:
        lacking = [f for f in need if c.get(f) is None or not str(c.get(f)).strip()]
        if lacking:
            raise ConfigError(
                f"case {clip(c.id)} has no {', '.join(lacking)}; a head reads {', '.join(need)} of every labelled case "
                "(--source-field names the source fields)"
            )


def _feature_sets(spec: FeatureSpec, cases, prompts, fields: list[str], by_item) -> list[Features]:
    """Each layer set the cross-validation tries (each layer alone, then all): the cases' feature vectors."""
    sets = [(layer,) for layer in spec.layers] + ([tuple(spec.layers)] if len(spec.layers) > 1 else [])
    out = []
    for layers in sets:
        per_field = [
            matrix([by_item[(p, str(c.get(f)))] for p, c in zip(prompts, cases)], spec, layers) for f in fields
        ]
        out.append(Features(layers, per_field[0], per_field[1] if len(per_field) == 2 else None))
    return out


def _agreement(metric: Metric, labels: Labels):
    def agree(scores: np.ndarray) -> float | None:
        return agreement(metric, scores, labels).value

    return agree


def _prepare_out(job: TuneJob) -> None:
    out = job.out
    if not out.exists():
        out.mkdir(parents=True)
        return
    if not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a folder for the head judge")
    if is_head_folder(out):
        if not job.overwrite:
            raise ConfigError(
                f"--out {out} holds a head judge; pass --overwrite to replace it, or choose another folder"
            )
        for name in (HEAD_MANIFEST, HEAD_WEIGHTS):
            (out / name).unlink(missing_ok=True)
        return
    stray = [p for p in out.iterdir() if p.name != "features"]
    if stray and not job.resume:
        raise ConfigError(f"--out {out} holds other files, not a head judge; choose an empty or new folder")


def _load(job: TuneJob) -> Any:
    """The base judge in fp32 through the batch-invariant engine: the features a head reads at `eval`."""
    from pathlib import Path

    from localjudge.engine.options import EngineOptions
    from localjudge.judges.adapters import is_tune_folder
    from localjudge.judges.loading import load_judge

    where = Path(job.judge).expanduser()
    if is_tune_folder(where) or is_head_folder(where):
        raise ConfigError(f"{clip(job.judge)} is a tuned or head judge; fit heads on its base judge instead")
    return load_judge(job.judge, options=EngineOptions(device=job.device, dtype="float32"), progress=job.progress)


def _write(job, judge, spec, fits, tensors, options, feature_seconds, computed, started) -> HeadManifest:
    from safetensors.numpy import save_file

    from localjudge.weights.hashes import sha256_file

    weights = job.out / HEAD_WEIGHTS
    save_file({k: np.ascontiguousarray(v, dtype=np.float64) for k, v in sorted(tensors.items())}, str(weights))
    digest = sha256_file(weights)
    for f in fits:
        f.reading["head_sha256"] = digest
    manifest = HeadManifest(
        name=job.name or job.out.name,
        base=job.base_name(),
        base_provenance=judge.info.provenance,
        family=judge.info.family,
        dtype=judge.info.dtype,
        head_sha256=digest,
        features=spec.model_dump(mode="json"),
        heads=fits,
        settings=options.model_dump(mode="json"),
        data_sha256=job.data_sha256,
        trained_on=job.trained_on or f"{sum(f.labelled_cases for f in fits)} labelled readings of {job.data_name}",
        never_shown=job.never_shown,
        feature_seconds=round(feature_seconds, 2),
        outputs_read=computed,
        wall_seconds=round(time.perf_counter() - started, 2),
        peak_memory_gib=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
        localjudge_version=__version__,
    )
    (job.out / HEAD_MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n")
    return manifest
