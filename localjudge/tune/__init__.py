"""Tuning judges to people: LoRA trained through the exact score distribution a metric reads.

`tune` takes labelled cases, a metric and a base judge, and writes a tuned judge folder
(`adapter.safetensors`, `tune.json`) that loads wherever a judge is named. The trainer and its
torch imports load on first use.
"""

from localjudge.lazy import lazy_exports
from localjudge.tune.job import TuneJob
from localjudge.tune.options import TuneOptions

_LAZY = {"tune": "localjudge.tune.trainer", "TuneFailedError": "localjudge.tune.trainer"}

__all__ = ["TuneFailedError", "TuneJob", "TuneOptions", "tune"]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
