"""The G-Eval metric's definition: task, criteria, evaluation steps, optional rubric, fields and scale."""

from __future__ import annotations

from itertools import pairwise
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from localjudge.kinds.fields import FieldName, Reasoning, check_fields


class RubricRange(BaseModel):
    """Scores low..high (inclusive) and what they mean."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    low: int = Field(description="Lowest score of the range.")
    high: int = Field(description="Highest score of the range (equal to low for a single point).")
    description: str = Field(min_length=1, description="What an output in this range looks like.")


class GEvalMetric(BaseModel):
    """A G-Eval metric: task, criteria, evaluation steps, optional rubric, fields and scale.

    Examples:
        >>> m = GEvalMetric(name="clarity", task="Judge an answer.", criteria="Is it clear?",
        ...                 fields=["input", "actual_output"], low=1, high=5)
        >>> m.normalize(4.0)
        0.75
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["geval"] = Field(default="geval", description="Metric kind.")
    name: str = Field(min_length=1, description="Metric name, used in results.")
    task: str = Field(min_length=1, description="What the judge is shown and asked to do.")
    criteria: str = Field(min_length=1, description="Precise definition of the quality judged.")
    steps: list[str] | None = Field(
        default=None, description="Evaluation steps; None: generated once by the judge and cached."
    )
    rubric: list[RubricRange] = Field(default_factory=list, description="Optional score ranges with descriptions.")
    fields: list[FieldName] = Field(min_length=1, description="Test-case fields the judge reads.")
    required: list[FieldName] | None = Field(
        default=None, description="Fields that must be present (default: all of `fields`)."
    )
    field_labels: dict[str, str] = Field(
        default_factory=dict, description="Headings shown for fields, e.g. {'input': 'Source document'}."
    )
    low: int = Field(default=1, description="Lowest score.")
    high: int = Field(default=5, description="Highest score.")
    threshold: float = Field(default=0.5, ge=0, le=1, description="Pass threshold on the normalised 0-1 score.")
    reasoning: Reasoning = Field(
        default="none", description="none: score only; before: analysis then score; after: score then explanation."
    )

    @model_validator(mode="after")
    def _check(self) -> GEvalMetric:
        if not 0 <= self.low < self.high <= 100:
            raise ValueError(f"invalid scale {self.low}..{self.high}: need 0 <= low < high <= 100")
        if self.steps is not None and (not self.steps or any(not s.strip() for s in self.steps)):
            raise ValueError("steps must be a non-empty list of non-empty strings (or omitted to generate them)")
        for r in self.rubric:
            if r.low > r.high:
                raise ValueError(f"rubric range {r.low}-{r.high} is reversed")
            if r.low < self.low or r.high > self.high:
                raise ValueError(f"rubric range {r.low}-{r.high} lies outside the scale {self.low}..{self.high}")
        ranges = sorted(self.rubric, key=lambda r: r.low)
        for a, b in pairwise(ranges):
            if b.low <= a.high:
                raise ValueError(f"rubric ranges {a.low}-{a.high} and {b.low}-{b.high} overlap")
        check_fields(self.fields)
        if self.required is not None and not set(self.required) <= set(self.fields):
            raise ValueError("required fields must be among fields")
        return self

    @property
    def required_fields(self) -> list[str]:
        """Fields a case must have to be scored."""
        return list(self.required if self.required is not None else self.fields)

    def rubric_gaps(self) -> list[int]:
        """Scores of the scale no rubric range covers (empty when there is no rubric)."""
        if not self.rubric:
            return []
        covered = {s for r in self.rubric for s in range(r.low, r.high + 1)}
        return [s for s in range(self.low, self.high + 1) if s not in covered]

    def normalize(self, expected: float) -> float:
        """Maps a raw score on low..high to 0..1."""
        return (expected - self.low) / (self.high - self.low)
