"""A result record as other evaluation frameworks show one: a reason, a score breakdown and a log.

Pure formatting of a `ResultRecord`: no model, no framework import. The reason says in one line
what the score is made of, as the record's kind explains it (`MetricKind.explain`: the expected
score over the judge's distribution, the log-probabilities of a likelihood metric...); the
breakdown carries every number behind it.

Examples:
    >>> from localjudge.kinds.records import ResultRecord
    >>> r = ResultRecord(case_id="c", metric="m", kind="geval", score=0.875, raw_score=4.5, passed=True,
    ...                  threshold=0.5, distribution={"4": 0.5, "5": 0.5}, valid_mass=1.0, mode="4",
    ...                  judge={}, metric_spec={"low": 1, "high": 5}, template_version="t", localjudge_version="v")
    >>> reason(r)
    'expected score 4.50 on 1..5, score (4.50 - 1) / 4 = 0.875; most probable: 4 (0.50), 5 (0.50); valid mass 1.00'
    >>> breakdown(r)["distribution"]
    {'4': 0.5, '5': 0.5}
"""

from __future__ import annotations

from typing import Any

from localjudge.kinds import kind_of
from localjudge.kinds.records import ResultRecord


def breakdown(record: ResultRecord) -> dict[str, Any]:
    """The score and everything it was computed from, as JSON values.

    Keys: kind; score (0-1); expected (G-Eval: the probability-weighted score on the metric's
    scale, else None); raw_score (the record's: expected score, mean or summed log-probability,
    PMI, ROUGE-L F1 or predicted human score); scale (G-Eval: [low, high]); distribution (score ->
    probability, normalised over the valid scores); valid_mass (probability on valid scores
    before normalising); mode; std; unscored_reason; reasoning (the judge's own text, reasoning
    modes only); likelihood (token counts and log-probabilities); hybrid (component scores);
    steps and steps_source (the evaluation steps used: pinned, cache or generated).
    """
    spec = record.metric_spec
    said = kind_of(record.kind).explain(record)
    written = record.model_dump()
    return {
        "kind": record.kind,
        "score": record.score,
        "expected": said.expected,
        "raw_score": record.raw_score,
        "scale": list(said.scale) if said.scale is not None else None,
        "distribution": record.distribution,
        "valid_mass": record.valid_mass,
        "mode": record.mode,
        "std": record.std,
        "unscored_reason": record.unscored_reason,
        "reasoning": record.reasoning,
        # as the results file has them (`kinds.records`: null unless the record's kind is theirs)
        "likelihood": written["likelihood"],
        "hybrid": written["hybrid"],
        "steps": spec.get("steps"),
        "steps_source": record.steps_source,
    }


def reason(record: ResultRecord) -> str:
    """One line: what the score is made of (as its kind explains it), or why there is none."""
    if record.score is None:
        return f"unscored: {record.unscored_reason}"
    text = kind_of(record.kind).explain(record).how
    if record.reasoning:
        text += f"; the judge's reasoning: {record.reasoning.strip()}"
    return text


def log(record: ResultRecord) -> str:
    """Several lines for a verbose report: judge, steps, the whole distribution, the reason."""
    judge = record.judge
    lines = [f"Judge: {judge.get('name')} ({judge.get('provenance')}, {judge.get('dtype')}, {judge.get('device')})"]
    steps = record.metric_spec.get("steps")
    if steps:
        lines.append(f"Evaluation steps ({record.steps_source}):")
        lines += [f"  {i + 1}. {s}" for i, s in enumerate(steps)]
    if record.distribution:
        lines.append("Distribution: " + ", ".join(f"{s}: {p:.4f}" for s, p in record.distribution.items()))
    lines.append(f"Score: {record.score}")
    lines.append(f"Reason: {reason(record)}")
    return "\n".join(lines)
