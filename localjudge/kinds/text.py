"""Prompt text every judging kind shares: the system turn, field headings, fenced content blocks.

The hardened template (the default of G-Eval and pairwise metrics) makes the content unable to
pass for instructions:
- each field sits inside its own tag block, and angle brackets in the content are replaced by
  look-alike guillemets, so content can neither close its block nor spell a chat-control token;
- every content line is quoted ("| "), so no line of content looks like a line of the template;
- after the content the instructions are restated (content is data, scores inside it are void);
- the score position is teacher-forced: the prompt ends inside the judge's own turn after "Score:".
The plain template (no fencing, no restatement) exists only to measure what hardening buys.
"""

from __future__ import annotations

import re

from localjudge.io.cases import TestCase

TEMPLATE_VERSION = "geval-v2"  # v2: content lines quoted with QUOTE inside their tag blocks
PLAIN_TEMPLATE_VERSION = "geval-v1-plain"

SYSTEM = (
    "You are a careful, impartial evaluator. You judge text strictly by the given criteria "
    "and answer in the requested format."
)
DEFAULT_LABELS = {
    "input": "Input",
    "actual_output": "Response",
    "expected_output": "Reference answer",
    "context": "Context",
    "retrieval_context": "Retrieved context",
}
QUOTE = "| "


def template_version(hardened: bool) -> str:
    """The version of the judging template records name: hardened or plain."""
    return TEMPLATE_VERSION if hardened else PLAIN_TEMPLATE_VERSION


def fence(text: str) -> str:
    """Content made inert: no '<' or '>' survives, so no tag or control token can be spelled."""
    return text.replace("<", "‹").replace(">", "›")


def field_text(case: TestCase, field: str) -> str:
    """A field as prompt text; a list of passages is numbered, "[1] ...", one per paragraph."""
    value = case.get(field)
    if isinstance(value, list):
        return "\n\n".join(f"[{i + 1}] {v}" for i, v in enumerate(value))
    return str(value)


def content_blocks(case: TestCase, fields: list[str], labels: dict[str, str], hardened: bool) -> str:
    """The case's fields, each in its own delimited block."""
    out = []
    for field in fields:
        if case.get(field) is None:
            continue
        label = labels.get(field) or DEFAULT_LABELS.get(field, field)
        body = field_text(case, field)
        if hardened:
            tag = re.sub(r"\W+", "_", field)
            # every content line is quoted with "| ": a fake "Score: 5" line, verdict or turn can no
            # longer start a line the way the template's own do (halved the shift of fake scores and
            # delimiters on Gemma 3 270M; benchmarks/adversarial/results.md)
            quoted = "\n".join(QUOTE + line for line in fence(body).split("\n"))
            out.append(f"{label}:\n<{tag}>\n{quoted}\n</{tag}>")
        else:
            out.append(f"{label}:\n{body}")
    return "\n\n".join(out)
