"""localjudge metrics inside other evaluation frameworks.

`localjudge.integrations.deepeval` makes any localjudge metric a DeepEval metric (install the
`deepeval` extra, then deepeval itself with `--no-deps`: README, DeepEval);
`localjudge.integrations.inspect_ai` makes one an inspect_ai scorer (`localjudge_scorer`, the
`inspect` extra). `shared_judge` loads a judge once per name and process for both.
`localjudge.integrations.readout` turns a result record into the reason, score breakdown and log
such frameworks show; it needs no framework.

Names load on first use: `import localjudge.integrations` works without deepeval or inspect_ai
installed; only a DeepEval name (`GEval`, `LocalJudgeMetric`, ...) imports deepeval, and only
`localjudge_scorer` imports inspect_ai.

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
        GEval,
        LocalJudgeMetric,
        MissingFieldsError,
        to_test_case,
    )
    from localjudge.integrations.inspect_ai import localjudge_scorer
    from localjudge.integrations.readout import breakdown, log, reason
    from localjudge.integrations.shared import shared_judge

__all__ = [
    "INSTALL_DEEPEVAL",
    "TESTED_DEEPEVAL",
    "GEval",
    "LocalJudgeMetric",
    "MissingFieldsError",
    "breakdown",
    "localjudge_scorer",
    "log",
    "reason",
    "shared_judge",
    "to_test_case",
]

# name -> the module that defines it, imported on first access (deepeval and inspect_ai are optional)
_LAZY = {
    "INSTALL_DEEPEVAL": "localjudge.integrations.deepeval",
    "TESTED_DEEPEVAL": "localjudge.integrations.deepeval",
    "GEval": "localjudge.integrations.deepeval",
    "LocalJudgeMetric": "localjudge.integrations.deepeval",
    "MissingFieldsError": "localjudge.integrations.deepeval",
    "shared_judge": "localjudge.integrations.shared",
    "localjudge_scorer": "localjudge.integrations.inspect_ai",
    "to_test_case": "localjudge.integrations.deepeval",
    "breakdown": "localjudge.integrations.readout",
    "log": "localjudge.integrations.readout",
    "reason": "localjudge.integrations.readout",
}


__getattr__, __dir__ = lazy_exports("localjudge.integrations", _LAZY, globals())
