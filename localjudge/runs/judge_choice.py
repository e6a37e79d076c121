"""Which judge a run gets when none is named: the default, unless its metrics need a capable one.

The registry's default judge (SmolLM2-135M) is fast, and its likelihoods rank outputs, but prompted
for a score, a verdict between two outputs or a yes/no it answers at chance. A run of such metrics
with no judge named gets the first installed judge measured above chance on them, says so on one
line, and names it in every record and the summary; with none installed the default runs, and one line
says which judge to install. A judge named on the command line is always the judge used.

Examples:
    >>> choice = choose_judge(["likelihood"], installed=lambda name: False)
    >>> choice.name is None
    True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

PROMPTED_KINDS = {"geval": "G-Eval", "pairwise": "pairwise", "entailment": "entailment"}
"""The kinds that read a prompted answer (a score, a preference, a yes) rather than a likelihood."""

AT_CHANCE = {"smollm2-135m", "gemma3-270m"}
"""Judges measured at chance on every prompted kind (README, Pick a judge): G-Eval ρ −0.009 and −0.072
on SummEval (`benchmarks/quality/summeval/summeval_results.md`), entailment AUC 0.495
(`benchmarks/quality/faithfulness/summedits_results.md`), pairwise by position
(`benchmarks/bias/self_preference/results.md`)."""

CAPABLE = ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b")
"""Judges measured above chance on every prompted kind, best first: G-Eval consistency ρ 0.258 and 0.230
(`benchmarks/quality/summeval/ladder/summeval_results.md`), pairwise 0.700 and 0.622 on LLMBar
(`benchmarks/quality/pairwise/pairwise_likelihood_results.md`), entailment AUC 0.824 and 0.694
(`benchmarks/quality/faithfulness/summedits_results.md`)."""


class JudgeChoice(NamedTuple):
    """The judge a run loads and why."""

    name: str | None
    """A registry name, or None for the registry's default."""
    notice: str | None
    """One line for stderr: which judge was picked and why, or which to install; None: nothing to say."""


def choose_judge(
    kinds: Sequence[str],
    installed: Callable[[str], bool],
    named: str | None = None,
    default: str = "smollm2-135m",
) -> JudgeChoice:
    """The judge for a run of metrics of `kinds`.

    Args:
        kinds: the metrics' kind names (`metric.kind`).
        installed: whether a registry judge can load here without a network.
        named: the judge the user named (`--judge`); it is used as it is.
        default: the registry's default judge.
    """
    prompted = [PROMPTED_KINDS[k] for k in dict.fromkeys(kinds) if k in PROMPTED_KINDS]
    if named is not None or not prompted or default not in AT_CHANCE:
        return JudgeChoice(named, None)
    what = " and ".join(prompted)
    for name in CAPABLE:
        if installed(name):
            notice = (
                f"Judge {name} picked for the {what} metrics: the default {default} answers them at chance "
                "(README, Pick a judge); --judge NAME to choose"
            )
            return JudgeChoice(name, notice)
    notice = (
        f"The default judge {default} answers {what} metrics at chance; for scores that mean something: "
        f"localjudge models --install {CAPABLE[0]} (or {CAPABLE[1]}, smaller)"
    )
    return JudgeChoice(None, notice)
