"""Measured peak resident memory of a run, per embedded judge and dtype, for `localjudge models`.

The figures live in `peak_memory.json` beside this module, written by the benchmark that measures
them (`python -m benchmarks.memory.memory --publish LABEL`, results in
`benchmarks/memory/memory_results.md`): a fresh process that loads the judge and scores a case of
the bundled RAG demo, on its first run (`cold`: the load writes the prepared copy from the GGUF)
and on a later one (`warm`: the load reads the copy). Nothing here measures.

Examples:
    >>> peaks = measured_peaks()
    >>> sorted(peaks.dtypes)
    ['bf16-full', 'bf16-mixed', 'float32']
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Phase = Literal["cold", "warm"]
PEAKS_PATH = Path(__file__).resolve().parent / "peak_memory.json"


class MeasuredPeaks(BaseModel):
    """Peak resident memory of a short run, per judge and dtype, as one benchmark run measured it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(description="The results file the figures come from.")
    labels: tuple[str, ...] = Field(
        description="The names of the benchmark runs in that file; a figure comes from the first that measured it."
    )
    machine: str = Field(description="The machine they were measured on, with its bf16 support.")
    workload: str = Field(description="What each measured process did, e.g. loading the judge alone.")
    dtypes: tuple[str, ...] = Field(description="The dtypes measured: float32, bf16-mixed, bf16-full.")
    peak_rss_bytes: dict[str, dict[str, dict[Phase, int]]] = Field(
        description="Judge name -> dtype -> phase (cold: the first run; warm: a later one) -> peak resident bytes."
    )

    def peak(self, judge: str, dtype: str, phase: Phase = "warm") -> int | None:
        """The measured peak of `judge` run in `dtype` (bytes) on its first run (`cold`) or a later one
        (`warm`), or None when not measured."""
        return self.peak_rss_bytes.get(judge, {}).get(dtype, {}).get(phase)


@lru_cache(maxsize=1)
def measured_peaks() -> MeasuredPeaks:
    """The published figures (`peak_memory.json`)."""
    return MeasuredPeaks.model_validate_json(PEAKS_PATH.read_bytes())
