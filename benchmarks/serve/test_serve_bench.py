"""The serve study's own checks: its quantile and its results table (no model, no server)."""

from __future__ import annotations

from benchmarks.serve.serve_load import _markdown, _quantile


def test_quantile_is_an_observed_latency():
    xs = [0.5, 0.1, 0.4, 0.2, 0.3]
    assert _quantile(xs, 0.5) == 0.3 and _quantile(xs, 0.95) == 0.5 and _quantile(xs, 0.0) == 0.1


def test_results_table_has_a_row_per_client_count():
    run = {"requests": 4, "cases_per_s": 2.0, "ratio_to_offline": 0.95, "p50_s": 0.5, "p95_s": 0.9}
    result = {
        "judge": "smollm2-135m",
        "metric": "fluency",
        "cases": 4,
        "per_request": 1,
        "offline_cases_per_s": 2.1,
        "runs": [{**run, "clients": c, "bitwise_equal_to_offline": True} for c in (1, 16)],
        "machine": {"cpu": "x", "cores": 2, "torch": "2", "torch_threads": 2, "python": "3.11"},
        "note": "Host shared.",
    }
    table = [line for line in _markdown(result).splitlines() if line.startswith("| 1") or line.startswith("| 16")]
    assert len(table) == 2 and "0.95" in table[0] and "Host shared." in _markdown(result)
