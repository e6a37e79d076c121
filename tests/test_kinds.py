"""A sixth metric kind is one module plus one registry line: a toy kind, registered for the test only.

`Brevity` below is all a new kind needs: a spec (a frozen pydantic model whose `kind` field names
it) and a `MetricKind` saying what it needs from a case, what it puts in the judge's context,
how it scores and what it adds to the summary. The registry line is `monkeypatch.setitem(KINDS,
...)`, so the package is not edited: definitions of the kind then load from dicts and files,
and `evaluate` (the normal run loop: missing fields, `--truncate`, resume, records, summary)
runs it on the fake judge without a line of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from localjudge.errors import ConfigError, ContextLengthError
from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds import KINDS, kind_of
from localjudge.kinds.base import Fitted, Listing, Measure, MetricContext, MetricKind, Needs
from localjudge.kinds.records import ResultRecord
from localjudge.metrics.spec import load_metric_file, metric_from_dict
from localjudge.runs.evaluate import evaluate
from localjudge.testing import fake_judge

# -- the toy kind: everything it owns ----------------------------------------------------------


class BrevityMetric(BaseModel):
    """Is the answer brief? The judge's probability of "1" after a yes/no question."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["brevity"] = Field(description="Metric kind.")
    name: str = Field(min_length=1, description="Metric name, used in results.")
    threshold: float | None = Field(default=None, ge=0, le=1, description="Pass threshold on the score.")


class BrevityKind(MetricKind[BrevityMetric]):
    spec = BrevityMetric
    version = "brevity-v1"
    reads_distribution = True

    def needs(self, metric: BrevityMetric) -> Needs:
        return Needs(required=["actual_output"], sort_by=["actual_output"])

    def measure(self, judge: Judge, ctx: MetricContext[BrevityMetric], case: TestCase) -> Measure:
        prompt = f"Is this answer brief?\n{case.actual_output}\nAnswer 0 or 1:"
        return Measure(judge.count_tokens(prompt), "the brevity prompt has", ["actual_output"], prompt)

    def score(
        self,
        judge: Judge,
        ctx: MetricContext[BrevityMetric],
        items: Sequence[Fitted],
        judged: Mapping[tuple[str, str], ResultRecord],
    ) -> list[ResultRecord]:
        dists = judge.score_texts([it.payload for it in items], 0, 1, min_valid_mass=ctx.min_valid_mass)
        out = []
        for it, d in zip(items, dists):
            if not d.scored:
                out.append(ctx.unscored(judge, it.case, d.unscored_reason or "unscored", valid_mass=d.valid_mass))
                continue
            m = ctx.metric
            out.append(
                ResultRecord(
                    **ctx.record_base(judge, it.case),
                    score=d.normalized,
                    raw_score=d.expected,
                    passed=None if m.threshold is None else d.normalized >= m.threshold,
                    distribution={str(k): v for k, v in d.probs.items()},
                    valid_mass=d.valid_mass,
                    truncated=it.cut,
                )
            )
        return out

    def summarise(self, records: Sequence[ResultRecord]) -> dict[str, Any]:
        brief = [r for r in records if r.score is not None and r.score >= 0.5]
        return {"notes": [f"{len(brief)} of {len(records)} answers read as brief"]}

    def describe(self, metric: BrevityMetric) -> Listing:
        return Listing("0-1, P(brief)", "actual_output")


BREVITY = BrevityKind()


@pytest.fixture
def registered(monkeypatch):
    """The one registry line, for this test only."""
    monkeypatch.setitem(KINDS, "brevity", BREVITY)


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
