"""The verdict metric: scorers' values mapped to a calibrated P(acceptable) and a pass/fail threshold.

Fitted by `localjudge calibrate --verdict` on a user's labelled cases (`calibration.verdict`) and
applied by `localjudge eval --metric verdict.json`: the components are judged, then

    P(acceptable) = sigmoid(intercept + Σ weight · (component score − mean) / std)

and a case passes when P(acceptable) ≥ threshold. The accuracy it states is the one measured on
held-back cases when it was fitted (`fit.held_out`), not on the cases it is applied to.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class VerdictComponent(BaseModel):
    """One scorer a verdict reads, and its place in the logistic model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: dict[str, Any] = Field(description="The component metric's full definition.")
    field: Literal["raw_score", "score"] = Field(default="raw_score", description="Which score of its records is read.")
    mean: float = Field(description="Mean of the component's score on the fit data.")
    std: float = Field(gt=0, description="Standard deviation of the component's score on the fit data.")
    weight: float = Field(description="Weight of the standardised score in the log-odds.")


class VerdictMetric(BaseModel):
    """A pass/fail verdict with a calibrated probability, fitted on labels (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["verdict"] = Field(description="Metric kind.")
    name: str = Field(min_length=1, description="Metric name, used in results.")
    components: list[VerdictComponent] = Field(min_length=1, description="The scorers read.")
    intercept: float = Field(description="Log-odds of acceptable when every component sits at its fit mean.")
    threshold: float = Field(ge=0, le=1, description="P(acceptable) at or above which a case passes.")
    human_field: str = Field(description="The label the verdict was fitted to.")
    acceptable: str = Field(description="Which labels counted as acceptable, e.g. 'label = 1' or 'label >= 4'.")
    expected_accuracy: float = Field(ge=0, le=1, description="Accuracy of the verdict on held-back labelled cases.")
    fit: dict[str, Any] = Field(default_factory=dict, description="How it was fitted and how it did (the report).")

    @model_validator(mode="after")
    def _check(self) -> VerdictMetric:
        metrics = self.component_metrics
        names = [m.name for m in metrics]
        if len(set(names)) != len(names):
            raise ValueError(f"component metrics repeated: {names}")
        if any(m.kind in ("hybrid", "verdict") for m in metrics) or self.name in names:
            raise ValueError("a verdict cannot contain a hybrid, a verdict or a metric of its own name")
        return self

    @property
    def component_metrics(self) -> list:
        """The component metrics, validated."""
        from localjudge.metrics.spec import metric_from_dict  # the spec registers this kind

        return [metric_from_dict(c.metric, f"verdict {self.name!r} component") for c in self.components]
