"""Built-in metrics, defined in YAML files beside this module, and name/file resolution."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml

from localjudge.errors import ConfigError, unknown_name
from localjudge.metrics.labels import apply_names, check_labels, relabel
from localjudge.metrics.spec import Metric, load_metric_file, metric_from_dict

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"
SUMMEVAL = ("coherence", "consistency", "fluency", "relevance")
RAG_TRIAD = ("faithfulness", "context_relevance", "answer_relevance")


def builtin_names() -> list[str]:
    """Names of the built-in metrics."""
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.yaml"))


def builtin_metric(
    name: str, /, *, style_guide: str | None = None, field_labels: Mapping[str, str] | None = None, **overrides
) -> Metric:
    """A built-in metric by name, with optional field labels and field overrides (e.g. reasoning="before").

    `field_labels` ({field: label}) names fields as what they are: the label is the field's
    heading, and a G-Eval metric's task, criteria, steps and rubric speak of the field by it
    (`localjudge.metrics.labels`). Without labels the metric is exactly as its file defines it.

    Examples:
        >>> builtin_metric("fluency").high
        3
        >>> builtin_metric("coherence", field_labels={"input": "Dialogue", "actual_output": "Reply"}).task
        'You will be given a dialogue and a reply written for it. Rate the reply on one quality.'
    """
    if name not in builtin_names():  # not path.is_file(): a name too long for a file raises OSError
        raise unknown_name(
            "metric", name, builtin_names(), "see `localjudge metrics`, or pass a metric .yaml/.json file"
        )
    data = yaml.safe_load((BUILTIN_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
    labels = check_labels(field_labels)
    data = apply_names(data, labels, f"built-in metric {name!r}")
    if name == "style":  # after renaming: the user's style guide is theirs, word for word
        if not style_guide:
            raise ConfigError("the style metric needs a style guide: pass --style-guide FILE (or style_guide=...)")
        data["criteria"] = data["criteria"].replace("{style_guide}", style_guide.strip())
    data.update(overrides)
    return relabel(metric_from_dict(data, f"built-in metric {name!r}"), labels)


def resolve_metric(
    name_or_path: str, *, style_guide: str | None = None, field_labels: Mapping[str, str] | None = None, **overrides
) -> Metric:
    """A built-in metric name, or the path of a .yaml/.yml/.json metric file.

    `field_labels` as for `builtin_metric` (a metric file renames the words it lists under
    `names:`, as the built-ins do; without `names:` only the headings change).
    """
    if name_or_path.endswith((".yaml", ".yml", ".json")) or "/" in name_or_path:
        metric = load_metric_file(name_or_path, field_labels)
        if overrides:
            metric = metric_from_dict({**metric.model_dump(), **overrides}, name_or_path)
        return metric
    return builtin_metric(name_or_path, style_guide=style_guide, field_labels=field_labels, **overrides)


def with_reasoning(metric: Metric, reasoning: str | None) -> Metric:
    """The metric with another reasoning mode (metrics whose spec has one: G-Eval)."""
    data = metric.model_dump()
    if reasoning is None or "reasoning" not in data:
        return metric
    return metric_from_dict({**data, "reasoning": reasoning})
