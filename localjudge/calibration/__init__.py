"""Calibration of a judge against human scores: correlations, intervals, diagnostics, plots, verdicts.

Examples:
    >>> from localjudge.calibration import calibrate, format_report
    >>> report = calibrate([1, 2, 3, 4, 5], [1, 2, 4, 3, 5], n_bootstrap=200)
    >>> round(report.dataset.spearman.value, 3)
    0.9
"""

from localjudge.calibration.agreement import calibrate
from localjudge.calibration.inputs import Pairs, load_pairs
from localjudge.calibration.isotonic import IsotonicMap, fit_isotonic, pav
from localjudge.calibration.plots import write_plots
from localjudge.calibration.render import format_report
from localjudge.calibration.results import CalibrationReport, CalibrationSettings, InputInfo
from localjudge.calibration.verdict import VerdictFit
from localjudge.calibration.verdict_fit import fit_verdict
from localjudge.stats import correlations, required_n

__all__ = [
    "CalibrationReport",
    "CalibrationSettings",
    "InputInfo",
    "IsotonicMap",
    "Pairs",
    "VerdictFit",
    "calibrate",
    "correlations",
    "fit_isotonic",
    "fit_verdict",
    "format_report",
    "load_pairs",
    "pav",
    "required_n",
    "write_plots",
]
