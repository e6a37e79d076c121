"""A result record as other evaluation frameworks show one: a reason, a score breakdown and a log.

Pure formatting of a `ResultRecord`: no model, no framework import. The reason says in one line
what the score is made of (the expected score over the judge's distribution, or the
log-probabilities of a likelihood metric); the breakdown carries every number behind it.

Examples:
    >>> from localjudge.runs.records import ResultRecord
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

from localjudge.runs.records import ResultRecord

TOP = 3
"""Most probable scores a reason names; the breakdown has them all."""


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
    geval = record.kind == "geval"
    return {
        "kind": record.kind,
        "score": record.score,
        "expected": record.raw_score if geval else None,
        "raw_score": record.raw_score,
        "scale": [spec["low"], spec["high"]] if geval else None,
        "distribution": record.distribution,
        "valid_mass": record.valid_mass,
        "mode": record.mode,
        "std": record.std,
        "unscored_reason": record.unscored_reason,
        "reasoning": record.reasoning,
        "likelihood": record.likelihood.model_dump() if record.likelihood is not None else None,
        "hybrid": record.hybrid,
        "steps": spec.get("steps"),
        "steps_source": record.steps_source,
    }


def reason(record: ResultRecord) -> str:
    """One line: what the score is made of, or why there is none."""
    if record.score is None:
        return f"unscored: {record.unscored_reason}"
    text = _how(record)
    if record.reasoning:
        text += f"; the judge's reasoning: {record.reasoning.strip()}"
    return text


def _how(record: ResultRecord) -> str:
    score, raw, spec = record.score, record.raw_score, record.metric_spec
    assert score is not None  # reason() handles unscored records
    if record.kind == "geval" and raw is not None:
        low, high = spec["low"], spec["high"]
        ranked = sorted((record.distribution or {}).items(), key=lambda kv: -kv[1])
        top = [kv for kv in ranked[:TOP] if kv[1] >= 0.005] or ranked[:1]  # not a list of zeros
        probable = ", ".join(f"{s} ({p:.2f})" for s, p in top)
        mass = f"; valid mass {record.valid_mass:.2f}" if record.valid_mass is not None else ""
        return (
            f"expected score {raw:.2f} on {low}..{high}, score ({raw:.2f} - {low}) / {high - low} = {score:.3f}; "
            f"most probable: {probable}{mass}"
        )
    if record.kind == "likelihood" and record.likelihood is not None and raw is not None:
        d = record.likelihood
        if d.tokens is not None:
            return _tokens(record, raw, score)
        what = "mean log-probability per token" if d.aggregation == "mean" else "log-probability"
        target = spec.get("target", "actual_output")
        if d.without_source is not None:
            given, without = getattr(d.given_source, d.aggregation), getattr(d.without_source, d.aggregation)
            return (
                f"PMI {raw:.3f}: {what} of the {target} ({d.n_tokens} tokens) {given:.3f} given the source, "
                f"{without:.3f} without it; score sigmoid(PMI) = {score:.3f}"
            )
        return f"{what} of the {target} ({d.n_tokens} tokens) {raw:.3f}; score exp({raw:.3f}) = {score:.3f}"
    if record.kind == "reference":
        return f"ROUGE-L F1 of the {spec.get('target')} against the {spec.get('reference')}: {score:.3f}"
    if record.kind == "hybrid" and raw is not None:
        parts = ", ".join(f"{k} {v:.3f}" for k, v in (record.hybrid or {}).items())
        return f"predicted {spec.get('human_field')} {raw:.2f} from {parts}; score {score:.3f}"
    if record.kind == "verdict" and raw is not None:
        parts = ", ".join(f"{k} {v:.3f}" for k, v in (record.verdict or {}).items())
        return (
            f"P(acceptable) {score:.3f} from {parts}; {'passes' if record.passed else 'fails'} at "
            f"{spec.get('threshold', 0):.3f} (held-back accuracy {spec.get('expected_accuracy', 0):.2f})"
        )
    if record.kind == "entailment" and record.entailment is not None:
        asked = record.entailment.sentences
        worst = min((s for s in asked if s.p_yes is not None), key=lambda s: s.p_yes or 0.0, default=None)
        where = "" if len(asked) == 1 or worst is None else f", least supported sentence: {worst.text[:80]!r}"
        return f"P({spec.get('labels', ['Yes'])[0]}) {score:.3f} over {len(asked)} question(s){where}"
    if record.kind == "pairwise_likelihood" and raw is not None:
        parts = ", ".join(f"{k} {v:.3f}" for k, v in (record.pair or {}).items())
        return f"readings {parts}; difference {raw:.3f}, score sigmoid({raw:.3f}) = {score:.3f}"
    return f"score {score:.3f}"


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


def _tokens(record: ResultRecord, raw: float, score: float) -> str:
    """A token-level likelihood reading: the aggregate and the units that drove it down."""
    d = record.likelihood
    assert d is not None and d.tokens is not None  # _how checked
    t = d.tokens
    what = "PMI" if t.values == "pmi" else "log-probability"
    worst = "; ".join(f"{u.text.strip()!r} {u.value:.2f}" for u in t.worst)
    sentence = f"; worst sentence {t.worst_sentence.text.strip()[:80]!r}" if t.worst_sentence is not None else ""
    return (
        f"{t.aggregation} of the {t.units} {t.unit}s' {what} ({t.focus}): {raw:.3f}, score {score:.3f}; "
        f"lowest: {worst}{sentence}"
    )
