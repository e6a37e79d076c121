"""Judging as a panel: several judges on every case, their readings pooled.

- `weights`: the pure maths: equal weights, weights learned from how the members agree, weights
  fitted on labels, and the pooled reading (`pool`, the one pooling of judges: the bias lab's
  panels pool through it too).
- `members`: who may sit on a panel (two judges or more, each once).
- `pool`: members' records of a case -> one `PanelRecord` keeping every member's reading.
- `run`: `evaluate_panel`, each member's resumable `evaluate` run, then the pooling.
- `fit`: `fit_panel_weights`, the members' weights fitted on human labels, reported on held-out cases.
- `options`: `PanelOptions`; `records`: panel records and the saved fitted weights;
  `summary`: per-metric summaries that say when the members disagree.

Examples:
    >>> from localjudge.panel import PanelOptions
    >>> PanelOptions(method="agreement").method
    'agreement'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localjudge.lazy import lazy_exports

if TYPE_CHECKING:
    from localjudge.panel.fit import MetricFit, PanelFit, fit_panel_weights
    from localjudge.panel.options import PanelOptions
    from localjudge.panel.records import MemberReading, PanelRecord, PanelWeights, load_panel_weights
    from localjudge.panel.run import PanelResult, evaluate_panel, member_path
    from localjudge.panel.summary import MemberSummary, PanelSummary

__all__ = [
    "MemberReading",
    "MemberSummary",
    "MetricFit",
    "PanelFit",
    "PanelOptions",
    "PanelRecord",
    "PanelResult",
    "PanelSummary",
    "PanelWeights",
    "evaluate_panel",
    "fit_panel_weights",
    "load_panel_weights",
    "member_path",
]

# name -> the module that defines it, imported on first access
_LAZY = {
    "MetricFit": "localjudge.panel.fit",
    "PanelFit": "localjudge.panel.fit",
    "fit_panel_weights": "localjudge.panel.fit",
    "PanelOptions": "localjudge.panel.options",
    "MemberReading": "localjudge.panel.records",
    "PanelRecord": "localjudge.panel.records",
    "PanelWeights": "localjudge.panel.records",
    "load_panel_weights": "localjudge.panel.records",
    "PanelResult": "localjudge.panel.run",
    "evaluate_panel": "localjudge.panel.run",
    "member_path": "localjudge.panel.run",
    "MemberSummary": "localjudge.panel.summary",
    "PanelSummary": "localjudge.panel.summary",
}

__getattr__, __dir__ = lazy_exports("localjudge.panel", _LAZY, globals())
