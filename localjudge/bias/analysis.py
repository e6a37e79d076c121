"""Entry points of the bias lab: run every analysis on a set of records into one `BiasReport`.

`analyze_pointwise` and `analyze_pairwise` measure a judging protocol's biases; `analyze_models`
measures each judge's preference for its own responses and its family's models (and panels'),
from the records of either protocol. Each report's findings are Holm-corrected across its tests.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from localjudge.bias import pairwise, pointwise, regression
from localjudge.bias.panels import BiasPanel, check_panels, panel_targets
from localjudge.bias.records import PairwiseRecord, PointwiseRecord
from localjudge.bias.results import BiasReport, BiasSettings
from localjudge.bias.summary import findings, summarize, summarize_models
from localjudge.bias.tables import pairwise_table, pointwise_table
from localjudge.bias.targets import pairwise_targets, pointwise_targets, win_rates
from localjudge.errors import DataError


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


def analyze_models(
    point: Sequence[PointwiseRecord],
    pair: Sequence[PairwiseRecord],
    settings: BiasSettings | None = None,
    panels: Sequence[BiasPanel] = (),
) -> BiasReport:
    """Win rates and each judge's preference for itself and its family's models, with Holm-corrected findings.

    Args:
        point: Pointwise records (may be empty).
        pair: Pairwise records, both orders (may be empty).
        settings: Resampling, confidence and alpha; defaults to `BiasSettings()`.
        panels: Panels of the judges whose pooled judgments are measured as well (`bias.panels`);
            their estimates carry intervals and p-values but are not among the Holm-corrected findings.

    Returns:
        A report of kind "models": `win_rates`, `targets`, `target_did`, `panels`, findings, summary.

    Raises:
        DataError: Both record lists are empty, or the records contradict each other.
        ConfigError: A panel names a judge without judgments, or a judge's name.

    Examples:
        >>> report = analyze_models(pointwise_records, pairwise_records)  # doctest: +SKIP
        >>> [(p.judge, p.target, p.rate.value) for p in report.targets]  # doctest: +SKIP
    """
    settings = settings or BiasSettings()
    if not point and not pair:
        raise DataError("no records for the model-level report; run the bias scoring step first")
    judges = sorted({r.judge for r in point} | {r.judge for r in pair})
    check_panels(panels, judges)
    targets = pairwise_targets(pair, settings) if pair else []
    dids = pointwise_targets(point, settings) if point else []
    found = findings(settings, targets=targets, target_did=dids)
    unscored = dict.fromkeys(judges, 0)
    for judge in [r.judge for r in point if r.score is None]:
        unscored[judge] += 1
    for judge in [r.judge for r in pair if r.p_a_first is None or r.p_a_second is None]:
        unscored[judge] += 1
    return BiasReport(
        kind="models",
        settings=settings,
        judges=judges,
        n_records=len(point) + len(pair),
        n_unscored=sum(unscored.values()),
        unscored_by_judge=unscored,
        n_items=len({r.item_id for r in point} | {r.item_id for r in pair}),
        win_rates=win_rates(pair, settings) if pair else None,
        targets=targets,
        target_did=dids,
        panels=panel_targets(point, pair, panels, settings) if panels else [],
        findings=found,
        summary=summarize_models(found, settings, targets),
    )
