"""A new metric kind with detail of its own is one module plus one registration: a toy kind, for the test only.

`Brevity` below is all a new kind needs: a spec (a frozen pydantic model whose `kind` field names
it), the models of its records' and its summaries' detail, and a `MetricKind` saying what it
needs from a case, what it puts in the judge's context, how it scores and what it adds to the
summary. The registration is `register_kind(BREVITY)`, what an installed package's entry point
in the group `localjudge.kinds` goes through too, so localjudge is not edited: definitions of the
kind then load from dicts and files, `evaluate` (the normal run loop: missing fields,
`--truncate`, resume, records, summary) runs it on the fake judge, and its records and summaries
write and read back their detail, without a line of their own.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from localjudge.errors import ConfigError, ContextLengthError
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds import KINDS, kind_of, register_kind, unregister_kind
from localjudge.kinds.base import CaseBatch, KindSummary, Listing, Measure, MetricContext, MetricKind, Needs
from localjudge.kinds.records import ResultRecord
from localjudge.metrics.spec import load_metric_file, metric_from_dict
from localjudge.runs.evaluate import evaluate
from localjudge.runs.results_file import read_results
from localjudge.testing import fake_judge

# -- the toy kind: everything it owns ----------------------------------------------------------


class BrevityMetric(BaseModel):
    """Is the answer brief? The judge's probability of "1" after a yes/no question."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["brevity"] = Field(description="Metric kind.")
    name: str = Field(min_length=1, description="Metric name, used in results.")
    threshold: float | None = Field(default=None, ge=0, le=1, description="Pass threshold on the score.")


class BrevityDetail(BaseModel):
    """What a brevity record keeps besides the score: the answer's length the judge was shown."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    words: int = Field(description="Words in the answer.")


class BrevitySummary(BaseModel):
    """What a brevity summary adds: how many answers read as brief."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    brief: int = Field(description="Scored answers with P(brief) >= 0.5.")


class BrevityKind(MetricKind[BrevityMetric]):
    name = "brevity"
    spec = BrevityMetric
    detail = BrevityDetail
    summary_detail = BrevitySummary
    version = "brevity-v1"
    reads_distribution = True

    def needs(self, metric: BrevityMetric) -> Needs:
        return Needs(required=["actual_output"], sort_by=["actual_output"])

    def measure(self, judge: Judge, ctx: MetricContext[BrevityMetric], case: TestCase) -> Measure:
        prompt = f"Is this answer brief?\n{case.actual_output}\nAnswer 0 or 1:"
        return Measure(judge.count_tokens(prompt), "the brevity prompt has", ["actual_output"], prompt)

    def score(self, batch: CaseBatch[BrevityMetric]) -> list[ResultRecord]:
        judge, ctx, items = batch.judge, batch.ctx, batch.items
        dists = judge.score_texts([it.payload for it in items], 0, 1, min_valid_mass=ctx.min_valid_mass)
        return [
            ctx.record(
                judge,
                it.case,
                d.normalized,
                raw_score=d.expected,
                unscored_reason=d.unscored_reason,
                distribution={str(k): v for k, v in d.probs.items()},
                valid_mass=d.valid_mass,
                detail=BrevityDetail(words=len(str(it.case.actual_output).split())),
                truncated=it.cut,
            )
            for it, d in zip(items, dists)
        ]

    def summarise(self, records: Sequence[ResultRecord]) -> KindSummary:
        brief = [r for r in records if r.score is not None and r.score >= 0.5]
        return KindSummary(BrevitySummary(brief=len(brief)), (f"{len(brief)} of {len(records)} answers read as brief",))

    def describe(self, metric: BrevityMetric) -> Listing:
        return Listing("0-1, P(brief)", "actual_output")


BREVITY = BrevityKind()


@pytest.fixture
def registered():
    """The one registration, for this test only."""
    register_kind(BREVITY)
    yield
    unregister_kind("brevity")


def _policy(prompt: str) -> dict[str, float]:
    # the fake judge finds short answers brief
    answer = prompt.split("\n")[1]
    return {"1": 0.9, "0": 0.1} if len(answer) < 20 else {"1": 0.2, "0": 0.8}


CASES = [
    TestCase(id="short", input="q", actual_output="Paris."),
    TestCase(id="long", input="q", actual_output="The capital of France is Paris, on the Seine."),
    TestCase(id="none", input="q"),
]


# -- the tests ---------------------------------------------------------------------------------


def test_an_unregistered_kind_is_refused():
    with pytest.raises(ConfigError, match="kind"):
        metric_from_dict({"kind": "brevity", "name": "brief"})


def test_a_name_or_a_detail_key_is_registered_once(registered):
    class Copy(BrevityKind):
        pass

    with pytest.raises(ConfigError, match="registered twice"):
        register_kind(Copy())

    class Clash(BrevityKind):
        name = "brevity2"

        @property
        def detail_key(self) -> str:
            return "likelihood"

    with pytest.raises(ConfigError, match=r"detail key .likelihood. of kind brevity2"):
        register_kind(Clash())
    assert "brevity2" not in KINDS


def test_the_built_in_kinds_come_from_the_entry_points():
    from importlib.metadata import entry_points, packages_distributions

    ours = set(packages_distributions()["localjudge"])  # the distribution that installs the package
    points = {p.name: p.load() for p in entry_points(group="localjudge.kinds") if p.dist.name in ours}
    assert set(points) >= {"geval", "pairwise", "likelihood", "reference", "hybrid", "entailment", "verdict"}
    assert all(KINDS[name] is kind and kind.name == name for name, kind in points.items())


def test_a_registered_kind_loads_from_a_dict_and_a_file(registered, tmp_path):
    assert isinstance(metric_from_dict({"kind": "brevity", "name": "brief"}), BrevityMetric)
    path = tmp_path / "brief.yaml"
    path.write_text("kind: brevity\nname: brief\nthreshold: 0.5\n")
    metric = load_metric_file(path)
    assert isinstance(metric, BrevityMetric) and metric.threshold == 0.5
    assert kind_of(metric) is BREVITY
    with pytest.raises(ConfigError, match="rubric: Extra inputs"):
        metric_from_dict({"kind": "brevity", "name": "brief", "rubric": "x"})


def test_the_run_loop_scores_records_and_summarises_it(registered, tmp_path):
    metric = metric_from_dict({"kind": "brevity", "name": "brief", "threshold": 0.5})
    out = tmp_path / "run.jsonl"
    result = evaluate(CASES, [metric], fake_judge(_policy), out=out, progress=False)
    short, long, none = (result.get(c.id, "brief") for c in CASES)
    assert (short.kind, short.template_version, short.metric_spec["kind"]) == ("brevity", "brevity-v1", "brevity")
    assert (
        short.score == pytest.approx(0.9)
        and short.passed is True
        and short.distribution == pytest.approx({"0": 0.1, "1": 0.9})
    )
    assert long.score == pytest.approx(0.2) and long.passed is False
    assert none.score is None and "actual_output" in (none.unscored_reason or "")  # the loop checks `needs`
    assert short.min_valid_mass is not None  # reads a distribution: the valid-mass threshold applies
    (summary,) = result.summaries
    assert (summary.kind, summary.n, summary.scored, summary.pass_rate) == ("brevity", 3, 2, 0.5)
    assert "1 of 3 answers read as brief" in summary.notes
    # its own detail, on the record and the summary, typed
    assert short.detail == BrevityDetail(words=1) and long.detail == BrevityDetail(words=9)
    assert summary.detail == BrevitySummary(brief=1)
    # written under the kind's name, after the keys every record carries; read back typed
    line = json.loads(out.read_text().splitlines()[0])
    assert line["brevity"] == {"words": 1} and "detail" not in line
    assert [k for k in line if k in ("pairwise", "likelihood", "hybrid", "brevity")] == [
        "pairwise", "likelihood", "hybrid", "brevity"
    ]  # fmt: skip
    assert read_results(out)[0].detail == BrevityDetail(words=1)
    assert summary.model_dump()["brief"] == 1 and "detail" not in summary.model_dump()
    # the records file resumes like any other kind's
    again = evaluate(CASES, [metric], fake_judge(lambda p: {}), out=out, resume=True, progress=False)
    assert again.get("short", "brief").score == pytest.approx(0.9)


def test_the_one_context_policy_applies_to_it(registered):
    judge = fake_judge(_policy)
    judge.info = judge.info.model_copy(update={"context_length": 60})
    metric = metric_from_dict({"kind": "brevity", "name": "brief"})
    with pytest.raises(ContextLengthError, match="the brevity prompt has"):
        evaluate(CASES[1:2], [metric], judge, progress=False)
    rec = evaluate(CASES[1:2], [metric], judge, truncate=True, progress=False).records[0]
    assert rec.truncated and "actual_output" in rec.truncated and rec.score is not None
