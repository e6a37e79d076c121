"""Calibration of a judge against human scores: correlations, intervals, diagnostics, plots.

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
from localjudge.stats import correlations, required_n

__all__ = [
    "CalibrationReport",
    "CalibrationSettings",
    "InputInfo",
    "IsotonicMap",
    "Pairs",
    "calibrate",
    "correlations",
    "fit_isotonic",
    "format_report",
    "load_pairs",
    "pav",
    "required_n",
    "write_plots",
]
