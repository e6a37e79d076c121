"""Checks of `load.py`'s report: the machine of record, the demo's floor."""

from __future__ import annotations

from benchmarks.speed import load


def _runs(wall: float) -> list[list[float]]:
    return [[wall, wall]]


def _result(floor: dict | None) -> dict:
    load_ = {"import": [1.0, 1.0], "stack": [2.0, 2.0], "load": [0.5, 0.5]}
    res = {
        "loadavg_start": [0.1], "loadavg_end": [0.2], "repeats": 1,
        "machine": {"cpu": "Test CPU", "cores": 2, "torch_threads": 2, "torch": "t", "transformers": "x",
                    "python": "3", "simd": "AVX9"},
        "rows": {"smollm2-135m/float32": {m: [load_] for m in ("transformers", "cold", "warm", "verify")}},
        "import": [[1.0, 1.0]], "stack": [[2.0, 2.0]], "demo": [[20.0, 30.0], [18.0, 28.0]],
    }  # fmt: skip
    if floor is not None:
        res["floor"] = floor
    return res


def test_report_names_the_machine_it_was_measured_on():
    text = load.report(_result(None), 1)
    assert "Machine: Test CPU, 2 cores (2 torch threads; SIMD AVX9)" in text
    assert "demo second run ≤ 15 s: median 18.00 s, NOT met" in text
    assert "floor" not in text


def test_floor_adds_imports_load_and_linear_seconds():
    shapes = {"576x576": {"layers": 60, "rows": 100, "gflops": 4.0, "gflop_s": 150.0}}
    floor = {
        "import": [1.5, 1.5], "stack": [2.0, 2.0], "load": [1.0, 1.0], "engine": [9.0, 18.0], "tokens": 100,
        "head_rows": 80, "gemm": "256/16 rows, prepacked", "shapes": shapes, "linear_gflops": 4.0,
        "linear_floor_s": 11.0,
    }  # fmt: skip
    text = load.report(_result(floor), 1)
    assert "**11.0 s**" in text and "**15.5 s**: above the 15 s target" in text
    assert "576x576 ×60 on 100 rows: 150 GFLOP/s" in text
    floor["linear_floor_s"] = 9.0
    assert "**13.5 s**: below the 15 s target" in load.report(_result(floor), 1)
