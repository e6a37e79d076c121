"""Entry points of the bias lab: run every analysis on a set of records into one `BiasReport`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from localjudge.bias import pairwise, pointwise, regression
from localjudge.bias.records import PairwiseRecord, PointwiseRecord
from localjudge.bias.results import BiasReport, BiasSettings
from localjudge.bias.summary import findings, summarize
from localjudge.bias.tables import pairwise_table, pointwise_table


def analyze_pointwise(records: Sequence[PointwiseRecord], settings: BiasSettings | None = None) -> BiasReport:
    """Score matrix, self-preference, perplexity covariate, equal opportunity and length bias.

    Args:
        records: One record per (judge, item, generator); unscored ones are skipped and counted.
        settings: Resampling, confidence and alpha; defaults to `BiasSettings()`.

    Returns:
        A report whose `findings` are Holm-corrected across all its tests and whose `summary`
        states the significant effects in plain language (or that there are none).

    Raises:
        DataError: The records are empty or contradict each other.

    Examples:
        >>> report = analyze_pointwise(records, BiasSettings(seed=1))  # doctest: +SKIP
        >>> print("\\n".join(report.summary))  # doctest: +SKIP
    """
    settings = settings or BiasSettings()
    t = pointwise_table(records)
    self_pref = pointwise.self_preference(records, settings)
    perplexity = regression.perplexity_adjusted(records, settings)
    opportunity = pointwise.equal_opportunity_pointwise(records, settings)
    length = regression.length_bias(records, settings)
    found = findings(
        settings, self_preference=self_pref, perplexity=perplexity, equal_opportunity=opportunity, length=length
    )
    unscored = {j: int(t.n_unscored[k].sum()) for k, j in enumerate(t.judges)}
    n_unscored = int(np.sum(t.n_unscored))
    return BiasReport(
        kind="pointwise",
        settings=settings,
        judges=list(t.judges),
        n_records=len(records),
        n_unscored=n_unscored,
        unscored_by_judge=unscored,
        n_items=len(t.items),
        matrix=pointwise.score_matrix(records, settings),
        self_preference=self_pref,
        perplexity=perplexity,
        equal_opportunity=opportunity,
        length=length,
        findings=found,
        summary=summarize(
            found,
            settings,
            self_preference=self_pref,
            perplexity=perplexity,
            n_unscored=n_unscored,
            n_records=len(records),
        ),
    )


def analyze_pairwise(records: Sequence[PairwiseRecord], settings: BiasSettings | None = None) -> BiasReport:
    """Self-preference, equal opportunity, position and length bias of pairwise judges.

    Args:
        records: One record per (judge, item, pair), holding both orders; a record with either
            order unscored is skipped and counted.
        settings: Resampling, confidence and alpha; defaults to `BiasSettings()`.

    Returns:
        A report like `analyze_pointwise`'s, without the score matrix.

    Raises:
        DataError: The records are empty or contradict each other.

    Examples:
        >>> report = analyze_pairwise(records)  # doctest: +SKIP
        >>> [(p.judge, p.flip_rate.value) for p in report.position]  # doctest: +SKIP
    """
    settings = settings or BiasSettings()
    t = pairwise_table(records)
    self_pref = pairwise.pairwise_self_preference(records, settings)
    opportunity = pairwise.equal_opportunity_pairwise(records, settings)
    position = pairwise.position_bias(records, settings)
    length = pairwise.pairwise_length_bias(records, settings)
    found = findings(
        settings,
        pairwise_self_preference=self_pref,
        equal_opportunity=opportunity,
        position=position,
        pairwise_length=length,
    )
    n_unscored = sum(t.unscored_by_judge.values())
    return BiasReport(
        kind="pairwise",
        settings=settings,
        judges=list(t.judges),
        n_records=t.n_records,
        n_unscored=n_unscored,
        unscored_by_judge=t.unscored_by_judge,
        n_items=len(t.items),
        pairwise_self_preference=self_pref,
        equal_opportunity=opportunity,
        position=position,
        pairwise_length=length,
        findings=found,
        summary=summarize(found, settings, self_preference=self_pref, n_unscored=n_unscored, n_records=t.n_records),
    )
