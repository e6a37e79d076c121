"""Options on how cases are shown to the judge and how its scores are read: --field-label, --min-valid-mass."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from localjudge.kinds import Metric

min_valid_mass_option = click.option(
    "--min-valid-mass",
    type=click.FloatRange(0, 1),
    default=None,
    help="Probability the judge must put on the valid scores (labels) for a case to be scored; below it the "
    "case is unscored, with the reason [default: 0.1]. Recorded in every record.",
)

field_label_option = click.option(
    "--field-label",
    "field_labels",
    multiple=True,
    metavar="FIELD=LABEL",
    help="Name a field in the prompts as what it is, e.g. actual_output=Reply or input=Dialogue; repeatable. "
    "Sets the heading of FIELD in every metric that shows it; built-in G-Eval metrics also name it so in "
    "their instructions.",
)


def min_valid_mass_or_default(value: float | None) -> float:
    """The option's value, or the library's default threshold when it was not given."""
    from localjudge.scoring.distribution import DEFAULT_MIN_VALID_MASS

    return DEFAULT_MIN_VALID_MASS if value is None else value


def labelled_metrics(names: Sequence[str], style_guide: str | None, specs: Sequence[str]) -> list[Metric]:
    """The metrics named by --metric, with the --field-label labels; a label no metric takes is an error."""
    from localjudge.errors import ConfigError
    from localjudge.metrics import resolve_metric
    from localjudge.metrics.labels import parse_field_labels

    labels = parse_field_labels(specs)
    metrics = [resolve_metric(n, style_guide=style_guide, field_labels=labels) for n in names]
    if labels:
        plain = [resolve_metric(n, style_guide=style_guide) for n in names]
        for field, label in labels.items():
            alone = [resolve_metric(n, style_guide=style_guide, field_labels={field: label}) for n in names]
            if alone == plain:
                raise ConfigError(
                    f"--field-label {field}={label}: no metric of this run shows or names {field} "
                    "(pairwise, reference and hybrid metrics take no labels); drop it or add a metric that reads it"
                )
    return metrics


def read_distributions(judge, prompts: list[str], scale, threshold: float) -> list:
    """Each prompt's score (or label) distribution under one judge."""
    if scale.labels is not None:
        return judge.score_labels(prompts, scale.labels, min_valid_mass=threshold)
    return judge.score_texts(prompts, scale.low, scale.high, min_valid_mass=threshold)
