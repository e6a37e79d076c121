"""G-Eval's evaluation steps, generated once per (judge, metric definition, template) and cached on disk.

Every case of every run is then judged against the same steps: no moving yardstick. The cache
key covers everything that shapes the steps (judge weights, task, criteria, rubric, fields,
scale, template version); entries are written atomically and carry a checksum, so a torn or
corrupt file is detected and rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from localjudge.errors import LocalJudgeError, clip
from localjudge.io.files import write_atomically
from localjudge.judges.judge import Judge
from localjudge.kinds.geval.prompts import TEMPLATE_VERSION, parse_steps, steps_request
from localjudge.kinds.geval.spec import GEvalMetric
from localjudge.weights.cache import cache_root

log = logging.getLogger("localjudge")
STEPS_PREFILL = "Evaluation steps:\n1."
STEPS_MAX_TOKENS = 200
"""Most tokens a judge writes for a metric's evaluation steps (greedy; a step the limit cuts off is dropped)."""


def cache_dir() -> Path:
    """Where generated steps live: the `steps/` of the localjudge cache folder (`cache_root`)."""
    return cache_root() / "steps"


def steps_key(judge: Judge, metric: GEvalMetric) -> str:
    """Hash of everything the generated steps depend on."""
    shaping = {
        "judge": [judge.info.name, judge.info.provenance, judge.info.dtype],
        "task": metric.task,
        "criteria": metric.criteria,
        "rubric": [r.model_dump() for r in metric.rubric],
        "fields": list(metric.fields),
        "labels": metric.field_labels,
        "scale": [metric.low, metric.high],
        "template": TEMPLATE_VERSION,
    }
    return hashlib.sha256(json.dumps(shaping, sort_keys=True).encode()).hexdigest()[:32]


def _read(path: Path) -> list[str] | None:
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        steps = entry["steps"]
        ok = entry["checksum"] == _checksum(steps) and all(isinstance(s, str) for s in steps) and steps
    except (OSError, ValueError, KeyError, TypeError):
        ok = False
    if not ok:
        if path.exists():
            log.warning("steps cache %s is corrupt; regenerating it", path)
        return None
    return steps


def _checksum(steps: list[str]) -> str:
    return hashlib.sha256(json.dumps(steps).encode()).hexdigest()


def generate_steps(judge: Judge, metric: GEvalMetric) -> list[str]:
    """Asks the judge to write evaluation steps (greedy, deterministic), uncached."""
    prompt = judge.render("", steps_request(metric), STEPS_PREFILL)
    text = "1." + judge.generate([prompt], max_new_tokens=STEPS_MAX_TOKENS)[0]
    steps = parse_steps(text)
    if not steps:
        raise LocalJudgeError(
            f"judge {judge.info.name} wrote no usable evaluation steps for metric {clip(metric.name)}; "
            "write them yourself under `steps:` in the metric file"
        )
    return steps


def resolve_steps(judge: Judge, metric: GEvalMetric, cache: Path | None = None) -> tuple[list[str], str]:
    """The metric's steps: pinned ones as given, else generated once and cached.

    Returns:
        The steps and where they came from: "pinned", "cache" or "generated".
    """
    if metric.steps is not None:
        return list(metric.steps), "pinned"
    path = (cache or cache_dir()) / f"{steps_key(judge, metric)}.json"
    steps = _read(path)
    if steps is not None:
        return steps, "cache"
    steps = generate_steps(judge, metric)
    entry = {
        "metric": metric.name,
        "judge": judge.info.name,
        "template": TEMPLATE_VERSION,
        "steps": steps,
        "checksum": _checksum(steps),
    }
    write_atomically(path, json.dumps(entry, indent=1), sync=True)
    return steps, "generated"
