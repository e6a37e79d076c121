"""A verdict fitted on labels: scorers' values → calibrated P(acceptable) → pass/fail, with its accuracy.

Pure maths over arrays. The protocol, so that the accuracy a verdict states is one it earned on
cases it never saw:

1. The labelled cases (or whole groups, e.g. documents) are split: a `share` to fit, the rest held
   back (`labels.grouped_split`).
2. On the fit split, grouped k-fold cross-validation compares each component alone and all of
   them together (logistic regressions, `logistic.fit_logistic`) by held-out log-loss, and keeps
   the simplest within one standard error of the best (as the hybrid does).
3. The kept model is refitted on the whole fit split. Its pass threshold is chosen on the
   *out-of-fold* probabilities of the fit split (each case predicted by a model that did not see
   its group), maximising balanced accuracy (or accuracy): a cut fitted on the model's own
   training predictions would be too confident.
4. The held-back split, used for nothing above, gives the figures the verdict states: accuracy
   (with a bootstrap interval over groups), balanced accuracy, ROC AUC and the expected
   calibration error (ECE) of its probabilities.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from localjudge.calibration.hybrid import MIN_FIT_ITEMS, folds
from localjudge.calibration.logistic import Logistic, fit_logistic
from localjudge.calibration.options import CalibrationOptions
from localjudge.errors import DataError
from localjudge.labels import grouped_split
from localjudge.stats import bootstrap_indices, percentile_interval
from localjudge.stats.classification import accuracy, balanced_accuracy, best_threshold, ece, log_loss, roc_auc

Objective = str  # "balanced_accuracy" or "accuracy"


class HeldOut(BaseModel):
    """How the fitted verdict did on the held-back split."""

    model_config = ConfigDict(extra="forbid")

    items: int = Field(description="Held-back cases.")
    positive_rate: float = Field(description="Share of them labelled acceptable.")
    accuracy: float = Field(description="Share of verdicts that match the labels.")
    accuracy_ci: tuple[float, float] | None = Field(
        description="95% bootstrap interval of the accuracy (resampling groups, or cases without groups)."
    )
    balanced_accuracy: float | None = Field(
        description="Mean of the pass rate of acceptable and fail rate of the rest."
    )
    auc: float | None = Field(description="ROC AUC of P(acceptable).")
    ece: float = Field(description="Expected calibration error of P(acceptable), 10 equal-width bins.")
    log_loss: float = Field(description="Mean negative log-likelihood of the labels.")


class CandidateLoss(BaseModel):
    """A model tried on the fit split and its cross-validated log-loss."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(description="'x alone' or 'all'.")
    cv_log_loss: float = Field(description="Held-out log-loss over the folds of the fit split (lower is better).")


class VerdictFit(BaseModel):
    """The fit of a verdict, as `calibrate fit-verdict` reports it and the saved verdict keeps it."""

    model_config = ConfigDict(extra="forbid")

    components: list[str] = Field(description="Scorers offered.")
    used: list[str] = Field(description="Scorers the kept model reads.")
    items: int = Field(description="Labelled cases with every component scored.")
    fit_items: int = Field(description="Cases in the fit split.")
    fit_groups: int | None = Field(description="Groups in the fit split.")
    held_groups: int | None = Field(description="Groups in the held-back split.")
    cross_validation: list[CandidateLoss] = Field(description="Every model tried, on the fit split.")
    chosen: str = Field(description="The model kept (simplest within one standard error of the best).")
    objective: str = Field(description="What the threshold maximises: balanced_accuracy or accuracy.")
    threshold: float = Field(description="P(acceptable) at or above which a case passes.")
    held_out: HeldOut = Field(description="The figures on held-back cases: what the verdict states.")


@dataclass(frozen=True)
class Verdict:
    """A fitted verdict: the model over the columns it uses, and the threshold."""

    model: Logistic
    columns: tuple[int, ...]  # component indices the model reads
    threshold: float

    def prob(self, x: np.ndarray) -> np.ndarray:
        """(n,) P(acceptable) of (n, K) component scores."""
        return self.model.prob(np.asarray(x, float)[:, list(self.columns)])


def _candidates(names: Sequence[str]) -> list[tuple[str, tuple[int, ...]]]:
    out = [(f"{n} alone", (k,)) for k, n in enumerate(names)]
    return out + ([("all", tuple(range(len(names))))] if len(names) > 1 else [])


def _oof(x: np.ndarray, y: np.ndarray, parts: list[np.ndarray], cols: tuple[int, ...]) -> np.ndarray:
    """Out-of-fold probabilities: each part predicted by a model fitted on the others."""
    out = np.empty(len(y))
    for test in parts:
        train = np.setdiff1d(np.arange(len(y)), test)
        if len(np.unique(y[train])) < 2:
            raise DataError("a cross-validation fold holds one class only; label more cases of both kinds")
        out[test] = fit_logistic(x[train][:, list(cols)], y[train]).prob(x[test][:, list(cols)])
    return out


def _choose(names: Sequence[str], x, y, parts) -> tuple[list[CandidateLoss], tuple[str, tuple[int, ...]], np.ndarray]:
    """Every candidate's CV log-loss; the simplest within one SE of the best; its out-of-fold probabilities."""
    tried = []
    for label, cols in _candidates(names):
        p = _oof(x, y, parts, cols)
        per_fold = np.array([log_loss(p[t], y[t]) for t in parts])  # (k,)
        tried.append((label, cols, p, per_fold))
    best = min(tried, key=lambda t: t[3].mean())

    def close(t) -> bool:
        d = t[3] - best[3]  # (k,) paired over folds
        se = float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else 0.0
        return t[3].mean() <= best[3].mean() + se + 1e-12

    within = [t for t in tried if close(t)]
    pick = min(within, key=lambda t: (len(t[1]) > 1, t[3].mean()))
    losses = [CandidateLoss(label=t[0], cv_log_loss=float(t[3].mean())) for t in tried]
    return losses, (pick[0], pick[1]), pick[2]


def _held_out(p: np.ndarray, y: np.ndarray, threshold: float, groups: np.ndarray | None, seed: int) -> HeldOut:
    passed = p >= threshold
    boots = np.array([accuracy(passed[idx], y[idx]) for idx in bootstrap_indices(len(y), groups, 1000, seed)])  # (B,)
    ci = percentile_interval(boots, 0.95)
    return HeldOut(
        items=len(y),
        positive_rate=float(np.mean(y)),
        accuracy=accuracy(passed, y),
        accuracy_ci=None if ci is None else (ci.low, ci.high),
        balanced_accuracy=balanced_accuracy(passed, y),
        auc=roc_auc(p, y),
        ece=ece(p, y),
        log_loss=log_loss(p, y),
    )


def fit_verdict_arrays(
    x: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray | None,
    names: Sequence[str],
    settings: CalibrationOptions | None = None,
    *,
    k: int = 5,
    objective: Objective = "balanced_accuracy",
) -> tuple[Verdict, VerdictFit]:
    """Fits a verdict on (n, K) component scores and (n,) labels in {0, 1}; see the module docstring.

    `settings.split` of the items (or groups) are fitted on, drawn with `settings.seed`, which also seeds the folds
    and the held-out accuracy's bootstrap.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> y = rng.integers(0, 2, 200)
        >>> x = (y + rng.normal(0, 0.8, 200))[:, None]
        >>> verdict, fit = fit_verdict_arrays(x, y, None, ["signal"])
        >>> fit.chosen, fit.held_out.accuracy > 0.6
        ('signal alone', True)
    """
    if objective not in ("balanced_accuracy", "accuracy"):
        raise DataError(f"objective {objective!r}: use balanced_accuracy or accuracy")
    x, y = np.asarray(x, float), np.asarray(y, float)
    settings = settings or CalibrationOptions()
    seed = settings.seed
    fit, held = grouped_split(groups, settings.split, seed, len(y))
    for part, name in ((fit, "fit"), (held, "held-back")):
        if len(part) < MIN_FIT_ITEMS or len(np.unique(y[part])) < 2:
            raise DataError(
                f"the {name} split has {len(part)} cases ({int(y[part].sum())} acceptable); need {MIN_FIT_ITEMS} "
                "with both kinds in each split: label more cases, or change --split"
            )
    gf = groups[fit] if groups is not None else None
    gh = groups[held] if groups is not None else None
    parts = [fit_idx for fit_idx in folds(len(fit), gf, k, seed) if len(fit_idx)]
    tried, (label, cols), oof = _choose(names, x[fit], y[fit], parts)
    model = fit_logistic(x[fit][:, list(cols)], y[fit])
    threshold = best_threshold(oof, y[fit], objective)
    verdict = Verdict(model, cols, threshold)
    report = VerdictFit(
        components=list(names),
        used=[names[c] for c in cols],
        items=len(y),
        fit_items=len(fit),
        fit_groups=len(np.unique(gf)) if gf is not None else None,
        held_groups=len(np.unique(gh)) if gh is not None else None,
        cross_validation=tried,
        chosen=label,
        objective=objective,
        threshold=threshold,
        held_out=_held_out(verdict.prob(x[held]), y[held], threshold, gh, seed),
    )
    return verdict, report
