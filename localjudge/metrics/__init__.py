"""Metric definitions as users name and write them: built-in metrics, metric files, field labels.

The specs of each kind live with their kind (`localjudge.kinds`) and are re-exported here;
`localjudge.metrics.spec` validates a definition of any registered kind (`metric_from_dict`,
`load_metric_file`), `localjudge.metrics.builtin` names the built-in metrics, and
`localjudge.metrics.labels` reads `--field-labels` (how a metric's prompt names each case field).

Examples:
    >>> from localjudge.metrics import builtin_metric
    >>> builtin_metric("correctness").kind
    'geval'
"""

from localjudge.metrics import spec
from localjudge.metrics.builtin import builtin_metric, builtin_names, resolve_metric, with_reasoning
from localjudge.metrics.labels import parse_field_labels
from localjudge.metrics.spec import *  # noqa: F403 - the package's interface includes spec's, as spec.__all__ lists it

__all__ = ["builtin_metric", "builtin_names", "parse_field_labels", "resolve_metric", "with_reasoning"]
__all__ += spec.__all__
