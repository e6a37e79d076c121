"""The measured peak memory `localjudge models` shows: read from the file the memory benchmark
publishes, the same figures as that benchmark's results, one per embedded judge and dtype."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from localjudge.cli import main
from localjudge.judges.peak_memory import PEAKS_PATH, measured_peaks
from localjudge.judges.registry import load_registry
from localjudge.weights.sources import PackageChunksSource, PackageGGUFSource

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "benchmarks" / "memory" / "memory_results.json"


def test_the_published_peaks_are_the_benchmarks_cold_and_warm_runs_of_their_labels():
    peaks = measured_peaks()
    assert (REPO / peaks.source).is_file()
    labels = json.loads(RESULTS.read_text(encoding="utf-8"))["labels"]
    rows: dict[tuple[str, str, str], int] = {}
    for label in peaks.labels:  # the first label that measured a judge, dtype and phase gives its figure
        run = labels[label]
        for r in run["rows"]:
            if r["phase"] in ("cold", "warm"):
                rows.setdefault((r["judge"], r["dtype"], r["phase"]), r["peak"])
        assert all(str(run["machine"][k]) in peaks.machine for k in ("cpu", "cores", "simd", "bf16"))
        assert ("RAG demo" in peaks.workload) == (run["cases"] > 0)
    published = {(j, d, p): b for j, by in peaks.peak_rss_bytes.items() for d, ph in by.items() for p, b in ph.items()}
    assert published == rows and published


def test_only_embedded_judges_are_measured_and_each_in_every_dtype_of_the_file():
    peaks = measured_peaks()
    embedded = {
        j.name for j in load_registry().judges if isinstance(j.source, (PackageGGUFSource, PackageChunksSource))
    }
    assert set(peaks.peak_rss_bytes) <= embedded
    assert all(set(by) <= set(peaks.dtypes) for by in peaks.peak_rss_bytes.values())


def test_models_shows_each_measured_peak_and_a_dash_where_none_was_measured():
    result = CliRunner().invoke(main, ["models"])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0].lstrip("*"): line for line in result.stdout.splitlines()[2:] if line.strip()}
    peaks = measured_peaks()
    for name in peaks.peak_rss_bytes:
        shown = [
            "/".join(
                "-" if b is None else f"{b / 2**30:.1f}" for b in (peaks.peak(name, d, p) for p in ("cold", "warm"))
            )
            for d in ("float32", "bf16-mixed")
        ]
        assert f"{shown[0]} | {shown[1]}" in rows[name]
    unmeasured = [n for n in rows if n in {j.name for j in load_registry().judges} and n not in peaks.peak_rss_bytes]
    assert unmeasured and all(" - " in rows[n] for n in unmeasured)
    assert "first/later run" in result.stdout and PEAKS_PATH.name not in result.stdout
