"""The serve study's own checks: its quantile and its results table (no model, no server)."""

from __future__ import annotations

from benchmarks.serve.serve_load import _markdown, _quantile, _summary


def test_quantile_is_an_observed_latency():
    xs = [0.5, 0.1, 0.4, 0.2, 0.3]
    assert _quantile(xs, 0.5) == 0.3 and _quantile(xs, 0.95) == 0.5 and _quantile(xs, 0.0) == 0.1


def test_rounds_give_medians_a_range_and_bitwise_only_if_every_round_was():
    rounds = [
        {"cases_per_s": v, "ratio_to_offline": v / 2, "p50_s": 1.0, "p95_s": 2.0, "bitwise_equal_to_offline": b}
        for v, b in ((1.8, True), (2.0, True), (1.6, False))
    ]
    got = _summary(8, 48, rounds)
    assert (got["cases_per_s"], got["ratio_to_offline"], got["ratio_min"], got["ratio_max"]) == (1.8, 0.9, 0.8, 1.0)
    assert got["bitwise_equal_to_offline"] is False and _summary(8, 48, rounds[:2])["bitwise_equal_to_offline"]


def test_results_table_has_a_row_per_client_count():
    run = {"cases_per_s": 2.0, "ratio_to_offline": 0.95, "p50_s": 0.5, "p95_s": 0.9, "bitwise_equal_to_offline": True}
    result = {
        "judge": "smollm2-135m",
        "metric": "fluency",
        "cases": 4,
        "per_request": 1,
        "rounds": 2,
        "offline_cases_per_s": 2.1,
        "offline_cases_per_s_each_round": [2.0, 2.2],
        "runs": [_summary(c, 4, [run, {**run, "ratio_to_offline": 0.85}]) for c in (1, 16)],
        "machine": {"cpu": "x", "cores": 2, "torch": "2", "torch_threads": 2, "python": "3.11"},
        "note": "Host shared.",
    }
    text = _markdown(result)
    table = [line for line in text.splitlines() if line.startswith("| 1") or line.startswith("| 16")]
    assert len(table) == 2 and "| 0.90 | 0.85–0.95 |" in table[0] and "Host shared." in text
    assert "rounds: 2.00, 2.20" in text
