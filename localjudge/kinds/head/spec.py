"""What a head reads (`FeatureSpec`), how it turns features into a score (`HeadReading`), and its metric spec."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from localjudge.kinds.fields import FieldName

LabelKind = Literal["rating", "binary", "preference"]
FEATURE_VERSION = "head-features-1"
"""Version of the feature layout and generic prompt; a change makes cached features and heads stale."""


_INPUT: list[FieldName] = ["input"]


class FeatureSpec(BaseModel):
    """The one generic prompt every metric of a head shares, and the layers it reads.

    The prompt shows each source field under its label, then the output's label; the output is
    the continuation read after it (one pass per case, the source's KV shared by its outputs).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str = Field(default=FEATURE_VERSION, description="Feature layout and prompt version.")
    source_fields: list[FieldName] = Field(
        default_factory=lambda: _INPUT.copy(),
        min_length=1,
        description="Case fields shown before the output, in order.",
    )
    field_labels: dict[str, str] = Field(
        default_factory=dict, description="Label shown before each source field; default the field's name."
    )
    output_label: str = Field(default="Output", description="Label shown before the output.")
    layers: list[int] = Field(
        min_length=1, description="Decoder layers read (1: the first layer's output; the last: the final state)."
    )
    sentences: bool = Field(
        default=False,
        description="Also read each sentence of the output alone after the prompt: the mean and the least of the "
        "sentences' mean token log-probabilities join the features (one more continuation per sentence).",
    )

    @model_serializer(mode="wrap")
    def _omit_default(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # specs without sentence readings dump as before: heads, manifests and cached features keep their bytes
        out = handler(self)
        if out.get("sentences") is False:
            del out["sentences"]
        return out

    def prompt(self, values: dict[str, str]) -> str:
        """The prompt the output follows, from each source field's text."""
        parts = [
            f"{self.field_labels.get(f, f.replace('_', ' ').capitalize())}:\n{values[f]}" for f in self.source_fields
        ]
        return "\n\n".join(parts) + f"\n\n{self.output_label}:"


class Anchor(BaseModel):
    """How a head's reading leans on the judge's plain likelihood, which it cannot shrink away.

    The head's linear output and the output's mean token log-probability are each standardised
    (on the training cases) and added; `low + slope *` that sum is the head's output. A head fit on
    one kind of data then reads another kind no worse than its likelihood alone, by much.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    head_mean: float = Field(description="Mean of the head's linear output over the training cases.")
    head_sd: float = Field(gt=0, description="Its standard deviation.")
    anchor_mean: float = Field(description="Mean of the mean token log-probability over the training cases.")
    anchor_sd: float = Field(gt=0, description="Its standard deviation.")
    intercept: float = Field(description="Output at a sum of 0.")
    slope: float = Field(description="Output per unit of the sum.")


class HeadReading(BaseModel):
    """How one metric is read from a case's feature vector (weights in the folder's safetensors)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: LabelKind = Field(
        description="rating: a score on `scale`; binary: P(label 1); preference: P(output 1 better)."
    )
    scale: tuple[float, float] | None = Field(default=None, description="The rating's scale (low, high).")
    layers: list[int] = Field(min_length=1, description="Decoder layers whose pooled states it reads (of the spec's).")
    bias: float = Field(description="Intercept of the linear output (0 for a preference: it is antisymmetric).")
    anchor: Anchor | None = Field(default=None, description="The likelihood anchor; None: the head alone.")
    link: Literal["identity", "logistic"] = Field(
        description="identity: the output is the rating (clipped to the scale); logistic: sigmoid of it."
    )


class HeadMetric(BaseModel):
    """A metric answered by a head: the metric it was fit for, the folder, and the reading."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["head"] = Field(default="head", description="Metric kind.")
    name: str = Field(min_length=1, description="The metric's name: that of the metric the head was fit for.")
    threshold: float | None = Field(default=None, description="Pass mark on the 0-1 score (the fitted metric's).")
    head: str = Field(description="The head folder.")
    head_sha256: str = Field(description="SHA-256 of the head's weights file.")
    judge: str = Field(description="Name of the head judge.")
    fitted_for: dict[str, Any] = Field(description="The spec of the metric the head was fit for, as records carry it.")
    output_fields: list[str] = Field(
        description="The output read: [actual_output], or the two outputs of a preference."
    )
    features: FeatureSpec = Field(description="What the head reads.")
    reading: HeadReading = Field(description="How the score is read from the features.")
