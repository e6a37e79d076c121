"""`fit_verdict`: from a results file with labelled cases to a saved verdict metric and its report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from localjudge.calibration.hybrid_fit import component_table
from localjudge.calibration.options import CalibrationOptions
from localjudge.calibration.verdict import VerdictFit, fit_verdict_arrays
from localjudge.errors import ConfigError, DataError, clip
from localjudge.kinds.hybrid import FittedComponent
from localjudge.kinds.records import ResultRecord
from localjudge.kinds.verdict import VerdictMetric


def acceptable(labels: np.ndarray, human: str, pass_at: float | None) -> tuple[np.ndarray, str]:
    """(n,) 1 for acceptable labels, 0 for the rest, and the rule in words.

    Binary labels (0/1) need no rule; graded labels need `pass_at` (acceptable: label >= pass_at).
    """
    values = set(np.unique(labels).tolist())
    if pass_at is None:
        if not values <= {0.0, 1.0}:
            shown = ", ".join(f"{v:g}" for v in sorted(values)[:6])
            raise ConfigError(
                f"human field {clip(human)} is graded ({shown}{', ...' if len(values) > 6 else ''}); give --pass-at X: "
                "labels at or above X count as acceptable"
            )
        return labels.astype(float), "label = 1"
    return (labels >= pass_at).astype(float), f"label >= {pass_at:g}"


def fit_verdict(
    records: Sequence[ResultRecord],
    components: Sequence[str],
    human: str,
    *,
    pass_at: float | None = None,
    group: str | None = None,
    field: Literal["raw_score", "score"] = "raw_score",
    settings: CalibrationOptions | None = None,
    objective: str = "balanced_accuracy",
    name: str = "verdict",
) -> tuple[VerdictMetric, VerdictFit, str]:
    """Fits a verdict of `components` (metric names in the records) to the human label `human`.

    The share of the cases (or groups) it is fitted on is `settings.split` (default 0.5), the
    seed of the split and the folds `settings.seed` (default 0).
    Returns the verdict metric (for `eval --metric FILE`), its fit report and the acceptability rule.

    Examples:
        >>> metric, fit, rule = fit_verdict(read_results("r.jsonl"), ["consistency_likelihood"],
        ...                                 "human_consistency", pass_at=4.5, group="doc_id")  # doctest: +SKIP
        >>> fit.threshold, fit.held_out.accuracy, fit.held_out.ece  # doctest: +SKIP
    """
    components = list(dict.fromkeys(components))
    if not components:
        raise ConfigError("a verdict needs at least one metric: give --metrics M1[,M2,...]")
    if name in components:
        raise ConfigError(f"the verdict's name {clip(name)} is one of its components; name it otherwise")
    settings = settings or CalibrationOptions()
    x, labels, g, specs, skipped = component_table(records, components, human, group, field)
    if not len(labels):
        raise DataError(f"no case has every component of {components} scored; nothing to fit")
    y, rule = acceptable(labels, human, pass_at)
    verdict, fit = fit_verdict_arrays(x, y, g, components, settings, objective=objective)
    m = verdict.model
    metric = VerdictMetric(
        kind="verdict",
        name=name,
        components=[
            FittedComponent(
                metric=specs[components[c]],
                field=field,
                mean=float(m.mean[k]),
                std=float(m.std[k]),
                weight=float(m.weights[k]),
            )
            for k, c in enumerate(verdict.columns)
        ],
        intercept=m.intercept,
        threshold=min(1.0, max(0.0, verdict.threshold)),
        human_field=human,
        acceptable=rule,
        expected_accuracy=fit.held_out.accuracy,
        fit={**fit.model_dump(mode="json"), "skipped": skipped, "group_field": group},
    )
    return metric, fit, rule


def format_verdict_report(fit: VerdictFit, human: str, rule: str, group: str | None) -> str:
    """The fit as text: the split, the models tried, the threshold and the held-back figures."""
    h = fit.held_out
    groups = f" ({fit.fit_groups} / {fit.held_groups} groups of {group})" if group else ""
    lines = [
        f"Verdict on {human} (acceptable: {rule}) from {', '.join(fit.components)}",
        f"cases: {fit.items}; fit / held back: {fit.fit_items} / {h.items}{groups}",
        "",
        "cross-validated on the fit split (log-loss, lower is better):",
    ]
    width = max(len(c.label) for c in fit.cross_validation)
    for c in fit.cross_validation:
        mark = "  <- chosen" if c.label == fit.chosen else ""
        lines.append(f"  {c.label.ljust(width)}  {c.cv_log_loss:.4f}{mark}")
    ci = f" (95% interval {h.accuracy_ci[0]:.2f}-{h.accuracy_ci[1]:.2f})" if h.accuracy_ci else ""
    bal = "undefined" if h.balanced_accuracy is None else f"{h.balanced_accuracy:.3f}"
    auc = "undefined" if h.auc is None else f"{h.auc:.3f}"
    lines += [
        "",
        f"pass when P(acceptable) >= {fit.threshold:.3f} (chosen for {fit.objective.replace('_', ' ')} on "
        "out-of-fold predictions of the fit split)",
        "",
        f"held-back split ({h.items} cases, {h.positive_rate:.0%} acceptable):",
        f"  accuracy           {h.accuracy:.3f}{ci}",
        f"  balanced accuracy  {bal}",
        f"  ROC AUC            {auc}",
        f"  ECE                {h.ece:.3f}  (mean gap between P(acceptable) and the observed rate)",
        "",
        f"Verdict: on held-back cases it is right {h.accuracy:.0%} of the time"
        + (f"; a constant verdict would be right {max(h.positive_rate, 1 - h.positive_rate):.0%}" if h.items else ""),
    ]
    return "\n".join(lines)
