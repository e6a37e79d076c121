"""benchmarks/gpu/gpu.py end to end on the CPU with tiny shapes: every section runs and reports."""

from __future__ import annotations

import json

import pytest

from benchmarks.gpu import gpu as G


@pytest.mark.slow
def test_tiny_run_end_to_end(tmp_path):
    results = tmp_path / "gpu_results.md"
    results.write_text("# kept\n")
    G.main(["--tiny", "--precision", "--results", str(results), "--json", str(tmp_path / "run.json")])
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["tiny"] and run["device"].startswith("CPU only") and run["peak"] > 0
    assert [r["model"] for r in run["results"]] == G.DEFAULT_MODELS and run["skipped_models"] == []
    for r in run["results"]:
        assert r["skipped"] == []
        methods = r["throughput"]["methods"]
        assert set(methods) == {f"{k} {m}" for k in ("score", "loglik") for m in ("floor", "lj", "lj+prefix")}
        assert methods["score floor"]["x_floor"] == 1 and methods["loglik floor"]["x_floor"] == 1
        assert all(v["items_per_s"] > 0 and v["mfu"] > 0 for v in methods.values())
        assert [s["budget"] for s in r["sweep"]] == [256, 2048]
        # the model refused more than two rows: the batch was halved until it ran, with the same scores
        assert r["oom"]["error"] is None and r["oom"]["halvings"] >= 2 and r["oom"]["max_abs_diff"] < 1e-5
        bitwise = r["bitwise"]
        assert len(bitwise["per_config"]) == 4  # two budgets × prefix reuse off and on
        for name, kinds in bitwise["per_config"].items():
            assert set(kinds) == {"scores", "loglik", "greedy"}
            for tally in kinds.values():
                assert tally["passed"] + tally["failed"] == 2  # 2 targets × 1 trial
                if "budget 128," in name:  # one item per batch: companions never share a forward
                    assert tally["failed"] == 0, (r["model"], name)
        assert all(t["passed"] + t["failed"] == 8 for t in bitwise["across_configs"].values())
    assert [p["model"] for p in run["precision"]] == ["qwen2.5-coder-0.5b"]  # tiny: one shape
    for p in run["precision"]:
        rows = p["dtypes"]
        assert set(rows) == {"float32", "bfloat16", "float16"} and rows["float32"]["x_fp32"]["score"] == 1
        assert rows["float32"].get("max_normalized_delta") is None
        for d in ("bfloat16", "float16"):
            assert 0 < rows[d]["max_normalized_delta"] < 0.5 and rows[d]["max_token_logprob_delta"] > 0
        for r in rows.values():
            assert r["overflowed"] == 0 and r["items_per_s"]["score"] > 0
    text = results.read_text()
    assert text.startswith("# kept\n\n## ")  # appended, never rewritten
    assert "Tiny shapes" in text and text.count("\n### ") == 4 and "out-of-memory halving" in text
    assert text.count("\n#### ") == 1 and "fp32, bf16 and fp16" in text
