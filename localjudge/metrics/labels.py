"""Field labels: a case's fields named in the prompts as what they are (a dialogue, a reply, a RAG answer).

A label is the heading a field is shown under ("Reply:" instead of "Summary:"), in G-Eval and
likelihood metrics alike (`relabel`). Built-in G-Eval metrics also speak of their fields in the
words of their task, criteria, steps and rubric ("You will be given a news article and a summary
written for it"); each built-in file lists those words under `names:`, and `rename` puts the label
there too, in lower case, with "a"/"an" and plurals to match: "You will be given a dialogue and a
reply written for it". List fields (context, retrieval_context) are relabelled in their headings
only: "passages" fits documents, chunks and snippets alike. With no labels nothing changes: every
prompt is byte for byte the one the benchmarks were measured with.

Examples:
    >>> parse_field_labels(["actual_output=Reply", "input = Dialogue"])
    {'actual_output': 'Reply', 'input': 'Dialogue'}
    >>> rename("Rate the summary of a news article.", {"actual_output": ["summary"], "input": ["news article"]},
    ...        {"actual_output": "Reply", "input": "Email thread"})
    'Rate the reply of an email thread.'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, get_args

from localjudge.errors import ConfigError, clip
from localjudge.metrics.spec import (
    EntailmentMetric,
    FieldName,
    GEvalMetric,
    LikelihoodMetric,
    Metric,
    PairwiseLikelihoodMetric,
    metric_from_dict,
)

FIELDS: tuple[str, ...] = get_args(FieldName)
LIST_FIELDS = ("context", "retrieval_context")  # named in headings only
MAX_LABEL = 40


def check_label(field: str, label: str) -> str:
    """The label, stripped, or a ConfigError saying what is wrong with it."""
    if field not in FIELDS:
        raise ConfigError(f"field label for {clip(field)}: not a field; label one of {', '.join(FIELDS)}")
    label = label.strip()
    if not label or len(label) > MAX_LABEL:
        raise ConfigError(f"field label for {field}: give 1 to {MAX_LABEL} characters, not {len(label)}")
    # a label goes into the prompt unfenced: it must not break a heading line or spell a tag
    if any(not c.isprintable() for c in label) or set(label) & set("<>:"):
        raise ConfigError(f"field label for {field} {clip(label)}: use plain words, without <, >, : or line breaks")
    return label


def check_labels(labels: Mapping[str, str] | None) -> dict[str, str]:
    """{field: label} with every label checked (`check_label`)."""
    return {f: check_label(f, label) for f, label in (labels or {}).items()}


def parse_field_labels(specs: Sequence[str]) -> dict[str, str]:
    """FIELD=LABEL strings (the `--field-label` option) as {field: label}, each checked."""
    out: dict[str, str] = {}
    for spec in specs:
        field, sep, label = spec.partition("=")
        if not sep:
            raise ConfigError(f"--field-label {clip(spec)}: write FIELD=LABEL, e.g. actual_output=Reply")
        field = field.strip()
        label = check_label(field, label)
        if out.get(field, label) != label:
            raise ConfigError(f"--field-label gives {field} two labels ({clip(out[field])}, {clip(label)}); give one")
        out[field] = label
    return out


def relabel(metric: Metric, labels: Mapping[str, str]) -> Metric:
    """The metric with `labels` as the headings of the fields it shows (G-Eval and likelihood metrics).

    A likelihood metric's target takes the label as its heading unless it follows with none.
    Other kinds (pairwise, reference, hybrid) show no labelled fields and come back unchanged.
    """
    if isinstance(metric, GEvalMetric):
        shown = {f: label for f, label in labels.items() if f in metric.fields}
        if not shown:
            return metric
        return metric_from_dict({**metric.model_dump(), "field_labels": {**metric.field_labels, **shown}})
    if isinstance(metric, LikelihoodMetric | EntailmentMetric):
        shown = {f: label for f, label in labels.items() if f in metric.fields}
        target = labels.get(metric.target) if metric.target_label else None
        if not shown and target is None:
            return metric
        data: dict[str, Any] = {**metric.model_dump(), "field_labels": {**metric.field_labels, **shown}}
        if target is not None:
            data["target_label"] = target
        return metric_from_dict(data)
    if isinstance(metric, PairwiseLikelihoodMetric):
        shown = {f: label for f, label in labels.items() if f in metric.fields}
        return (
            metric_from_dict({**metric.model_dump(), "field_labels": {**metric.field_labels, **shown}})
            if shown
            else metric
        )
    return metric


def shows(metric: Metric, field: str) -> bool:
    """Whether `relabel` gives the field a heading in this metric."""
    if isinstance(metric, GEvalMetric):
        return field in metric.fields
    if isinstance(metric, LikelihoodMetric | EntailmentMetric):
        return field in metric.fields or (field == metric.target and bool(metric.target_label))
    if isinstance(metric, PairwiseLikelihoodMetric):
        return field in metric.fields
    return False


def apply_names(data: Any, labels: Mapping[str, str], source: str) -> Any:
    """A metric definition (as read from YAML) without its `names`, its text renamed by `labels`.

    `names: {field: [words]}` lists the words of the task, criteria, steps and rubric that name
    each field; they take the field's label (see `rename`). It is not part of the metric itself.
    """
    if not isinstance(data, dict) or "names" not in data:
        return data  # metric_from_dict says what is wrong with a definition that is no mapping
    out = dict(data)
    names = out.pop("names")
    if not isinstance(names, dict) or not all(
        f in FIELDS and isinstance(w, list) and all(isinstance(x, str) and x.strip() for x in w)
        for f, w in names.items()
    ):
        raise ConfigError(
            f"{source}: names: map fields to lists of the words that name them, e.g. {{input: [article]}}"
        )
    if not labels:
        return out
    for key in ("task", "criteria"):
        if isinstance(out.get(key), str):
            out[key] = rename(out[key], names, labels)
    if isinstance(out.get("steps"), list):
        out["steps"] = [rename(s, names, labels) if isinstance(s, str) else s for s in out["steps"]]
    if isinstance(out.get("rubric"), list):
        out["rubric"] = [
            {**r, "description": rename(r["description"], names, labels)}
            if isinstance(r, dict) and isinstance(r.get("description"), str)
            else r
            for r in out["rubric"]
        ]
    return out


def rename(text: str, names: Mapping[str, Sequence[str]], labels: Mapping[str, str]) -> str:
    """`text` with the words naming each labelled text field (`names`) replaced by its label.

    One pass over all fields, so a label is never renamed again; a capital, a plural and the
    "a"/"an" in front of the word follow the new name.
    """
    forms: dict[str, tuple[str, bool]] = {}  # lower-case word as written -> (field, plural)
    for field, words in names.items():
        if field in labels and field not in LIST_FIELDS:
            for word in words:
                forms[word.lower()] = (field, False)
                forms[plural(word).lower()] = (field, True)
    if not forms:
        return text
    alternatives = "|".join(re.escape(w) for w in sorted(forms, key=len, reverse=True))
    pattern = re.compile(rf"\b(?:(?P<art>[Aa]n?) )?(?P<word>{alternatives})\b", re.IGNORECASE)

    def replace(m: re.Match) -> str:
        field, many = forms[m["word"].lower()]
        new = noun(labels[field])
        new = plural(new) if many else new
        if m["word"][0].isupper():
            new = new[0].upper() + new[1:]
        if not m["art"]:
            return new
        art = "an" if starts_with_vowel_sound(new) else "a"
        return f"{art.capitalize() if m['art'][0].isupper() else art} {new}"

    return pattern.sub(replace, text)


def noun(label: str) -> str:
    """The label as a noun inside a sentence: lower case, unless its first word is an acronym ("RAG answer")."""
    first = label.split()[0]
    return label if any(c.isupper() for c in first[1:]) else label[0].lower() + label[1:]


def plural(phrase: str) -> str:
    """The regular English plural of a noun phrase's last word (reply -> replies, speech -> speeches)."""
    if re.search(r"[^aeiou]y$", phrase):
        return phrase[:-1] + "ies"
    if re.search(r"(s|x|z|ch|sh)$", phrase):
        return phrase + "es"
    return phrase + "s"


def starts_with_vowel_sound(word: str) -> bool:
    """A guess from the spelling: a, e, i, o; u unless it sounds "you" (user, unit, usual: u + consonant + vowel)."""
    w = word.lower()
    if w[:1] in ("a", "e", "i", "o"):
        return True
    return w[:1] == "u" and not re.match(r"u[^aeiou][aeiou]", w)
