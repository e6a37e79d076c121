"""The verdict kind: scorers' values mapped to a calibrated P(acceptable) and a pass/fail threshold.

Fitted by `localjudge calibrate fit-verdict` on a user's labelled cases (`calibration.verdict`) and
applied by `localjudge eval --metric verdict.json`: the components are judged, then

    P(acceptable) = sigmoid(intercept + Σ weight · (component score − mean) / std)

and a case passes when P(acceptable) ≥ threshold. The accuracy it states is the one measured on
held-back cases when it was fitted (`fit.held_out`), not on the cases it is applied to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from localjudge.kinds.base import KindSummary, Listing
from localjudge.kinds.hybrid import FittedKind, FittedMetric
from localjudge.kinds.records import ResultRecord
from localjudge.scoring.logistic import sigmoid

VERDICT_VERSION = "verdict-v1"


class VerdictMetric(FittedMetric):
    """A pass/fail verdict with a calibrated probability, fitted on labels (see the module docstring)."""

    kind: Literal["verdict"] = Field(description="Metric kind.")
    threshold: float = Field(ge=0, le=1, description="P(acceptable) at or above which a case passes.")
    human_field: str = Field(description="The label the verdict was fitted to.")
    acceptable: str = Field(description="Which labels counted as acceptable, e.g. 'label = 1' or 'label >= 4'.")
    expected_accuracy: float = Field(ge=0, le=1, description="Accuracy of the verdict on held-back labelled cases.")
    fit: dict[str, Any] = Field(default_factory=dict, description="How it was fitted and how it did (the report).")


class VerdictSummary(BaseModel):
    """What a verdict's summary adds: the accuracy its fit measured."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    expected_accuracy: float | None = Field(
        default=None, description="Its accuracy on held-back labelled cases when it was fitted."
    )


class VerdictKind(FittedKind[VerdictMetric]):
    """A fitted logistic model of other metrics' scores, with a pass mark (see the module docstring)."""

    name = "verdict"
    spec = VerdictMetric
    summary_detail = VerdictSummary
    version = VERDICT_VERSION

    def scaled(self, metric: VerdictMetric, raw: float) -> float:
        """P(acceptable) = sigmoid of the log-odds (the raw_score); the case passes at the fitted threshold."""
        return float(sigmoid(np.array(raw)))

    def summarise(self, records: Sequence[ResultRecord]) -> KindSummary:
        if not records:
            return KindSummary()
        spec = records[0].metric_spec
        return KindSummary(VerdictSummary(expected_accuracy=spec.get("expected_accuracy")), (verdict_note(spec),))

    def describe(self, metric: VerdictMetric) -> Listing:
        return Listing(
            f"P(acceptable) >= {metric.threshold:.3f}", ", ".join(c.metric["name"] for c in metric.components)
        )

    def reading(self, record: ResultRecord, parts: str) -> str:
        spec = record.metric_spec
        return (
            f"P(acceptable) {record.score:.3f} from {parts}; {'passes' if record.passed else 'fails'} at "
            f"{spec.get('threshold', 0):.3f} (held-back accuracy {spec.get('expected_accuracy', 0):.2f})"
        )


def verdict_note(spec: dict) -> str:
    """What a verdict's pass/fail is worth, from the fit its metric file keeps."""
    held = spec.get("fit", {}).get("held_out", {})
    bal, ece = held.get("balanced_accuracy"), held.get("ece")
    extra = ", ".join(
        x
        for x in (
            f"balanced accuracy {bal:.2f}" if bal is not None else "",
            f"ECE {ece:.3f}" if ece is not None else "",
        )
        if x
    )
    return (
        f"pass means P(acceptable) >= {spec['threshold']:.3f} (acceptable: {spec['acceptable']} of "
        f"{spec['human_field']}); on {held.get('items', '?')} held-back labelled cases this verdict was right "
        f"{spec['expected_accuracy']:.0%} of the time ({extra}): expect that on cases like the ones it was fitted on, "
        "not on other kinds"
    )


VERDICT = VerdictKind()
