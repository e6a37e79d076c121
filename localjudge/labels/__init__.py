"""One floor for human labels: reading them, splitting them by group, and measuring agreement with them.

Every feature that learns from or checks against people's labels (`tune`, `calibrate`, the panel
weights, heads) reads them here, so that one label field means one thing everywhere:

- `read`: a label field of cases on the metric's own terms (`Labels`: a rating mapped onto the
  metric's scale, 1/0, or 1.0 when output 1 is better), with each case's group (`group_names`: one
  default, the input, else the case id);
- `split`: one seeded split keeping whole groups on one side (`grouped_split`);
- `agreement`: one figure per kind of label (summary-level Spearman ρ, ROC AUC, accuracy), named in words.

What kind of label a metric takes is its kind's answer (`MetricKind.label_kind`), never a type test.

Examples:
    >>> grouped_split(["a", "a", "b", "b", "c", "c"], 0.5, seed=0).first.tolist()
    [0, 1, 4, 5]
"""

from localjudge.kinds.training import LabelKind
from localjudge.labels.agreement import Agreement, agreement, agreement_name, spearman_agreement
from localjudge.labels.read import Labels, group_names, read_labels
from localjudge.labels.split import Split, grouped_split

__all__ = [
    "Agreement",
    "LabelKind",
    "Labels",
    "Split",
    "agreement",
    "agreement_name",
    "group_names",
    "grouped_split",
    "read_labels",
    "spearman_agreement",
]
