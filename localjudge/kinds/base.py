"""What every metric kind implements, and what a run fixes for one metric.

A *kind* (G-Eval, pairwise, likelihood, ...) is one module of `localjudge.kinds` that defines a
metric spec (a frozen pydantic model whose `kind` field names it) and one `MetricKind` object
that says everything the kinds do differently:

- `needs`: the fields a case must have, the fields its cases are sorted by (neighbours sharing
  them share a prompt prefix), and the definitions of other metrics it combines;
- `prepare`: what is fixed for every case of the metric in a run (template version, the spec
  recorded, G-Eval's evaluation steps);
- `measure`: what a case takes of the judge's context, and which fields `--truncate` may cut
  (`kinds.context_length` applies the one policy to every kind);
- `score`: prompts and judge calls to one record per case;
- `detail` and `summary_detail`: the models of what its records and its summary carry besides
  the fields every kind shares (`kinds.records`, `runs.summary`);
- `summarise` and `notes`: the kind's own summary detail, and what its scores cannot tell;
- `describe` and `explain`: how `localjudge metrics` lists it and how a record reads in words;
- `label_kind`, `label_scale`, `check_trainable`, `outcomes`, `training_examples` and
  `example_readings`: what learning from human labels needs (`kinds.training`): the labels its
  metrics take, and how a judge's reading of them is trained and read back.

Records are built by `MetricContext.record` (scored or unscored, the pass/fail rule applied
once). The registry (`kinds.registry`) maps each kind's `name` to its object; everything else
asks the kind of a metric or record (`kind_of`) instead of testing its type.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, NamedTuple, Protocol, TypeVar

import numpy as np
from pydantic import BaseModel

from localjudge.errors import ConfigError, clip
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds.options import ScoringOptions
from localjudge.kinds.records import ResultRecord
from localjudge.kinds.training import LabelKind, Outcomes, TrainingExample
from localjudge.version import __version__


class MetricSpec(Protocol):
    """A metric definition of any kind: a frozen pydantic model with at least these fields."""

    @property
    def kind(self) -> str:
        """The kind's name in the registry."""

    @property
    def name(self) -> str:
        """The metric's name, used in results."""

    @property
    def threshold(self) -> float | None:
        """Pass mark on the 0-1 score; None: the kind's scores have none."""

    def model_dump(self, *, mode: str = "python", exclude_none: bool = False) -> dict[str, Any]:
        """The definition as a dict (pydantic's)."""


S = TypeVar("S", bound=MetricSpec)


class Needs(NamedTuple):
    """What a metric needs from a case and from other metrics."""

    required: list[str]
    """Fields a case must have to be scored; a case without one is unscored, naming them."""
    sort_by: list[str]
    """Fields the run sorts its cases by: neighbours that share them share a prompt prefix."""
    components: tuple[dict[str, Any], ...] = ()
    """Definitions of the metrics it combines (hybrids, verdicts): judged first, in the same run."""


class Prepared(NamedTuple):
    """What a kind fixes for every case of one metric in a run."""

    template_version: str
    """Version of its prompt template (or measure), recorded with every record."""
    spec: dict[str, Any]
    """The definition recorded as `metric_spec` (G-Eval: with the steps it ran with)."""
    steps: tuple[str, ...] = ()
    """G-Eval's evaluation steps, pinned or generated once."""
    steps_source: str | None = None
    """Where the steps came from: pinned, cache or generated."""


@dataclass(frozen=True)
class MetricContext(Generic[S]):
    """What is fixed for all cases of one metric in one run.

    Attributes:
        metric: the metric.
        kind: its kind.
        prepared: what the kind fixed (template version, spec recorded, steps).
        scoring: the run's scoring settings, as the caller gave them.
    """

    metric: S
    kind: MetricKind[S]
    prepared: Prepared
    scoring: ScoringOptions

    @property
    def hardened(self) -> bool:
        """Whether the hardened prompt template is used (content fenced, instructions restated)."""
        return self.scoring.hardened

    @property
    def truncate(self) -> bool:
        """Whether over-long content is cut to the judge's context length instead of failing."""
        return self.scoring.truncate

    @property
    def min_valid_mass(self) -> float:
        """Below this probability on valid scores (labels) a case is unscored."""
        return self.scoring.min_valid_mass

    @property
    def recorded_min_valid_mass(self) -> float | None:
        """The valid-mass threshold records carry: None for kinds that read no distribution."""
        return self.min_valid_mass if self.kind.reads_distribution else None

    def record(
        self,
        judge: Judge,
        case: TestCase,
        score: float | None,
        *,
        raw_score: float | None = None,
        unscored_reason: str | None = None,
        detail: BaseModel | None = None,
        distribution: dict[str, float] | None = None,
        valid_mass: float | None = None,
        mode: str | None = None,
        std: float | None = None,
        reasoning: str | None = None,
        prompt_tokens: int | None = None,
        truncated: str | None = None,
    ) -> ResultRecord:
        """The record of one case, with its ids, metric spec and provenance.

        Scored when `unscored_reason` is None: `passed` is `score >= threshold` (null without a
        threshold). Unscored otherwise: no score, raw score or pass/fail (never 0, never a guess),
        every diagnostic that was computed kept (valid mass, distribution, detail, prompt size).
        """
        threshold = self.metric.threshold
        if unscored_reason is not None:
            score = raw_score = None
        assert unscored_reason is not None or score is not None, "a scored record has a score"
        return ResultRecord(
            case_id=case.id,
            metric=self.metric.name,
            kind=self.metric.kind,
            score=score,
            raw_score=raw_score,
            passed=None if score is None or threshold is None else score >= threshold,
            threshold=threshold,
            distribution=distribution,
            valid_mass=valid_mass,
            min_valid_mass=self.recorded_min_valid_mass,
            mode=mode,
            std=std,
            unscored_reason=unscored_reason,
            reasoning=reasoning,
            detail=detail,
            prompt_tokens=prompt_tokens,
            truncated=truncated,
            extra=case.extra,
            judge=judge.info.model_dump(),
            metric_spec=dict(self.prepared.spec),
            steps_source=self.prepared.steps_source,
            template_version=self.prepared.template_version,
            localjudge_version=__version__,
        )

    def unscored(self, judge: Judge, case: TestCase, reason: str, **diagnostics: Any) -> ResultRecord:
        """A record with no score and the reason why; `diagnostics` as `record` takes them."""
        return self.record(judge, case, None, unscored_reason=reason, **diagnostics)


class Measure(NamedTuple):
    """What one case takes of the judge's context, as a kind measures it."""

    tokens: int
    """Tokens the case needs in the judge's context."""
    what: str
    """What was counted, for the message when it is over the context length: "the correctness prompt has"."""
    cuttable: Sequence[str]
    """Fields `--truncate` may cut, the longest first (by characters); empty: none."""
    payload: Any = None
    """What the kind reuses when scoring (the rendered prompt, token counts...)."""


class ReadyCase(NamedTuple):
    """One case ready to score: as `--truncate` left it, with what its kind measured."""

    case: TestCase
    payload: Any
    """The `Measure.payload` of the case as it is (None for kinds that read no context)."""
    cut: str | None
    """What `--truncate` cut, or None."""


@dataclass(frozen=True)
class CaseBatch(Generic[S]):
    """One scoring call of a kind: the judge, the metric's context, the cases ready, the run's records so far."""

    judge: Judge
    ctx: MetricContext[S]
    items: Sequence[ReadyCase]
    """The cases, as `--truncate` left them, with what the kind measured."""
    judged: Mapping[tuple[str, str], ResultRecord]
    """The run's records so far, by (case id, metric): what a hybrid or verdict combines."""


class Listing(NamedTuple):
    """How `localjudge metrics` lists a metric."""

    scale: str
    fields: str


class Explanation(NamedTuple):
    """A scored record in words, for other frameworks (`integrations.readout`)."""

    how: str
    """What the score is made of, in one line ("" when unscored)."""
    expected: float | None = None
    """G-Eval: the expected score on the metric's scale."""
    scale: tuple[int, int] | None = None
    """G-Eval: the metric's scale."""


class KindSummary(NamedTuple):
    """What a kind adds to one metric's summary (`MetricSummary`)."""

    detail: BaseModel | None = None
    """The kind's summary detail (an instance of its `summary_detail`), or None."""
    notes: tuple[str, ...] = ()
    """Notes after the ones `MetricKind.notes` gives."""


_KIND_CLASSES: dict[str, type[MetricKind[Any]]] = {}
"""Each kind class by its name, as defined (the registry holds their objects; this module cannot import it)."""


class MetricKind(ABC, Generic[S]):
    """What one kind of metric does differently from the others (see the module docstring)."""

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.name:
            _KIND_CLASSES[cls.name] = cls

    name: ClassVar[str] = ""
    """The kind's name: its specs' `kind` field, its records' `kind`, its registry key."""
    spec: type[S]
    """The pydantic model of the kind's definitions."""
    version: str = ""
    """Its template version, when it does not depend on the run (see `prepare`)."""
    reads_distribution: bool = False
    """Whether its score is read from a score (label) distribution: `min_valid_mass` applies."""
    compares_outputs: bool = False
    """Whether it compares two outputs of a case: summarised by output 1's win rate."""
    reads_both_orders: ClassVar[bool] = False
    """Whether its records read a comparison in both presentation orders (a `PairwiseDetail`)."""
    has_steps: ClassVar[bool] = False
    """Whether its metrics carry evaluation steps a judge can write (`localjudge steps`)."""
    default_pass_mark: float | None = None
    """The pass mark `assert_passes` uses for a metric without a threshold (None: it needs one)."""
    detail: ClassVar[type[BaseModel] | None] = None
    """The model of its records' `detail` (None: its records carry none)."""
    summary_detail: ClassVar[type[BaseModel] | None] = None
    """The model of its summaries' `detail` (None: its summaries carry none)."""

    @property
    def detail_key(self) -> str:
        """The key its records' detail is written under in a results file: by default its name."""
        return self.name

    @abstractmethod
    def needs(self, metric: S) -> Needs:
        """Fields a case must have, fields to sort cases by, and the metrics it combines."""

    def prepare(self, judge: Judge, metric: S, hardened: bool, steps_cache: Path | None) -> Prepared:
        """What is fixed for every case of the metric in a run: by default, `version` and the spec."""
        return Prepared(self.version, metric.model_dump(mode="json"))

    def measure(self, judge: Judge, ctx: MetricContext[S], case: TestCase) -> Measure | None:
        """What the case takes of the judge's context; None: the kind puts nothing there."""
        return None

    @abstractmethod
    def score(self, batch: CaseBatch[S]) -> list[ResultRecord]:
        """One record per item of `batch`, in order."""

    def summarise(self, records: Sequence[ResultRecord]) -> KindSummary:
        """The kind's own summary detail over one metric's records, and notes after `notes`'."""
        return KindSummary()

    def notes(
        self, scores: Sequence[float], mean_valid_mass: float | None, has_threshold: bool, flipped: int
    ) -> list[str]:
        """What a reader must know before taking these scores as pass/fail judgments, in plain words."""
        return []

    @abstractmethod
    def describe(self, metric: S) -> Listing:
        """Scale and fields, as `localjudge metrics` lists them."""

    def explain(self, record: ResultRecord) -> Explanation:
        """A record in words: what its score is made of (empty for an unscored record, which says why)."""
        return Explanation("" if record.score is None else f"score {record.score:.3f}")

    # -- learning from human labels (`kinds.training`) --------------------------------------------

    trainable: ClassVar[bool] = False
    """Whether its reading is a distribution a judge can be trained through (it implements the hooks below)."""

    def outputs_read(self, metric: S) -> list[str]:
        """The case fields holding the output(s) its metrics judge: the output, or the two a comparison compares."""
        return ["actual_output"]

    def label_kind(self, metric: S) -> LabelKind | None:
        """The kind of human label its metrics learn from; None: they do not learn from labels."""
        return None

    def label_scale(self, metric: S) -> tuple[float, float] | None:
        """A rating metric's (low, high), onto which labels on another scale are mapped; None for other labels."""
        return None

    def check_trainable(self, metric: S) -> None:
        """Raises `ConfigError` unless the metric's reading can be trained where it is read."""
        trainable = ", ".join(sorted(n for n, k in _KIND_CLASSES.items() if k.trainable))
        raise ConfigError(
            f"metric {clip(metric.name)} is a {self.name} metric; tuning trains a judge's reading of a score or "
            f"label distribution: use a {trainable} metric"
        )

    def outcomes(self, judge: Judge, metric: S) -> Outcomes:
        """The token tree its reading is a distribution over, and the number each outcome stands for."""
        raise NotImplementedError(f"the {self.name} kind is not trainable")

    def training_examples(self, metric: S, payload: Any, label: float) -> list[TrainingExample]:
        """The prompts of one case (its `Measure.payload`) and what the judge is taught on each, for `label`
        (on the metric's terms: a rating on its scale, 1/0, or 1.0 when output 1 is better)."""
        raise NotImplementedError(f"the {self.name} kind is not trainable")

    def example_readings(self, metric: S, dists: np.ndarray, order: np.ndarray) -> np.ndarray:
        """(E,) each example's reading of its case's score, from (E, V) normalised distributions; `order` (E,)
        is each example's place among its case's (a case's score is its examples' mean reading).

        By default the distribution's mean outcome (the expected score, P(yes)).
        """
        return dists @ self.outcome_values(metric)

    def outcome_values(self, metric: S) -> np.ndarray:
        """(V,) the number each outcome stands for (`Outcomes.values`, known without a judge)."""
        raise NotImplementedError(f"the {self.name} kind is not trainable")


def missing(required: Sequence[str], case: TestCase) -> list[str]:
    """The required fields the case lacks."""
    return [f for f in required if case.get(f) is None]


def narrow_spread(scores: Sequence[float], limit: float) -> list[str]:
    """The note for scores of a bounded metric that span less than `limit` of the 0-1 scale (3 cases or more)."""
    if len(scores) < 3:
        return []
    lo, hi = min(scores), max(scores)
    if hi - lo >= limit:
        return []
    return [
        f"scores span only {lo:.2f}-{hi:.2f} ({hi - lo:.0%} of the 0-1 scale) over {len(scores)} cases: "
        "the judge does not separate these cases, so do not read them as pass/fail judgments; check it on "
        "labelled cases with `localjudge calibrate`"
    ]
