"""`fit_hybrid`: from a results file with several metrics per case to a saved hybrid metric and its report."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from localjudge.calibration import hybrid as H
from localjudge.calibration.options import CalibrationOptions
from localjudge.errors import ConfigError, DataError, clip, cut
from localjudge.kinds.hybrid import FittedComponent, HybridMetric
from localjudge.kinds.records import ResultRecord
from localjudge.labels import grouped_split, spearman_agreement


class CandidateScore(BaseModel):
    """A combination tried and its cross-validated agreement on the fit split."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(description="The combination, e.g. 'ridge α=1' or 'x alone'.")
    cv_spearman: float | None = Field(description="Spearman ρ on held-out folds of the fit split.")


class HybridReport(BaseModel):
    """How a hybrid was fitted and whether it beats its best part on held-back data."""

    model_config = ConfigDict(extra="forbid")

    components: list[str] = Field(description="Metrics combined.")
    human_field: str = Field(description="Human label predicted.")
    group_field: str | None = Field(description="Group field: agreement per group, folds by group.")
    items: int = Field(description="Cases with every component scored and a label.")
    skipped: int = Field(description="Cases left out: a component unscored or missing.")
    fit_items: int = Field(description="Cases in the fit split.")
    held_items: int = Field(description="Cases in the held-back split.")
    fit_groups: int | None = Field(description="Groups in the fit split.")
    held_groups: int | None = Field(description="Groups in the held-back split.")
    cross_validation: list[CandidateScore] = Field(description="Every combination tried, on the fit split.")
    chosen: str = Field(description="The combination kept (best cross-validated, simplest on a tie).")
    held_out: dict[str, float | None] = Field(
        description="Spearman ρ on the held-back split: each component alone, and 'hybrid'."
    )
    best_part: str | None = Field(description="The component with the best held-back agreement.")
    beats_best_part: bool | None = Field(description="Whether the hybrid's held-back ρ is at least its best part's.")
    finding: str = Field(description="The finding in one sentence.")


def component_table(
    records: Sequence[ResultRecord], components: Sequence[str], human: str, group: str | None, field: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, dict[str, dict], int]:
    """(n, K) component scores, (n,) human labels, (n,) groups or None, {metric: spec}, cases skipped.

    A case is skipped when a component is unscored or missing; a case without the human field,
    or with a label that is not a number, is an error.
    """
    by_metric: dict[str, dict[str, ResultRecord]] = {c: {} for c in components}
    specs: dict[str, dict] = {}
    for r in records:
        if r.metric in by_metric:
            by_metric[r.metric][r.case_id] = r
            if specs.setdefault(r.metric, r.metric_spec) != r.metric_spec:
                raise DataError(
                    f"metric {clip(r.metric)} was defined differently in different records; "
                    "fit on the records of one run"
                )
    missing = [c for c in components if not by_metric[c]]
    if missing:
        known = sorted({r.metric for r in records})
        raise ConfigError(f"no records of metric(s) {missing} in the results file; it has {known}")
    rows, labels, groups, skipped = [], [], [], 0
    for case_id, first in by_metric[components[0]].items():
        recs = [by_metric[c].get(case_id) for c in components]
        values = [getattr(r, field) if r is not None else None for r in recs]
        label = first.extra.get(human)
        if label is None:
            fields = cut(", ".join(sorted(first.extra)), 160)
            raise DataError(f"case {clip(case_id)} has no human field {clip(human)}; known extra fields: {fields}")
        if isinstance(label, bool) or not isinstance(label, (int, float)) or not math.isfinite(label):
            raise DataError(f"case {clip(case_id)}: human field {clip(human)} is {clip(label)}, not a number")
        if any(v is None for v in values):
            skipped += 1
            continue
        rows.append(values)
        labels.append(float(label))
        if group is not None:
            if group not in first.extra:
                raise DataError(f"case {clip(case_id)} has no group field {clip(group)}")
            groups.append(str(first.extra[group]))
    g = np.array(groups) if group is not None else None
    return np.array(rows, dtype=float), np.array(labels), g, specs, skipped


def fit_hybrid(
    records: Sequence[ResultRecord],
    components: Sequence[str],
    human: str,
    *,
    group: str | None = None,
    field: Literal["raw_score", "score"] = "raw_score",
    settings: CalibrationOptions | None = None,
    folds: int = 5,
    name: str = "hybrid",
) -> tuple[HybridMetric, HybridReport]:
    """Fits a hybrid of `components` (metric names in the records) to the human label `human`.

    The fit split (a share of the cases, or of whole groups) chooses and fits the combination
    by cross-validation; the held-back split only reports it against each component alone.
    The share is `settings.split` (default 0.5) and the seed of the split and the folds
    `settings.seed` (default 0).

    Examples:
        >>> metric, report = fit_hybrid(read_results("r.jsonl"), ["consistency", "consistency_likelihood"],
        ...                             "human_consistency", group="doc_id")  # doctest: +SKIP
        >>> report.held_out, report.beats_best_part  # doctest: +SKIP
    """
    components = list(dict.fromkeys(components))
    if name in components:
        raise ConfigError(f"the hybrid's name {clip(name)} is one of its components; name it otherwise")
    settings = settings or CalibrationOptions()
    x, y, g, specs, skipped = component_table(records, components, human, group, field)
    model, report = fit_arrays(x, y, g, components, settings, folds=folds)
    report = report.model_copy(update={"human_field": human, "group_field": group, "skipped": skipped})
    metric = HybridMetric(
        kind="hybrid",
        name=name,
        method=report.chosen,
        intercept=model.intercept,
        human_field=human,
        human_scale=(float(y.min()), float(y.max())),
        components=[
            FittedComponent(
                metric=specs[c],
                field=field,
                mean=float(model.mean[k]),
                std=float(model.std[k]),
                weight=float(model.weights[k]),
            )
            for k, c in enumerate(components)
        ],
        fit=report.model_dump(mode="json"),
    )
    return metric, report


def fit_arrays(
    x: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray | None,
    components: Sequence[str],
    settings: CalibrationOptions | None = None,
    *,
    folds: int = 5,
) -> tuple[H.LinearScore, HybridReport]:
    """`fit_hybrid` on arrays: (n, K) component scores, (n,) human scores, (n,) group ids or None.

    `settings.split` of the items (or groups) are fitted on, drawn with `settings.seed`, which also seeds the folds.
    """
    settings = settings or CalibrationOptions()
    g, seed = groups, settings.seed
    fit, held = grouped_split(g, settings.split, seed, len(y))
    if len(fit) < H.MIN_FIT_ITEMS or len(held) < H.MIN_FIT_ITEMS:
        raise DataError(
            f"{len(y)} labelled cases give {len(fit)} to fit and {len(held)} to test; "
            f"need {H.MIN_FIT_ITEMS} in each: label more cases"
        )
    gf = g[fit] if g is not None else None
    gh = g[held] if g is not None else None
    cands = H.cross_validate(x[fit], y[fit], gf, components, k=folds, seed=seed)
    chosen = H.choose(cands)
    model = H.fit_candidate(x[fit], y[fit], gf, chosen.method, chosen.alpha, chosen.component)
    held_out = {}
    for k, c in enumerate(components):
        alone = H.fit_candidate(x[fit], y[fit], gf, "single", None, k)
        held_out[c] = spearman_agreement(alone.predict(x[held]), y[held], gh)
    held_out["hybrid"] = spearman_agreement(model.predict(x[held]), y[held], gh)
    parts = {c: v for c, v in held_out.items() if c != "hybrid" and v is not None}
    best = max(parts, key=parts.__getitem__) if parts else None
    beats = None if best is None or held_out["hybrid"] is None else held_out["hybrid"] >= parts[best] - 1e-12
    report = HybridReport(
        components=list(components),
        human_field="human",
        group_field="group" if g is not None else None,
        items=len(y),
        skipped=0,
        fit_items=len(fit),
        held_items=len(held),
        fit_groups=len(np.unique(gf)) if gf is not None else None,
        held_groups=len(np.unique(gh)) if gh is not None else None,
        cross_validation=[CandidateScore(label=c.label, cv_spearman=c.cv_spearman) for c in cands],
        chosen=chosen.label,
        held_out=held_out,
        best_part=best,
        beats_best_part=beats,
        finding=_finding(held_out, best, beats, chosen.label),
    )
    return model, report


def _finding(held_out: dict, best: str | None, beats: bool | None, chosen: str) -> str:
    hyb = held_out["hybrid"]
    if best is None or hyb is None:
        return "agreement is undefined on the held-back split; label more varied cases"
    diff = hyb - held_out[best]
    if beats:
        return (
            f"the hybrid ({chosen}) reaches ρ {hyb:.3f} on held-back cases, {diff:+.3f} against its best part, {best}"
        )
    return (
        f"the hybrid ({chosen}) reaches ρ {hyb:.3f} on held-back cases, {diff:+.3f} against its best part, "
        f"{best}: use {best} alone"
    )


def format_hybrid_report(report: HybridReport) -> str:
    """The report as text: the split, the combinations tried, held-back agreement, the finding."""
    groups = (
        f" ({report.fit_groups} / {report.held_groups} groups of {report.group_field})" if report.group_field else ""
    )
    lines = [
        f"Hybrid of {', '.join(report.components)} predicting {report.human_field}",
        f"cases: {report.items} ({report.skipped} skipped: a component unscored); fit / held back: "
        f"{report.fit_items} / {report.held_items}{groups}",
        "",
        "cross-validated on the fit split (Spearman ρ"
        + (", per group then averaged" if report.group_field else "")
        + "):",
    ]
    width = max(len(c.label) for c in report.cross_validation)
    for c in report.cross_validation:
        mark = "  <- chosen" if c.label == report.chosen else ""
        lines.append(f"  {c.label.ljust(width)}  {_f(c.cv_spearman)}{mark}")
    lines += ["", "held-back split:"]
    width = max(len(k) for k in report.held_out)
    for k, v in report.held_out.items():
        lines.append(f"  {k.ljust(width)}  {_f(v)}")
    lines += ["", f"Finding: {report.finding}"]
    return "\n".join(lines)


def _f(x: float | None) -> str:
    return "undefined" if x is None else f"{x:+.3f}"
