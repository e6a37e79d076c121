"""Built-in metrics, defined in YAML files beside this module, and name/file resolution."""

from __future__ import annotations

from pathlib import Path

import yaml

from localjudge.errors import ConfigError, unknown_name
from localjudge.metrics.spec import GEvalMetric, Metric, load_metric_file, metric_from_dict

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"
SUMMEVAL = ("coherence", "consistency", "fluency", "relevance")
RAG_TRIAD = ("faithfulness", "context_relevance", "answer_relevance")


def builtin_names() -> list[str]:
    """Names of the built-in metrics."""
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.yaml"))


def builtin_metric(name: str, /, *, style_guide: str | None = None, **overrides) -> Metric:
    """A built-in metric by name, with optional field overrides (e.g. reasoning="before").

    Examples:
        >>> builtin_metric("fluency").high
        3
    """
    if name not in builtin_names():  # not path.is_file(): a name too long for a file raises OSError
        raise unknown_name(
            "metric", name, builtin_names(), "see `localjudge metrics`, or pass a metric .yaml/.json file"
        )
    data = yaml.safe_load((BUILTIN_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
    if name == "style":
        if not style_guide:
            raise ConfigError("the style metric needs a style guide: pass --style-guide FILE (or style_guide=...)")
        data["criteria"] = data["criteria"].replace("{style_guide}", style_guide.strip())
    data.update(overrides)
    return metric_from_dict(data, f"built-in metric {name!r}")


def resolve_metric(name_or_path: str, *, style_guide: str | None = None, **overrides) -> Metric:
    """A built-in metric name, or the path of a .yaml/.yml/.json metric file."""
    if name_or_path.endswith((".yaml", ".yml", ".json")) or "/" in name_or_path:
        metric = load_metric_file(name_or_path)
        if overrides:
            metric = metric_from_dict({**metric.model_dump(), **overrides}, name_or_path)
        return metric
    return builtin_metric(name_or_path, style_guide=style_guide, **overrides)


def with_reasoning(metric: Metric, reasoning: str | None) -> Metric:
    """The metric with another reasoning mode (G-Eval metrics only)."""
    if reasoning is None or not isinstance(metric, GEvalMetric):
        return metric
    return metric_from_dict({**metric.model_dump(), "reasoning": reasoning})
