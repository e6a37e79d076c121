"""Entry points of the bias lab: run every analysis on a set of records into one `BiasReport`.

`analyze_pointwise` and `analyze_pairwise` measure a judging protocol's biases; `analyze_models`
measures each judge's preference for its own responses and its family's models (and panels'),
from the records of either protocol. Each report's findings are Holm-corrected across its tests.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from localjudge.bias import pairwise, pointwise, regression
from localjudge.bias.options import DEFAULT_OPTIONS, BiasOptions
from localjudge.bias.panels import BiasPanel, check_panels, panel_targets
from localjudge.bias.records import PairwiseRecord, PointwiseRecord
from localjudge.bias.results import BiasReport
from localjudge.bias.summary import findings, summarize, summarize_models
from localjudge.bias.tables import pairwise_table, pointwise_table
from localjudge.bias.targets import pairwise_targets, pointwise_targets, win_rates
from localjudge.errors import DataError


def analyze_pointwise(records: Sequence[PointwiseRecord], settings: BiasOptions = DEFAULT_OPTIONS) -> BiasReport:
    """Score matrix, self-preference, perplexity covariate, equal opportunity and length bias.

    Args:
        records: One record per (judge, item, generator); unscored ones are skipped and counted.
        settings: Resampling, confidence and alpha (default `BiasOptions()`).

    Returns:
        A report whose `findings` are Holm-corrected across all its tests and whose `summary`
        states the significant effects in plain language (or that there are none).

    Raises:
        DataError: The records are empty or contradict each other.

    Examples:
        >>> report = analyze_pointwise(records, BiasOptions(seed=1))  # doctest: +SKIP
        >>> print("\\n".join(report.summary))  # doctest: +SKIP
    """
    t = pointwise_table(records)
    report = BiasReport(
        kind="pointwise",
        settings=settings,
        judges=list(t.judges),
        n_records=len(records),
        n_unscored=int(np.sum(t.n_unscored)),
        unscored_by_judge={j: int(t.n_unscored[k].sum()) for k, j in enumerate(t.judges)},
        n_items=len(t.items),
        matrix=pointwise.score_matrix(records, settings),
        self_preference=pointwise.self_preference(records, settings),
        perplexity=regression.perplexity_adjusted(records, settings),
        equal_opportunity=pointwise.equal_opportunity_pointwise(records, settings),
        length=regression.length_bias(records, settings),
    )
    return _concluded(report)


def analyze_pairwise(records: Sequence[PairwiseRecord], settings: BiasOptions = DEFAULT_OPTIONS) -> BiasReport:
    """Self-preference, equal opportunity, position and length bias of pairwise judges.

    Args:
        records: One record per (judge, item, pair), holding both orders; a record with either
            order unscored is skipped and counted.
        settings: Resampling, confidence and alpha (default `BiasOptions()`).

    Returns:
        A report like `analyze_pointwise`'s, without the score matrix.

    Raises:
        DataError: The records are empty or contradict each other.

    Examples:
        >>> report = analyze_pairwise(records)  # doctest: +SKIP
        >>> [(p.judge, p.flip_rate.value) for p in report.position]  # doctest: +SKIP
    """
    t = pairwise_table(records)
    report = BiasReport(
        kind="pairwise",
        settings=settings,
        judges=list(t.judges),
        n_records=t.n_records,
        n_unscored=sum(t.unscored_by_judge.values()),
        unscored_by_judge=t.unscored_by_judge,
        n_items=len(t.items),
        pairwise_self_preference=pairwise.pairwise_self_preference(records, settings),
        equal_opportunity=pairwise.equal_opportunity_pairwise(records, settings),
        position=pairwise.position_bias(records, settings),
        pairwise_length=pairwise.pairwise_length_bias(records, settings),
    )
    return _concluded(report)


def analyze_models(
    point: Sequence[PointwiseRecord],
    pair: Sequence[PairwiseRecord],
    settings: BiasOptions = DEFAULT_OPTIONS,
    panels: Sequence[BiasPanel] = (),
) -> BiasReport:
    """Win rates and each judge's preference for itself and its family's models, with Holm-corrected findings.

    Args:
        point: Pointwise records (may be empty).
        pair: Pairwise records, both orders (may be empty).
        settings: Resampling, confidence and alpha (default `BiasOptions()`).
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
    if not point and not pair:
        raise DataError("no records for the model-level report; run the bias scoring step first")
    judges = sorted({r.judge for r in point} | {r.judge for r in pair})
    check_panels(panels, judges)
    unscored = dict.fromkeys(judges, 0)
    for judge in [r.judge for r in point if r.score is None]:
        unscored[judge] += 1
    for judge in [r.judge for r in pair if r.p_a_first is None or r.p_a_second is None]:
        unscored[judge] += 1
    report = BiasReport(
        kind="models",
        settings=settings,
        judges=judges,
        n_records=len(point) + len(pair),
        n_unscored=sum(unscored.values()),
        unscored_by_judge=unscored,
        n_items=len({r.item_id for r in point} | {r.item_id for r in pair}),
        win_rates=win_rates(pair, settings) if pair else None,
        targets=pairwise_targets(pair, settings) if pair else [],
        target_did=pointwise_targets(point, settings) if point else [],
        panels=panel_targets(point, pair, panels, settings) if panels else [],
    )
    return _concluded(report)


def _concluded(report: BiasReport) -> BiasReport:
    """The report with its findings (every test of its analyses, Holm-corrected together) and its summary."""
    found = findings(report)
    if report.kind == "models":
        summary = summarize_models(found, report.settings, report.targets)
    else:
        summary = summarize(
            found,
            report.settings,
            self_preference=report.self_preference or report.pairwise_self_preference,
            perplexity=report.perplexity,
            n_unscored=report.n_unscored,
            n_records=report.n_records,
        )
    return report.model_copy(update={"findings": found, "summary": summary})
