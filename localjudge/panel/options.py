"""`PanelOptions`: how a panel weighs its members.

Examples:
    >>> PanelOptions().method
    'mean'
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, model_validator

from localjudge.errors import ConfigError
from localjudge.options import Options
from localjudge.panel.records import Method, PanelWeights


class PanelOptions(Options):
    """The settings of a panel run (the run's file and the scoring are `RunOptions`, `ScoringOptions`)."""

    label: ClassVar[str] = "panel option"

    method: Method = Field(default="mean", description="mean, agreement (learned without labels) or fitted.")
    weights: PanelWeights | None = Field(default=None, description="The fitted weights, for method fitted.")
    quorum: int | None = Field(
        default=None,
        ge=1,
        description="Members that must score a case for the panel to score it; default every member. With fewer "
        "than all, the members that scored it are pooled, their weights renormalised, and the record says so.",
    )

    @model_validator(mode="after")
    def _weights_with_fitted(self) -> PanelOptions:
        if (self.method == "fitted") != (self.weights is not None):
            raise ConfigError("a fitted panel takes its weights (--panel FILE), and only a fitted panel does")
        return self

    def check_members(self, members: int) -> None:
        """Refuses a panel of `members` judges that these options cannot pool, before any judge loads.

        Raises:
            ConfigError: fewer than two members, or fewer than the quorum.

        Examples:
            >>> PanelOptions(quorum=3).check_members(2)
            Traceback (most recent call last):
            ...
            localjudge.errors.ConfigError: --quorum 3 needs as many judges; the panel has 2
        """
        if members < 2:
            raise ConfigError("--panel and --quorum pool several judges; give --judge once per member, twice or more")
        if self.quorum is not None and self.quorum > members:
            raise ConfigError(f"--quorum {self.quorum} needs as many judges; the panel has {members}")
