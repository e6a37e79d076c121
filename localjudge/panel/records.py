"""Panel records (one per case and metric, every member's reading kept) and the saved fitted weights.

A panel record has the keys `calibrate` looks for in a results file (`case_id`, `metric`,
`extra`, `score`, `raw_score`), so the pooled scores calibrate as `eval`'s do; each member's
full records are in its own results file beside the panel's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localjudge.errors import ConfigError, DataError
from localjudge.io.files import read_text
from localjudge.io.jsonl import RecordFile

Method = Literal["mean", "agreement", "fitted"]
"""How the members are weighed: equally, by their agreement with the rest, by weights fitted on labels."""


class MemberReading(BaseModel):
    """What one member of the panel read on a case."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    judge: str = Field(description="The member's judge name.")
    weight: float = Field(
        description="Its weight in this case's pooled score: the panel's weight, renormalised over the members "
        "pooled when the quorum let some be missing (0 for a member that left the case unscored)."
    )
    score: float | None = Field(description="Its score on 0–1 (pairwise: P(output 1 better)); null when unscored.")
    raw_score: float | None = Field(description="Its raw score (on the metric's scale); null when unscored or none.")
    distribution: dict[str, float] | None = Field(description="Its score (or label) distribution.")
    valid_mass: float | None = Field(description="Probability it put on the valid scores.")
    unscored_reason: str | None = Field(default=None, description="Why it has no score, or null.")


class PanelRecord(BaseModel):
    """The judgment of one case by one metric, pooled over the panel's judges."""

    model_config = ConfigDict(extra="forbid")

    case_id: str = Field(description="Id of the test case.")
    metric: str = Field(description="Metric name.")
    kind: str = Field(description="The metric's kind.")
    method: Method = Field(description="How the members were weighed.")
    score: float | None = Field(
        description="Weighted mean of the members' scores (pairwise: of P(output 1 better), before any decision); "
        "null when fewer members than the quorum (default: all) scored the case."
    )
    pooled: int = Field(description="Members whose readings were pooled (0 when unscored).")
    raw_score: float | None = Field(
        description="Weighted mean of the pooled members' raw scores; null when any has none."
    )
    distribution: dict[str, float] | None = Field(
        description="Weighted mean of the pooled members' distributions when they share their outcomes; else null."
    )
    mode: str | None = Field(description="Most probable outcome of the pooled distribution.")
    passed: bool | None = Field(description="score >= threshold; null when unscored or without a threshold.")
    threshold: float | None = Field(description="The metric's pass threshold on the score, or null.")
    spread: float | None = Field(description="Highest minus lowest pooled member score; null when unscored.")
    members: list[MemberReading] = Field(description="Every member's reading, in the panel's order.")
    unscored_reason: str | None = Field(default=None, description="Why there is no pooled score, or null.")
    extra: dict[str, Any] = Field(default_factory=dict, description="Extra fields of the case (human scores...).")
    metric_spec: dict[str, Any] = Field(description="The metric's full definition.")
    judges: list[dict[str, Any]] = Field(description="Each member's judge block, as its own records carry it.")
    localjudge_version: str = Field(description="Version of localjudge that produced the record.")


PANEL_RECORDS = RecordFile(PanelRecord, "localjudge panel record", "panel results file")
"""Panel results files: `PANEL_RECORDS.read(path)`, `PANEL_RECORDS.replace(path, records)`."""


class PanelWeights(BaseModel):
    """Weights fitted on human labels by `localjudge calibrate panel-weights`, for `eval --panel FILE`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["panel_weights"] = Field(default="panel_weights", description="Marks a panel weights file.")
    members: list[str] = Field(description="The members' judge names, in the order of `weights`.")
    weights: dict[str, list[float]] = Field(description="Metric name -> each member's weight (non-negative, sum 1).")
    human: str = Field(description="The human score field the weights were fitted on.")
    n_items: dict[str, int] = Field(description="Metric name -> labelled cases the fit used.")
    source: str = Field(description="The panel results file they were fitted on.")
    localjudge_version: str = Field(description="Version of localjudge that fitted them.")

    def for_metric(self, metric: str, members: list[str]) -> list[float]:
        """The weights of `metric` in the order of `members`.

        Raises:
            ConfigError: the file has no weights for the metric, or names other members.
        """
        if sorted(members) != sorted(self.members):
            raise ConfigError(
                f"the panel weights are for judges {', '.join(self.members)}, not {', '.join(members)}; "
                "give the same --judge options or fit the weights again"
            )
        if metric not in self.weights:
            raise ConfigError(
                f"the panel weights have no metric {metric!r} (they have {', '.join(self.weights)}); fit them on "
                "results of that metric"
            )
        by_name = dict(zip(self.members, self.weights[metric], strict=True))
        return [by_name[m] for m in members]


def load_panel_weights(path: str | Path) -> PanelWeights:
    """Reads a panel weights file.

    Raises:
        DataError: the file is not a panel weights file.
    """
    text = read_text(Path(path), "panel weights file")
    try:
        return PanelWeights.model_validate(json.loads(text))
    except (ValueError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        raise DataError(
            f"{path} is not a panel weights file ({first}); write one with calibrate panel-weights"
        ) from None
