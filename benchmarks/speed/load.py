"""Judge load times: transformers' own GGUF path, a cold `load_judge` (one parse, copy written), a warm one.

Every measurement runs in a fresh Python process, as a CLI call would: the import of torch and
transformers is timed apart from the load on top of it. Per embedded judge and dtype:

- `transformers`: `AutoTokenizer` + `AutoModelForCausalLM.from_pretrained(gguf_file=...)`, the
  path localjudge used before (it parses the GGUF three times);
- `cold`: `load_judge` with an empty cache folder (parses once, writes the prepared copy);
- `warm`: `load_judge` again (hashes the GGUF, verifies the copy, loads safetensors);
- `verify`: the hashing alone (the GGUF's sha256, the key, and every file of the copy), the price
  of trusting the copy.

Then `localjudge demo --out ...` twice in fresh processes on an empty cache: `make demo`'s first
and second run. Wall seconds are the result; CPU seconds (user + system) are printed beside
them because the machine is shared and its load moves wall times.

Last, the demo's floor on this machine (`floor`, a fresh process): the tokens the demo's 48 items
put through the decoder and the output-layer rows they read, counted on the engine; the rate of the
judge's own linear layers (the kernel and chunk shape the engine runs, each weight shape timed
alone); and from those the seconds its linear layers need at that rate, with nothing else
counted. Import + load + that is the least any fp32 run of the demo can take here.

Usage: `python -m benchmarks.speed.load [--repeats 2] [--judges smollm2-135m gemma3-270m]`; `--report`
rewrites the results file from `load_results.json` without measuring; `--big [--repeats 2]` measures
the 1.5B judge's cold and warm loads and the cache's bytes alone (`_load_big.py`), kept beside the
other rows.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.lib.common import EMBEDDED_JUDGES, kept_section, machine
from benchmarks.speed._load_big import BIG, STACK, big_lines, gguf_path, hashing, load_options, parts, run_big

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RESULTS = HERE / "load_results.md"
TARGETS = {"smollm2-135m": 3.0, "gemma3-270m": 6.0}  # warm load on top of the import, seconds
DEMO_TARGET = 15.0
MACHINE = ("torch_threads", "torch", "transformers", "python", "simd")


def child(mode: str, judge: str, dtype: str, cache: str) -> None:
    """One measurement in this (fresh) process; prints its timings as JSON."""
    try:  # on a shared machine short of memory, the kernel ends this process before anyone else's
        Path("/proc/self/oom_score_adj").write_text("1000")
    except OSError:
        pass
    t0, c0 = time.perf_counter(), time.process_time()
    import torch
    import transformers

    t1, c1 = time.perf_counter(), time.process_time()
    # every from_pretrained imports transformers' modeling stack (~as long as torch itself): timed apart
    import transformers.modeling_utils

    if judge == BIG:  # its modeling module, which any load of a Qwen model imports first (3.3 s)
        __import__(STACK)
    t_stack, c_stack = time.perf_counter() - t1, time.process_time() - c1
    t1, c1 = time.perf_counter(), time.process_time()
    if mode == "transformers":
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = gguf_path(judge, cache)  # its package's GGUF, or a chunked judge's file joined from its parts
        AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
        AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=getattr(torch, dtype))
    elif mode in ("cold", "warm"):
        from localjudge import load_judge

        load_judge(judge, cache=cache, progress=False, **load_options(dtype))
    elif mode in ("parts", "hashing"):
        print(json.dumps(parts(judge, dtype, cache) if mode == "parts" else hashing(judge, cache)))
        return
    elif mode == "floor":
        print(json.dumps(demo_floor(judge, dtype, cache, [t1 - t0 - t_stack, c1 - c0 - c_stack], [t_stack, c_stack])))
        return
    elif mode == "verify":
        from localjudge.weights.cache import CacheKey, find_prepared
        from localjudge.weights.hashes import fresh_sha256

        path = gguf_path(judge, cache)
        t1, c1 = time.perf_counter(), time.process_time()  # the package lookup is not verification
        layout = {"bfloat16": "bfloat16-mixed", "bfloat16-full": "bfloat16"}.get(dtype, dtype)  # the copy it reads
        key = CacheKey(fresh_sha256(path), transformers.__version__, layout)
        assert find_prepared(key, Path(cache)) is not None, "verify runs after a warm load"
    t2, c2 = time.perf_counter(), time.process_time()
    print(
        json.dumps(
            {
                "import": [t1 - t0 - t_stack, c1 - c0 - c_stack],
                "stack": [t_stack, c_stack],
                "load": [t2 - t1, c2 - c1],
                "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,  # Linux reports KiB
            }
        )
    )


def demo_floor(judge: str, dtype: str, cache: str, imports: list[float], stack: list[float]) -> dict:
    """The demo's work counted on the engine, its linear layers' rate here, and the floor they give."""
    import torch

    from localjudge import load_judge
    from localjudge.cli.demo import DEMO_DATA
    from localjudge.engine.invariant import InvariantLinear
    from localjudge.io.cases import load_cases
    from localjudge.metrics import builtin_metric
    from localjudge.runs.evaluate import evaluate

    t, c = time.perf_counter(), time.process_time()
    lj = load_judge(judge, device="cpu", dtype=dtype, cache=cache, progress=False)
    load = [time.perf_counter() - t, time.process_time() - c]
    backend = lj.backend
    cases = load_cases(DEMO_DATA)
    head0 = backend.stats.head_rows
    t, c = time.perf_counter(), time.process_time()
    with backend.observe_forwards() as passes:
        evaluate(cases, [builtin_metric("consistency_likelihood")], lj, progress=False)
    engine = [time.perf_counter() - t, time.process_time() - c]
    head_rows = backend.stats.head_rows - head0
    # real tokens through the decoder (no grid pads), cached prefixes (the articles) included
    tokens = sum(sum(p.lengths) for p in passes if p.kind in ("prefill", "batch"))

    decoder = [m for m in backend.model.modules() if isinstance(m, InvariantLinear)]
    plan = backend.gemm
    big = plan.big if plan is not None else 256

    def rate(layer: torch.nn.Module, rows: int) -> float:
        """FLOP/s of this layer on `rows` rows (the median of 7 timed calls)."""
        x = torch.randn(rows, layer.in_features, dtype=layer.weight.dtype)
        with torch.inference_mode():
            for _ in range(2):
                layer(x)
            times = []
            for _ in range(7):
                s = time.perf_counter()
                layer(x)
                times.append(time.perf_counter() - s)
        return 2 * rows * layer.in_features * layer.out_features / statistics.median(times)

    shapes: dict[tuple[int, int], list] = {}
    for m in decoder:
        shapes.setdefault((m.out_features, m.in_features), [m, 0])[1] += 1
    head = backend.model.get_output_embeddings()
    flops = seconds = 0.0
    per_shape = {}
    for (out_f, in_f), (layer, count) in shapes.items():
        is_head = layer is head
        n = head_rows if is_head else tokens
        r = rate(layer, big)
        f = 2.0 * n * out_f * in_f * (1 if is_head else count)
        flops, seconds = flops + f, seconds + f / r
        per_shape[f"{out_f}x{in_f}"] = {"layers": count, "rows": n, "gflops": f / 1e9, "gflop_s": r / 1e9}
    if head is not None and not any(m is head for m in decoder):  # the fp32 head the engine reads
        from localjudge.engine.invariant import read_layer
        from localjudge.engine.runner import HEAD_ROWS

        layer = read_layer(head, backend.options.fp32_head, plan is not None)
        r = rate(layer, HEAD_ROWS)
        f = 2.0 * head_rows * layer.in_features * layer.out_features
        flops, seconds = flops + f, seconds + f / r
        per_shape["head"] = {"layers": 1, "rows": head_rows, "gflops": f / 1e9, "gflop_s": r / 1e9}
    return {
        "import": imports,
        "stack": stack,
        "load": load,
        "engine": engine,
        "tokens": tokens,
        "head_rows": head_rows,
        "gemm": plan.describe() if plan is not None else "stock linear",
        "shapes": per_shape,
        "linear_gflops": flops / 1e9,
        "linear_floor_s": seconds,
    }


def measure(mode: str, judge: str, dtype: str, cache: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO), "TRANSFORMERS_VERBOSITY": "error", "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "benchmarks.speed.load", "--child", mode, judge, dtype, str(cache)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode:
        raise RuntimeError(f"{mode} {judge} {dtype} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def demo_run(cache: Path, out: Path) -> list[float]:
    """Wall and CPU seconds of one `localjudge demo --out OUT` process."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "LOCALJUDGE_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    cmd = [sys.executable, "-m", "localjudge", "demo", "--out", str(out), "--no-progress"]
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    if result.returncode:
        raise RuntimeError(f"demo failed:\n{result.stderr[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return [wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)]


def run(judges: list[str], dtypes: list[str], repeats: int) -> dict:
    rows: dict = {"loadavg_start": os.getloadavg(), "repeats": repeats, "rows": {}, "import": [], "stack": []}
    rows["machine"] = machine(*MACHINE)  # where it was measured, whatever machine renders the report
    with tempfile.TemporaryDirectory(prefix="lj-load-") as tmp:
        for judge in judges:
            for dtype in dtypes:
                key = f"{judge}/{dtype}"
                row = rows["rows"][key] = {"transformers": [], "cold": [], "warm": [], "verify": []}
                print(key, flush=True)
                row["transformers"].append(measure("transformers", judge, dtype, Path(tmp)))  # slow: once
                for rep in range(repeats):
                    cache = Path(tmp) / f"{judge}-{dtype}-{rep}"
                    row["cold"].append(measure("cold", judge, dtype, cache))
                    for _ in range(2):
                        row["warm"].append(measure("warm", judge, dtype, cache))
                    row["verify"].append(measure("verify", judge, dtype, cache))
                    rows["import"] += [m["import"] for m in row["warm"][-2:]]
                    rows["stack"] += [m["stack"] for m in row["warm"][-2:]]
                print(json.dumps(row), flush=True)
        demo_cache = Path(tmp) / "demo-cache"
        rows["demo"] = [demo_run(demo_cache, Path(tmp) / f"demo{k}.jsonl") for k in range(1 + repeats)]
        rows["floor"] = measure("floor", "smollm2-135m", "float32", demo_cache)
    rows["loadavg_end"] = os.getloadavg()
    return rows


def _cell(pairs: list[list[float]]) -> str:
    """Median wall seconds (median CPU seconds), over the runs."""
    if not pairs:
        return "–"
    return f"{statistics.median(p[0] for p in pairs):.2f} ({statistics.median(p[1] for p in pairs):.2f})"


def _med(pairs: list[list[float]]) -> float:
    return statistics.median(p[0] for p in pairs)


def _ratio(a: list[list[float]], b: list[list[float]]) -> str:
    """Ratio of the medians, wall (CPU)."""
    cpu = statistics.median(p[1] for p in a) / statistics.median(p[1] for p in b)
    return f"{_med(a) / _med(b):.3f} ({cpu:.3f})"


def report(res: dict, repeats: int) -> str:
    info = res.get("machine") or machine(*MACHINE)
    lines = [
        "# Judge load results",
        "",
        f"Machine: {info['cpu']}, {info['cores']} cores ({info['torch_threads']} torch threads"
        + (f"; SIMD {info['simd']}" if info.get("simd") else "")
        + "), "
        f"torch {info['torch']}, transformers {info['transformers']}, Python {info['python']}; "
        "shared with other jobs: load average "
        f"{res['loadavg_start'][0]:.1f} at the start, {res['loadavg_end'][0]:.1f} at the end (1-minute, "
        "on 2 cores). Made by `benchmarks/speed/load.py`.",
        "",
        f"Each figure is the median over fresh processes: wall seconds, CPU seconds in brackets. {repeats} cold "
        f"loads per row, each followed by 2 warm loads and a hashing run; transformers' own path once. "
        "Every load column is on top of `import torch, transformers` and of the import of transformers' "
        "modeling stack (`transformers.modeling_utils`, which any `from_pretrained` pays first; timed apart "
        "below). The page cache holds the files throughout (a first read from a cold disk adds its transfer time).",
        "",
        "| judge/dtype | transformers (3 parses) | cold load_judge | warm load_judge | of which hashing | "
        "cold / transformers | warm / transformers | warm / cold |",
        "|---|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for key, row in res["rows"].items():
        load = {mode: [m["load"] for m in runs] for mode, runs in row.items()}
        base = load["transformers"]
        lines.append(
            f"| {key} | {_cell(base)} | {_cell(load['cold'])} | {_cell(load['warm'])} | {_cell(load['verify'])} | "
            f"{_ratio(load['cold'], base)} | {_ratio(load['warm'], base)} | {_ratio(load['warm'], load['cold'])} |"
        )
        target = TARGETS[key.split("/")[0]]
        warm, stack = _med(load["warm"]), _med(res["stack"])
        verdicts.append(
            f"warm {key} ≤ {target:.0f} s: {warm:.2f} s on top of the modeling stack "
            f"({'met' if warm <= target else 'NOT met'}), {warm + stack:.2f} s on top of the bare import "
            f"({'met' if warm + stack <= target else 'NOT met'})"
        )
    demo = res["demo"]
    lines += [
        "",
        f"`import torch, transformers`: {_cell(res['import'])} s; then `import transformers.modeling_utils`: "
        f"{_cell(res['stack'])} s (medians over the warm runs).",
        "",
        "`localjudge demo --out ...` (whole process, import, load and the 48 likelihood items):",
        f"first run (cold cache) {_cell(demo[:1])} s, later runs {_cell(demo[1:])} s "
        f"(runs: {', '.join(f'{w:.1f}' for w, _ in demo)}).",
        "",
        "Targets (median wall seconds): "
        + "; ".join(verdicts)
        + f"; demo second run ≤ {DEMO_TARGET:.0f} s: median {_med(demo[1:]):.2f} s, "
        f"{'met' if _med(demo[1:]) <= DEMO_TARGET else 'NOT met'}.",
    ]
    if "floor" in res:
        lines += ["", *floor_lines(res["floor"], _med(demo[1:]))]
    if "big" in res:
        lines += ["", *big_lines(res["big"])]
    return "\n".join(lines) + "\n"


def floor_lines(f: dict, demo_s: float) -> list[str]:
    """The demo's floor: its work, its linear layers' rate here, and what they need at that rate."""
    fixed = f["import"][0] + f["stack"][0] + f["load"][0]
    shapes = ", ".join(
        f"{k} ×{v['layers']} on {v['rows']} rows: {v['gflop_s']:.0f} GFLOP/s" for k, v in f["shapes"].items()
    )
    floor = fixed + f["linear_floor_s"]
    return [
        f"The demo's floor here (one fresh process, smollm2-135m/float32, GEMMs {f['gemm']}): its 48 items put "
        f"{f['tokens']} tokens through the decoder and read {f['head_rows']} output-layer rows, "
        f"{f['linear_gflops']:.0f} GFLOP in linear layers; the judge's own layers run at {shapes}; so the linear "
        f"layers alone need **{f['linear_floor_s']:.1f} s** (the engine took {f['engine'][0]:.1f} s in that process, "
        f"attention, norms and the rest included). Import {f['import'][0]:.1f} s + modeling stack "
        f"{f['stack'][0]:.1f} s + warm load {f['load'][0]:.1f} s + linear layers = **{floor:.1f} s**: "
        f"{'below' if floor <= DEMO_TARGET else 'above'} the {DEMO_TARGET:.0f} s target before attention or "
        f"anything else runs (the demo's second run took {demo_s:.1f} s).",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs=4, metavar=("MODE", "JUDGE", "DTYPE", "CACHE"), help=argparse.SUPPRESS)
    parser.add_argument("--repeats", type=int, default=2, help="Cold loads per judge and dtype (2 warm after each).")
    parser.add_argument("--judges", nargs="+", default=list(EMBEDDED_JUDGES))
    parser.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16"])
    parser.add_argument("--report", action="store_true", help="Rewrite the results file from load_results.json.")
    parser.add_argument("--big", action="store_true", help=f"Measure {BIG} and the cache's bytes only (kept apart).")
    parser.add_argument("--seed", type=Path, default=None, help="--big without cold loads: start from this cache.")
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.report or args.big:
        res = json.loads((HERE / "load_results.json").read_text(encoding="utf-8"))
        if args.big and not args.report:  # --big --report: only the report, as --report says
            res["big"] = run_big(measure, args.repeats, machine(*MACHINE), args.seed)
            (HERE / "load_results.json").write_text(json.dumps(res, indent=1), encoding="utf-8")
    else:
        res = run(args.judges, args.dtypes, args.repeats)
        (HERE / "load_results.json").write_text(json.dumps(res, indent=1), encoding="utf-8")
    RESULTS.write_text(report(res, res.get("repeats", args.repeats)) + kept_section(RESULTS), encoding="utf-8")
    print(RESULTS.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
