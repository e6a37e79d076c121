"""Options on how cases are shown to the judge and how its scores are read: --field-label, the scoring flags."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from localjudge.cli.flags import Flag, settings_flags

if TYPE_CHECKING:
    from localjudge.kinds import Metric

_SCORING_HELP = {
    "truncate": "Cut content longer than the judge's context (recorded) instead of failing.",
    "min_valid_mass": "Probability (0..1) the judge must put on the valid scores (labels) for a case to be scored; "
    "below it the case is unscored, with the reason. Recorded in every record.",
    "chunk_size": "Cases per scoring call (1 or more); the engine batches within a call [default: 256 on CUDA, 16 "
    "on the CPU].",
}


def scoring_options(*names: str, **help_text: str):
    """The flags of the `ScoringOptions` fields `names` (`settings_flags`), passed to the command as one `scoring`.

    --truncate is a one-way switch, as it has always stood; `help_text` rewords a flag's help for
    the command. A value `ScoringOptions` refuses (--min-valid-mass 2) exits 2 naming its flag.

    Examples:
        >>> @click.command()
        ... @scoring_options("truncate", "min_valid_mass")
        ... def cmd(scoring):
        ...     click.echo(scoring.min_valid_mass)
    """
    from localjudge.kinds.options import ScoringOptions

    unknown = set(names) - set(_SCORING_HELP) | set(help_text) - set(names)
    assert not unknown, f"no scoring flag {unknown}"
    texts = {n: help_text.get(n, _SCORING_HELP[n]) for n in names}
    flags = {"truncate": Flag(switch=True)} if "truncate" in names else {}
    return settings_flags(ScoringOptions, "scoring", names, texts, flags)


field_label_option = click.option(
    "--field-label",
    "field_labels",
    multiple=True,
    metavar="FIELD=LABEL",
    help="Name a field in the prompts as what it is, e.g. actual_output=Reply or input=Dialogue; repeatable. "
    "Sets the heading of FIELD in every metric that shows it; built-in G-Eval metrics also name it so in "
    "their instructions.",
)


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
