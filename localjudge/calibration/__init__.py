"""Calibration of a judge against human scores: correlations, intervals, diagnostics, plots, verdicts.

- `calibrate` (`agreement`): judge-vs-human agreement with bootstrap intervals and diagnostics,
  reported by `format_report` (`render`) and drawn by `write_plots` (`plots`).
- `fit_isotonic` / `pav` (`isotonic`): a monotone map from judge scores to the human scale.
- `fit_hybrid` (`hybrid_fit`): a hybrid of metrics fitted to a human label on one split of the
  cases, reported on the other; `fit_verdict` (`verdict_fit`, `verdict`): a pass/fail verdict likewise.
- `load_pairs` (`inputs`): (judge score, human score, group) pairs from a results file or a table.

Examples:
    >>> from localjudge.calibration import calibrate, format_report
    >>> report = calibrate([1, 2, 3, 4, 5], [1, 2, 4, 3, 5], n_bootstrap=200)
    >>> round(report.dataset.spearman.value, 3)
    0.9
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localjudge.lazy import lazy_exports

if TYPE_CHECKING:
    from localjudge.calibration.agreement import calibrate
    from localjudge.calibration.hybrid_fit import HybridReport, fit_hybrid, format_hybrid_report
    from localjudge.calibration.inputs import Pairs, PairSource, load_pairs
    from localjudge.calibration.isotonic import IsotonicMap, fit_isotonic, pav
    from localjudge.calibration.logistic import fit_logistic
    from localjudge.calibration.options import CalibrationOptions
    from localjudge.calibration.plots import plot_paths, write_plots
    from localjudge.calibration.render import format_report
    from localjudge.calibration.results import CalibrationReport, InputInfo
    from localjudge.calibration.verdict import VerdictFit, fit_verdict_arrays
    from localjudge.calibration.verdict_fit import fit_verdict, format_verdict_report
    from localjudge.stats import correlations, required_n

__all__ = [
    "CalibrationOptions",
    "CalibrationReport",
    "HybridReport",
    "InputInfo",
    "IsotonicMap",
    "PairSource",
    "Pairs",
    "VerdictFit",
    "calibrate",
    "correlations",
    "fit_hybrid",
    "fit_isotonic",
    "fit_logistic",
    "fit_verdict",
    "fit_verdict_arrays",
    "format_hybrid_report",
    "format_report",
    "format_verdict_report",
    "load_pairs",
    "pav",
    "plot_paths",
    "required_n",
    "write_plots",
]

# name -> the module that defines it, imported on first access (scipy, matplotlib: not for --help)
_LAZY = {
    "calibrate": "localjudge.calibration.agreement",
    "HybridReport": "localjudge.calibration.hybrid_fit",
    "fit_hybrid": "localjudge.calibration.hybrid_fit",
    "format_hybrid_report": "localjudge.calibration.hybrid_fit",
    "Pairs": "localjudge.calibration.inputs",
    "PairSource": "localjudge.calibration.inputs",
    "load_pairs": "localjudge.calibration.inputs",
    "IsotonicMap": "localjudge.calibration.isotonic",
    "fit_isotonic": "localjudge.calibration.isotonic",
    "pav": "localjudge.calibration.isotonic",
    "fit_logistic": "localjudge.calibration.logistic",
    "CalibrationOptions": "localjudge.calibration.options",
    "plot_paths": "localjudge.calibration.plots",
    "write_plots": "localjudge.calibration.plots",
    "format_report": "localjudge.calibration.render",
    "CalibrationReport": "localjudge.calibration.results",
    "InputInfo": "localjudge.calibration.results",
    "VerdictFit": "localjudge.calibration.verdict",
    "fit_verdict_arrays": "localjudge.calibration.verdict",
    "fit_verdict": "localjudge.calibration.verdict_fit",
    "format_verdict_report": "localjudge.calibration.verdict_fit",
    "correlations": "localjudge.stats",
    "required_n": "localjudge.stats",
}

__getattr__, __dir__ = lazy_exports("localjudge.calibration", _LAZY, globals())
