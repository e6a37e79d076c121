"""The calibration report, as pydantic models (JSON-serialisable, NaN-free).

Every float that can be undefined is `None` in that case; no field ever holds NaN or inf.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

from localjudge.calibration.options import CalibrationOptions
from localjudge.stats import Estimate


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    @field_validator("*", mode="after")
    @classmethod
    def _no_nan(cls, value: object) -> object:
        assert not (isinstance(value, float) and not math.isfinite(value)), "NaN/inf in report"
        return value


class InputInfo(_Model):
    """Where the score pairs came from."""

    path: str
    """The input file."""
    kind: Literal["results", "table"]
    """"results" for a `localjudge eval` results file, "table" for a CSV/JSONL/JSON table."""
    metric: str | None = None
    """The metric whose scores were read (results files only)."""
    judge_field: str
    """Field or column holding the judge score."""
    human_field: str
    """Field or column holding the human score."""
    group_field: str | None = None
    """Field or column holding the group id, if any."""
    unscored_reasons: dict[str, int] = {}
    """Count of unscored items per reason the file gives."""


class CorrelationEstimates(_Model):
    """Spearman, Pearson and Kendall τ-b, each with an interval."""

    spearman: Estimate
    """Spearman's rank correlation ρ."""
    pearson: Estimate
    """Pearson's linear correlation r."""
    kendall_tau_b: Estimate
    """Kendall's τ-b (tie-corrected)."""


class SummaryLevelEstimates(_Model):
    """Correlations within each group, averaged over groups (SummEval summary level)."""

    correlations: CorrelationEstimates
    """Means of the per-group coefficients; intervals resample groups."""
    n_groups_used: int
    """Groups with a defined correlation."""
    n_groups_skipped: int
    """Groups skipped: a score list was constant, or it had fewer than 3 scored items."""


class ScoreSummary(_Model):
    """Descriptive statistics of one side's scored items."""

    min: float
    """Smallest score."""
    max: float
    """Largest score."""
    mean: float
    """Mean score."""
    std: float
    """Sample standard deviation (ddof=1; 0 for a single item)."""
    scale: tuple[float, float] | None = None
    """(low, high) of the scale, when known."""
    min_frac: float | None = None
    """`min` as a fraction of the scale (0 = low end, 1 = high end); None without a scale."""
    max_frac: float | None = None
    """`max` as a fraction of the scale."""
    mean_frac: float | None = None
    """`mean` as a fraction of the scale."""
    std_frac: float | None = None
    """`std` divided by the scale's width."""


class ScaleDiagnostics(_Model):
    """Do judge scores use their scale as widely as human scores use theirs?"""

    judge: ScoreSummary
    """Judge score statistics."""
    human: ScoreSummary
    """Human score statistics."""
    spread_basis: Literal["scale", "iqr_over_range"]
    """"scale": std / scale width (both scales known); else IQR / observed range."""
    judge_spread: float
    """Spread of judge scores on `spread_basis`."""
    human_spread: float
    """Spread of human scores on `spread_basis`."""
    compressed: bool
    """Spearman ρ ≥ 0.5 but judge spread < 0.5 × human spread: right order, squeezed scale."""


class SampleSizeCheck(_Model):
    """Are there enough labelled items to tell a good judge from a mediocre one?"""

    n_labelled: int
    """Items with both a judge and a human score."""
    min_recommended: int
    """Fewest items to tell ρ = 0.7 from ρ = 0.5 (one-sided α = 0.05, power 0.8)."""
    aim_low: int
    """Items to tell ρ = 0.8 from ρ = 0.7, one-sided (α = 0.05, power 0.8)."""
    aim_high: int
    """The same, two-sided."""
    sufficient: bool
    """Whether `n_labelled` ≥ `min_recommended`."""
    warning: str | None = None
    """The warning printed when not sufficient."""


class FitScoresModel(_Model):
    """Agreement with human scores on the held-out split."""

    spearman: float | None
    """Spearman ρ; None when undefined."""
    pearson: float | None
    """Pearson r; None when undefined."""
    mae: float
    """Mean absolute error against human scores."""


class FitEvaluation(_Model):
    """Before/after comparison of a monotone mapping, on held-out items."""

    method: Literal["isotonic"]
    """The mapping fitted."""
    split_by: Literal["items", "groups"]
    """Whether whole groups were kept on one side of the split."""
    n_calibration: int
    """Scored items the mapping was fitted on."""
    n_heldout: int
    """Scored items it was evaluated on."""
    before_mapping: Literal["linear_scale", "identity"]
    """How raw judge scores were put on the human scale for the "before" MAE."""
    before: FitScoresModel
    """Raw judge scores against human scores."""
    after: FitScoresModel
    """Mapped judge scores against human scores."""


class Readiness(_Model):
    """Is the judge good enough to gate releases?"""

    ready: bool
    """True when ρ ≥ target and there are enough labelled items."""
    statistic: Literal["summary_spearman", "dataset_spearman"]
    """The ρ compared with the target: summary level when groups are given."""
    value: float | None
    """That ρ; None when undefined."""
    target: float
    """The target ρ."""
    reasons: list[str]
    """Why not ready (empty when ready), plus caveats."""
    line: str
    """The one line as printed: READY or NOT READY, and why."""


class CalibrationReport(_Model):
    """How well a judge's scores agree with human scores, and whether to trust it."""

    settings: CalibrationOptions
    """The options this report was computed with."""
    input: InputInfo | None = None
    """The file the pairs were read from, if any."""
    n_items: int
    """All items, scored or not."""
    n_scored: int
    """Items with a judge score (all items have a human score)."""
    n_unscored: int
    """Items the judge left unscored; excluded from every statistic, never counted as 0."""
    unscored_share: float
    """`n_unscored` / `n_items`."""
    resampling: Literal["items", "groups"]
    """What the bootstrap resamples."""
    dataset: CorrelationEstimates
    """Correlations over all scored items."""
    summary: SummaryLevelEstimates | None = None
    """Per-group correlations averaged, when groups are given."""
    scale: ScaleDiagnostics
    """Scale use and compression."""
    sample_size: SampleSizeCheck
    """Whether there are enough labelled items."""
    readiness: Readiness
    """READY / NOT READY against the target."""
    fit: FitEvaluation | None = None
    """Held-out evaluation of a monotone mapping, when requested."""
    plots: list[str] = []
    """Paths of the PNG plots written."""
