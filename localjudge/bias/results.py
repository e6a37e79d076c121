"""Result models of the bias lab: per-judge effects and the report, made of `stats.Estimate`s.

Every model is frozen, forbids extra fields and never holds NaN: an undefined quantity is None,
so a `BiasReport` always serialises to strict JSON.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from localjudge.bias.options import BiasOptions
from localjudge.stats import Estimate


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class MatrixCell(_Result):
    """Mean score one judge gives one generator."""

    judge: str
    """Judge name."""
    generator: str
    """Generator name."""
    mean: Estimate
    """Mean score over the scored responses; n counts them."""
    n_unscored: int
    """Records of this cell whose score was None (skipped)."""


class ScoreMatrix(_Result):
    """Judge × generator table of mean scores."""

    judges: list[str]
    """Row order."""
    judge_families: list[str]
    """Family of each judge, in row order."""
    generators: list[str]
    """Column order."""
    generator_families: list[str]
    """Family of each generator, in column order."""
    cells: list[MatrixCell]
    """One cell per (judge, generator), row-major."""


class SelfPreference(_Result):
    """Pointwise self-preference of one judge, controlled by the other families' judges."""

    judge: str
    """Judge name."""
    judge_family: str
    """The judge's family; 'own' responses come from generators of this family."""
    did: Estimate
    """Difference in differences, in score points; p from a sign-flip test over items."""
    raw_gap: Estimate
    """Own minus other families' mean score from this judge alone (no quality control)."""
    reference_judges: list[str]
    """Judges of other families used as the control."""
    reference_excludes_own_family: bool
    """True when no control judge was compared on its own family's responses (3+ families)."""


class PairwiseSelfPreference(_Result):
    """How often a judge prefers its own family's answer when exactly one of the pair is own."""

    judge: str
    """Judge name."""
    judge_family: str
    """The judge's family."""
    own_rate: Estimate
    """P(judge prefers the own-family answer), averaged over both orders."""
    reference_rate: Estimate | None
    """The same probability from other-family judges on the same pairs; None for chance (0.5)."""
    difference: Estimate
    """own_rate minus the reference; p from a sign-flip test over items."""
    reference_excludes_own_family: bool
    """True when no reference judge's own family was in the pair it was compared on."""


class EqualOpportunity(_Result):
    """Gap in how often a judge picks human-preferred answers of its own vs other families."""

    judge: str
    """Judge name."""
    judge_family: str
    """The judge's family."""
    own: Estimate
    """P(judge prefers r | human prefers r, r from the judge's family)."""
    other: Estimate
    """P(judge prefers r | human prefers r, r from another family)."""
    gap: Estimate
    """own minus other; p from a permutation of the own/other labels."""


class PositionBias(_Result):
    """Order effects of one pairwise judge."""

    judge: str
    """Judge name."""
    flip_rate: Estimate
    """Share of pairs whose judgment (p > 0.5) changes when the answers swap places."""
    first_position: Estimate
    """Mean probability given to the answer shown first; p tests 0.5 by sign flips over items."""
    accuracy_a_first: Estimate | None
    """Agreement with human_preferred with A shown first; None without labels."""
    accuracy_a_second: Estimate | None
    """Agreement with human_preferred with A shown second."""
    accuracy_combined: Estimate | None
    """Agreement of the judgment from the mean of both orders' probabilities."""


class LengthBias(_Result):
    """Within-item association of a judge's scores with response length."""

    judge: str
    """Judge name."""
    slope: Estimate
    """OLS score points per `length_unit`, item-demeaned; p from within-item permutation."""
    spearman: Estimate
    """Spearman rho of item-demeaned score and length; p from the same permutations."""


class PairwiseLengthBias(_Result):
    """How often a pairwise judge prefers the longer answer (not controlled for quality)."""

    judge: str
    """Judge name."""
    prefers_longer: Estimate
    """P(judge prefers the longer answer), both orders averaged; p tests 0.5 by sign flips."""


class PerplexityAdjusted(_Result):
    """Own-family effect of a judge before and after its perplexity of the text as covariate."""

    judge: str
    """Judge name."""
    outcome: Literal["score_minus_reference", "score"]
    """Regressed quantity: the score minus other-family judges' mean score of the same response,
    or the raw score when there are no such judges."""
    own_without: Estimate
    """Own-family coefficient with item fixed effects only."""
    own_with: Estimate
    """Own-family coefficient with judge_logppl added; p from cluster-robust (item) t-test."""
    logppl: Estimate
    """Coefficient of judge_logppl; p from the same test."""


class TargetPreference(_Result):
    """How often a pairwise judge prefers one generator (itself, or a model of its family) over other families'.

    Over the judge's pairs that hold the target and a generator of another family than the judge's;
    `rate` is self-preference as Panickssery et al. (2024) define it when the target is the judge.
    """

    judge: str
    """Judge name."""
    judge_family: str
    """The judge's family (the target's too)."""
    target: str
    """The generator preferred or not: the judge itself, or another model of its family."""
    relation: Literal["self", "family"]
    """self: the target is the judge; family: another model of the judge's family."""
    shown_first: Estimate
    """P(judge prefers the target | the target shown first)."""
    shown_second: Estimate
    """P(judge prefers the target | the target shown second)."""
    rate: Estimate
    """Half the sum of the two: the target's preference with position averaged out; p tests 0.5."""
    reference_rate: Estimate | None
    """The same preference from judges of neither family in the pair, on the same pairs; None without any."""
    difference: Estimate | None
    """rate minus the reference on the pairs a reference judged; p from sign flips over items."""


class TargetDiD(_Result):
    """Pointwise preference of a judge for one generator, controlled by other families' judges."""

    judge: str
    """Judge name."""
    judge_family: str
    """The judge's family."""
    target: str
    """The judge itself, or another model of its family."""
    relation: Literal["self", "family"]
    """As in `TargetPreference`."""
    raw_gap: Estimate
    """The target's score minus the judge's mean score of other families' responses (no quality control)."""
    did: Estimate
    """That gap minus the same gap from each judge K of another family (responses of K's family left out),
    averaged over K, in score points; p from a sign-flip test over items."""
    reference_judges: list[str]
    """The judges K."""


class WinRateCell(_Result):
    """How often one judge prefers one generator's response in the pairs that hold it."""

    judge: str
    """Judge name."""
    generator: str
    """Generator name."""
    rate: Estimate
    """Mean P(judge prefers the generator), both orders averaged, over its scored pairs."""


class WinRateMatrix(_Result):
    """Judge × generator table of pairwise win rates."""

    judges: list[str]
    """Row order."""
    judge_families: list[str]
    """Family of each judge, in row order."""
    generators: list[str]
    """Column order."""
    generator_families: list[str]
    """Family of each generator, in column order."""
    cells: list[WinRateCell]
    """One cell per (judge, generator), row-major; a generator in none of a judge's pairs has value None."""


TestName = Literal[
    "self_preference",
    "perplexity_adjusted_self_preference",
    "equal_opportunity",
    "length",
    "pairwise_self_preference",
    "position",
    "pairwise_length",
    "target_rate",
    "target_difference",
    "target_did",
]


class Finding(_Result):
    """One test of a report after Holm correction across all tests of that report."""

    test: TestName
    """Which analysis the test belongs to."""
    judge: str
    """Judge tested."""
    estimate: Estimate
    """The tested estimate (its p_value is the uncorrected one)."""
    p_holm: float
    """Holm-adjusted p-value."""
    significant: bool
    """p_holm < alpha."""
    sentence: str
    """Plain-language statement of the effect."""


class PanelTarget(_Result):
    """A panel's preference for one generator of a family, as a judge of that family's would be measured."""

    panel: str
    """The panel's name."""
    members: list[str]
    """Its judges."""
    family: str
    """The family whose generator is the target."""
    includes_family: bool
    """Whether a member of the panel is of that family."""
    target: str
    """The generator."""
    rate: Estimate | None = None
    """½[P(target | shown first) + P(target | shown second)] against other families' responses (pairwise)."""
    reference_rate: Estimate | None = None
    """The same from the judges of neither family in the pair, on the same pairs."""
    difference: Estimate | None = None
    """rate minus the reference: the family's preference as the panel passes it on (pairwise)."""
    did: Estimate | None = None
    """Pointwise difference in differences against the judges of other families, points."""


class BiasReport(_Result):
    """Everything the bias lab found for one set of records: one report type, whatever it analyses.

    `kind` says which analyses fill it: "pointwise" and "pairwise" (`analyze_pointwise`,
    `analyze_pairwise`: the judging protocol's biases), or "models" (`analyze_models`: win rates
    and each judge's preference for itself and its family's models, from either protocol's records,
    and panels of the judges); the fields of other kinds stay empty. Its findings are
    Holm-corrected across its own tests.
    """

    kind: Literal["pointwise", "pairwise", "models"]
    """Which analyses fill the report: a judging protocol's, or the model-level ones."""
    settings: BiasOptions
    """How it was computed."""
    judges: list[str]
    """Judges analysed, sorted."""
    n_records: int
    """Records given (models: of both protocols)."""
    n_unscored: int
    """Records skipped because the judgment was None."""
    unscored_by_judge: dict[str, int]
    """Skipped records per judge."""
    n_items: int
    """Distinct items."""
    matrix: ScoreMatrix | None = None
    """Judge × generator mean scores (pointwise only)."""
    self_preference: list[SelfPreference] = []
    """Pointwise difference-in-differences per judge."""
    perplexity: list[PerplexityAdjusted] = []
    """Own-family effect after the perplexity covariate (when judge_logppl is present)."""
    pairwise_self_preference: list[PairwiseSelfPreference] = []
    """Pairwise own-family preference per judge."""
    equal_opportunity: list[EqualOpportunity] = []
    """Equal-opportunity gaps (when human labels are present)."""
    position: list[PositionBias] = []
    """Position bias per pairwise judge."""
    length: list[LengthBias] = []
    """Pointwise length bias per judge."""
    pairwise_length: list[PairwiseLengthBias] = []
    """Pairwise preference for the longer answer (when lengths are present)."""
    win_rates: WinRateMatrix | None = None
    """Judge × generator pairwise win rates (models, with pairwise records)."""
    targets: list[TargetPreference] = []
    """Pairwise preference for each judge's targets: itself and its family's models (models)."""
    target_did: list[TargetDiD] = []
    """Pointwise difference in differences for each judge's targets (models)."""
    panels: list[PanelTarget] = []
    """Each panel's preference for each judging family's generators (models, with panels; not in `findings`)."""
    findings: list[Finding] = []
    """Every test with its Holm-adjusted p-value."""
    summary: list[str] = []
    """Plain-language sentences on the significant effects (or that there are none)."""
