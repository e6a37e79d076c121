"""`HeadOptions`: every choice a head fit makes, one object from the command line to the manifest."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from localjudge.kinds.fields import FieldName
from localjudge.options import Options

_INPUT: list[FieldName] = ["input"]


class HeadOptions(Options):
    """How heads are fit on a judge's hidden states; recorded whole in the head judge's manifest."""

    label: ClassVar[str] = "head option"

    depths: list[float] = Field(
        default_factory=lambda: [0.25, 0.5, 0.75, 1.0],
        min_length=1,
        description="Layers read, as fractions of the judge's depth (1.0: the final state); the cross-validation "
        "tries each alone and all together.",
    )
    alphas: list[float] = Field(
        default_factory=lambda: [1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0],
        min_length=1,
        description="L2 strengths the cross-validation tries (features standardised).",
    )
    folds: int = Field(default=5, ge=2, le=50, description="Grouped folds of the cross-validation.")
    seed: int = Field(default=0, ge=0, description="Seeds the order groups are dealt into folds.")
    anchor: Literal["likelihood", "none"] = Field(
        default="likelihood",
        description="likelihood: a rating's or label's head adds its standardised output to the output's "
        "standardised mean token log-probability, which it cannot shrink away, so it reads data unlike its "
        "labels no worse than the likelihood by much; none: the head alone. Preferences read no anchor.",
    )
    source_fields: list[FieldName] = Field(
        default_factory=lambda: _INPUT.copy(), min_length=1, description="Case fields shown before the output."
    )
    field_labels: dict[str, str] = Field(
        default_factory=dict, description="Label of each source field in the prompt (default its name)."
    )
    output_label: str = Field(default="Output", description="Label shown before the output.")
    sentences: bool = Field(
        default=False,
        description="Also read each sentence of the output alone after the source (its mean and least mean token "
        "log-probability become features): about one more pass over the outputs.",
    )
