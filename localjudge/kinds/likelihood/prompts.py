"""Prompts of likelihood metrics: the condition, its PMI contrast, and the continuation scored.

Plain layout (the default), for a metric with fields [input], labels {input: "Article"},
instruction "Write a faithful summary of the article." and target label "Summary":

    Article:
    <the article>

    Write a faithful summary of the article.
    Summary: <the summary, scored token by token>

The contrast of a PMI metric is the same prompt without the `pmi.without` fields. The chat format
puts the condition and the instruction in the user turn of the judge's chat template and the
target in its reply (judges without a chat template get the plain text with the same parts).
Content is not fenced as in G-Eval prompts: no score is read from the judge's instructions
following, so text inside a field can change the probabilities of the target, not the position
a score is read at.
"""

from __future__ import annotations

from collections.abc import Collection

from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds.likelihood.spec import LikelihoodMetric
from localjudge.kinds.text import DEFAULT_LABELS, field_text

LIKELIHOOD_TEMPLATE_VERSION = "likelihood-v1"


def condition_prompt(judge: Judge, metric: LikelihoodMetric, case: TestCase, without: Collection[str] = ()) -> str:
    """The text the target follows: condition fields (minus `without`), instruction, target heading."""
    parts = []
    for field in metric.fields:
        if field in without or case.get(field) is None:
            continue
        label = metric.field_labels.get(field, DEFAULT_LABELS.get(field, field))
        text = field_text(case, field)
        parts.append(f"{label}:\n{text}" if label else text)
    instruction = metric.instruction
    if without and metric.pmi is not None and metric.pmi.instruction:
        instruction = metric.pmi.instruction
    heading = f"{metric.target_label}:" if metric.target_label else ""
    if metric.format == "chat":
        return judge.render("", "\n\n".join([*parts, instruction]), heading)
    return "\n\n".join([*parts, instruction + (f"\n{heading}" if heading else "")])


def contrast_prompt(judge: Judge, metric: LikelihoodMetric, case: TestCase) -> str | None:
    """The PMI contrast: the same prompt without the source fields; None without PMI."""
    if metric.pmi is None:
        return None
    return condition_prompt(judge, metric, case, without=set(metric.pmi.without))


def continuation(prompt: str, text: str) -> str:
    """The target as it follows the prompt: stripped, after one space unless a new line begins."""
    text = text.strip()
    return text if not prompt or prompt.endswith("\n") else " " + text
