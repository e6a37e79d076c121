"""localjudge metrics inside other evaluation frameworks.

`localjudge.integrations.deepeval` makes any localjudge metric a DeepEval metric (install the
`deepeval` extra, then deepeval itself with `--no-deps`: README, DeepEval).
`localjudge.integrations.readout` turns a result record into the reason, score breakdown and log
such frameworks show; it needs no framework.

Names load on first use: `import localjudge.integrations` works without deepeval installed, and
only a DeepEval name (`GEval`, `LocalJudgeMetric`, ...) imports it.

Examples:
    >>> from localjudge.integrations import GEval  # doctest: +SKIP
    >>> metric = GEval(name="Correctness", criteria="Is the answer right?")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localjudge.lazy import lazy_exports

if TYPE_CHECKING:
    from localjudge.integrations.deepeval import (
        INSTALL_DEEPEVAL,
        TESTED_DEEPEVAL,
        DeepEvalMissingError,
        GEval,
        LocalJudgeMetric,
        MissingFieldsError,
        shared_judge,
        to_test_case,
    )
    from localjudge.integrations.readout import breakdown, log, reason

__all__ = [
    "INSTALL_DEEPEVAL",
    "TESTED_DEEPEVAL",
    "DeepEvalMissingError",
    "GEval",
    "LocalJudgeMetric",
    "MissingFieldsError",
    "breakdown",
    "log",
    "reason",
    "shared_judge",
    "to_test_case",
]

# name -> the module that defines it, imported on first access (deepeval is an optional dependency)
_LAZY = {
    "INSTALL_DEEPEVAL": "localjudge.integrations.deepeval",
    "TESTED_DEEPEVAL": "localjudge.integrations.deepeval",
    "DeepEvalMissingError": "localjudge.integrations.deepeval",
    "GEval": "localjudge.integrations.deepeval",
    "LocalJudgeMetric": "localjudge.integrations.deepeval",
    "MissingFieldsError": "localjudge.integrations.deepeval",
    "shared_judge": "localjudge.integrations.deepeval",
    "to_test_case": "localjudge.integrations.deepeval",
    "breakdown": "localjudge.integrations.readout",
    "log": "localjudge.integrations.readout",
    "reason": "localjudge.integrations.readout",
}


__getattr__, __dir__ = lazy_exports("localjudge.integrations", _LAZY, globals())
