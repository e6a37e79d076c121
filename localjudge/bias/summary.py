"""Holm-corrected findings of a bias report and their plain-language summary."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from localjudge.bias.options import BiasOptions
from localjudge.bias.results import (
    BiasReport,
    EqualOpportunity,
    Finding,
    LengthBias,
    PairwiseLengthBias,
    PairwiseSelfPreference,
    PerplexityAdjusted,
    PositionBias,
    SelfPreference,
    TargetDiD,
    TargetPreference,
    TestName,
)
from localjudge.stats import Estimate, holm


@dataclass(frozen=True)
class _Candidate:
    """A test before correction: what it is and how to say it."""

    test: TestName
    judge: str
    estimate: Estimate
    say: Callable[[str], str]  # interval-and-p text -> sentence


def fmt_p(p: float) -> str:
    """p-value for humans: two significant digits, floored at <0.001."""
    return "p<0.001" if p < 0.001 else f"p={p:.2g}" if p < 0.01 else f"p={p:.2f}"


def _ci(e: Estimate, settings: BiasOptions, digits: int = 2) -> str:
    level = f"{100 * settings.ci_level:g}% CI"
    if e.ci_low is None or e.ci_high is None:
        return f"{level} not available"
    return f"{level} {e.ci_low:.{digits}f}–{e.ci_high:.{digits}f}"


# One sentence per test, from its result and the interval-and-p text `stat` (and the length unit).


def _self_preference(s: SelfPreference, stat: str, unit: int) -> str:
    v = s.did.value or 0.0
    verb, rel = ("favours", "beyond") if v > 0 else ("disfavours", "relative to")
    return (
        f"{s.judge} judge {verb} its own family ({s.judge_family}) by {v:+.2f} points "
        f"({stat}), {rel} what other families' judges give."
    )


def _perplexity(q: PerplexityAdjusted, stat: str, unit: int) -> str:
    return (
        f"{q.judge} judge's own-family effect remains after accounting for its "
        f"perplexity of the text: {q.own_with.value or 0.0:+.2f} points ({stat})."
    )


def _equal_opportunity(e: EqualOpportunity, stat: str, unit: int) -> str:
    v = e.gap.value or 0.0
    return (
        f"Among answers humans preferred, {e.judge} judge picks its own family's "
        f"({e.judge_family}) {'more' if v > 0 else 'less'} often than other families' "
        f"ones: gap {v:+.2f} in probability ({stat})."
    )


def _length(b: LengthBias, stat: str, unit: int) -> str:
    v = b.slope.value or 0.0
    return (
        f"{b.judge} judge {'rewards' if v > 0 else 'penalises'} length: {v:+.2f} points "
        f"per {unit} units of length within an item ({stat})."
    )


def _pairwise_self_preference(d: PairwiseSelfPreference, stat: str, unit: int) -> str:
    v = d.difference.value or 0.0
    ref = "other families' judges on the same pairs" if d.reference_rate is not None else "chance (0.5)"
    return (
        f"{d.judge} judge prefers its own family's ({d.judge_family}) answer "
        f"{'more' if v > 0 else 'less'} often than {ref}: {v:+.2f} in probability "
        f"({stat})."
    )


def _position(pb: PositionBias, stat: str, unit: int) -> str:
    v, flips = pb.first_position.value or 0.5, pb.flip_rate.value
    flipped = (
        f"; its judgment flips in {100 * flips:.0f}% of pairs when the order is swapped." if flips is not None else "."
    )
    return (
        f"{pb.judge} judge favours the {'first' if v > 0.5 else 'second'} position: it gives "
        f"the answer shown first {v:.2f} probability on average ({stat})" + flipped
    )


def _pairwise_length(lb: PairwiseLengthBias, stat: str, unit: int) -> str:
    v = lb.prefers_longer.value or 0.5
    return (
        f"{lb.judge} judge prefers the {'longer' if v > 0.5 else 'shorter'} answer: "
        f"P(longer wins) = {v:.2f} ({stat}); this is not controlled for quality."
    )


def _what(x: TargetPreference | TargetDiD) -> str:
    return "its own responses" if x.relation == "self" else f"{x.target} (its family, {x.judge_family})"


def _target_rate(x: TargetPreference, stat: str, unit: int) -> str:
    first, second = x.shown_first.value, x.shown_second.value
    return (
        f"{x.judge} judge gives {_what(x)} {x.rate.value or 0:.2f} probability against other families' "
        f"responses, position averaged out (P | shown first {first or 0:.2f}, P | shown second "
        f"{second or 0:.2f}) ({stat})."
    )


def _target_difference(x: TargetPreference, stat: str, unit: int) -> str:
    assert x.difference is not None  # tested only where a reference judged the pairs
    v = x.difference.value or 0.0
    return (
        f"{x.judge} judge prefers {_what(x)} {'more' if v > 0 else 'less'} than judges of neither "
        f"family do on the same pairs: {v:+.2f} in probability ({stat})."
    )


def _target_did(d: TargetDiD, stat: str, unit: int) -> str:
    v = d.did.value or 0.0
    return (
        f"{d.judge} judge scores {_what(d)} {v:+.2f} points relative to other families' responses, "
        f"beyond what other families' judges give ({stat})."
    )


_Test = tuple[TestName, Callable[[Any], Estimate | None], Callable[[Any, str, int], str]]

_TESTS: dict[str, tuple[_Test, ...]] = {
    "self_preference": (("self_preference", lambda r: r.did, _self_preference),),
    "perplexity": (("perplexity_adjusted_self_preference", lambda r: r.own_with, _perplexity),),
    "equal_opportunity": (("equal_opportunity", lambda r: r.gap, _equal_opportunity),),
    "length": (("length", lambda r: r.slope, _length),),
    "pairwise_self_preference": (("pairwise_self_preference", lambda r: r.difference, _pairwise_self_preference),),
    "position": (("position", lambda r: r.first_position, _position),),
    "pairwise_length": (("pairwise_length", lambda r: r.prefers_longer, _pairwise_length),),
    "targets": (
        ("target_rate", lambda r: r.rate, _target_rate),
        ("target_difference", lambda r: r.difference, _target_difference),
    ),
    "target_did": (("target_did", lambda r: r.did, _target_did),),
}
"""A report's analysis (its `BiasReport` field) -> its tests: each the estimate tested and its sentence;
in report order, a result's tests one after the other."""


def _candidates(analyses: dict[str, list], unit: int) -> list[_Candidate]:
    """Every test with an estimate and a p-value, in the order of `_TESTS` and of each analysis' judges."""
    out = []
    for name, tests in _TESTS.items():
        for r in analyses.get(name, []):
            for test, estimate, sentence in tests:
                e = estimate(r)
                if e is not None and e.value is not None and e.p_value is not None:
                    out.append(_Candidate(test, r.judge, e, functools.partial(_say, sentence, r, unit)))
    return out


def _say(sentence: Callable[[Any, str, int], str], result: Any, unit: int, stat: str) -> str:
    return sentence(result, stat, unit)


def findings(report: BiasReport) -> list[Finding]:
    """Holm-corrects every test of the report's analyses together and phrases each as a sentence.

    The tests are those `_TESTS` lists for the report's per-judge result lists (self_preference,
    perplexity, equal_opportunity, length, pairwise_self_preference, position, pairwise_length,
    targets, target_did); its settings give the confidence level and alpha.
    """
    settings = report.settings
    cands = _candidates({name: getattr(report, name) for name in _TESTS}, settings.length_unit)
    adjusted = holm([c.estimate.p_value for c in cands])  # type: ignore[misc]
    out = []
    for c, p_holm in zip(cands, adjusted):
        stat = f"{_ci(c.estimate, settings)}, Holm-adjusted {fmt_p(p_holm)}"
        out.append(
            Finding(
                test=c.test,
                judge=c.judge,
                estimate=c.estimate,
                p_holm=p_holm,
                significant=p_holm < settings.alpha,
                sentence=c.say(stat),
            )
        )
    return out


def summarize(
    found: list[Finding],
    settings: BiasOptions,
    *,
    self_preference: Sequence[SelfPreference | PairwiseSelfPreference] = (),
    perplexity: Sequence[PerplexityAdjusted] = (),
    n_unscored: int = 0,
    n_records: int = 0,
) -> list[str]:
    """Plain-language sentences: significant effects, caveats, or that nothing is significant.

    Args:
        found: Findings from `findings`.
        settings: Alpha and confidence level.
        self_preference: Pointwise or pairwise self-preference results, to warn when a
            significant one is only identified relative to the other family's judges.
        perplexity: Perplexity-adjusted results, to say when a significant self-preference
            disappears once the judge's perplexity is accounted for.
        n_unscored: Records skipped as unscored.
        n_records: Records given.
    """
    lines = [f.sentence for f in found if f.significant]
    significant_did = {f.judge for f in found if f.significant and f.test == "self_preference"}
    still = {f.judge for f in found if f.significant and f.test == "perplexity_adjusted_self_preference"}
    for q in perplexity:
        if q.judge in significant_did and q.judge not in still and q.own_with.value is not None:
            p = q.own_with.p_value
            lines.append(
                f"{q.judge} judge's own-family preference is explained by its perplexity of the "
                f"text: with judge_logppl as a covariate the own-family effect is "
                f"{q.own_with.value:+.2f} points ({_ci(q.own_with, settings)}"
                + (f", unadjusted {fmt_p(p)}" if p is not None else "")
                + "), not significant."
            )
    relative = {x.judge for x in self_preference if not x.reference_excludes_own_family}
    flagged = sorted(
        {
            f.judge
            for f in found
            if f.significant
            and f.judge in relative
            and f.test.endswith("self_preference")
            and f.test != "perplexity_adjusted_self_preference"
        }
    )
    if flagged and len({x.judge_family for x in self_preference}) <= 2:
        lines.append(
            "With only two model families, self-preference is identified only relative to the "
            "other family's judges: one judge's bias also shows up, mirrored, in the estimates "
            "of the other family's judges; add judges or generators of a third family to tell "
            "them apart."
        )
    elif flagged:
        lines.append(
            f"For {', '.join(flagged)}: on some pairs no judge of a third family gave a judgment (its "
            "records there were unscored), so on those pairs self-preference is measured against the "
            "other involved family's judges, whose own bias shows up in it, mirrored."
        )
    if not lines:
        lines.append(
            f"No effect is significant at α={settings.alpha:g} after Holm correction across {len(found)} tests."
            if found
            else "No effect could be tested: too few items, judges or families in the records."
        )
    if n_unscored:
        lines.append(f"{n_unscored} of {n_records} records were unscored and skipped.")
    return lines


ORDER_SET = 0.5
"""A target's P(preferred | shown first) minus P(preferred | shown second) from which its judgments
are said to follow the order rather than the content."""


def summarize_models(found: list[Finding], settings: BiasOptions, targets: Sequence[TargetPreference]) -> list[str]:
    """The model-level report's sentences: significant effects (or that none is), then each target
    whose judgments follow the order rather than the content."""
    lines = [f.sentence for f in found if f.significant]
    if not lines:
        lines.append(
            f"No model-level effect is significant at α={settings.alpha:g} after Holm correction across "
            f"{len(found)} tests."
            if found
            else "No model-level effect could be tested: no judge is also a generator, or too few items."
        )
    for x in targets:
        first, second = x.shown_first.value, x.shown_second.value
        if first is not None and second is not None and abs(first - second) >= ORDER_SET:
            lines.append(
                f"{x.judge} judge's judgments on {_what(x)} follow the order, not the content: it prefers them "
                f"with probability {first:.2f} shown first and {second:.2f} shown second."
            )
    return lines
