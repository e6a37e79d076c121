"""A GGUF judge's cold parse: gguf-py's reader and dequantiser against localjudge's (`weights/gguf_fast.py`).

What a load without a prepared copy pays (`load_judge(..., cache=False)`, the test suite's Qwen
fixture, the first load of every judge): `gguf.parse_gguf`, the model and tokenizer from the
GGUF. Two ways, side by side in one run, each in a fresh process, alternating:

- `gguf-py`: `parse_gguf` with gguf-py's `GGUFReader`, numpy `dequantize` and transformers'
  `_gguf_parse_value` (what localjudge ran before; the three reads still share one parse);
- `fast`: `parse_gguf` as it is (the same work through `gguf_fast`, its weights in 4 KiB pages);
- `fast-huge`: the same with NUMPY_MADVISE_HUGEPAGE=1, so the unpacked weights get numpy's default
  advice, transparent huge pages (what `gguf_fast` did before `fresh_values`).

Before timing, `--check` (on by default) proves the two give the same bytes: every metadata
field part and every quantised tensor of each judge's file, compared bit for bit, and the
component seconds of both (reader, dequantisation) are recorded.

Usage: `python -m benchmarks.speed.gguf_parse [--judges ...] [--repeats 2]`; `--report` rewrites the
results file from `gguf_parse_results.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.lib.common import kept_section, machine
from benchmarks.speed._load_big import gguf_path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "gguf_parse_results.md"
JUDGES = ("smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
MACHINE = ("torch_threads", "torch", "transformers", "python", "simd")


def child(way: str, path: str) -> None:
    """One parse in this (fresh) process; prints its [wall, CPU] seconds as JSON."""
    import torch
    import transformers.modeling_utils  # noqa: F401  (the modeling stack, as any load pays it first)

    from localjudge.weights import gguf as gguf_weights

    if way == "gguf-py":  # the same `parse_gguf`, with gguf-py's and transformers' own pieces left in place
        for name in ("fast_reader", "fast_dequantize", "fast_parse_value"):
            setattr(gguf_weights, name, lambda real: real)
    t0, c0 = time.perf_counter(), time.process_time()
    model, tokenizer = gguf_weights.parse_gguf(Path(path), torch.float32)
    seconds = [time.perf_counter() - t0, time.process_time() - c0]
    n = sum(p.numel() for p in model.parameters())
    print(json.dumps({"seconds": seconds, "parameters": n, "vocab": len(tokenizer)}))


def check(path: Path) -> dict:
    """Every field part and every quantised tensor through both ways, compared bit for bit, and their seconds."""
    import gguf
    from gguf.quants import dequantize
    from transformers.integrations.ggml import _gguf_parse_value

    from localjudge.weights.gguf_fast import BLOCKS, dequantize_blocks, fast_parse_value, fast_reader

    out: dict = {"reader": [], "dequantize": [], "tensors": {}, "fields": 0, "parts": 0}
    t = time.perf_counter()
    theirs = gguf.GGUFReader(path)
    out["reader"].append(time.perf_counter() - t)
    t = time.perf_counter()
    ours = fast_reader(gguf.GGUFReader)(path)
    out["reader"].append(time.perf_counter() - t)
    assert list(theirs.fields) == list(ours.fields)
    parse = fast_parse_value(_gguf_parse_value)
    for key, field in theirs.fields.items():
        mine = ours.fields[key]
        assert (field.offset, field.data, field.types) == (mine.offset, mine.data, mine.types), key
        assert len(field.parts) == len(mine.parts), key
        for a, b in zip(field.parts, mine.parts):
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), key
        for i in field.data:
            assert parse(mine.parts[i], mine.types) == _gguf_parse_value(field.parts[i], field.types), key
        out["fields"] += 1
        out["parts"] += len(field.parts)
    slow = fast = 0.0
    for a, b in zip(theirs.tensors, ours.tensors):
        assert (a.name, a.tensor_type, a.data_offset) == (b.name, b.tensor_type, b.data_offset)
        kind = a.tensor_type.name
        out["tensors"][kind] = out["tensors"].get(kind, 0) + 1
        if int(a.tensor_type) not in BLOCKS:
            continue
        t = time.perf_counter()
        expected = dequantize(a.data, a.tensor_type)
        slow += time.perf_counter() - t
        t = time.perf_counter()
        got = dequantize_blocks(b.data, int(b.tensor_type))
        fast += time.perf_counter() - t
        assert got.shape == expected.shape and got.tobytes() == expected.tobytes(), a.name
    out["dequantize"] = [slow, fast]
    return out


WAYS = ("gguf-py", "fast", "fast-huge")


def run_child(way: str, path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    if way == "fast-huge":
        env["NUMPY_MADVISE_HUGEPAGE"] = "1"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.speed.gguf_parse",
            "--child",
            "fast" if way == "fast-huge" else way,
            str(path),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=HERE.parents[1],
    )
    if done.returncode:
        raise SystemExit(f"{way} parse of {path} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(judges: list[str], repeats: int, do_check: bool) -> dict:
    data: dict = {"machine": machine(*MACHINE), "load_before": os.getloadavg()[0], "judges": {}}
    with tempfile.TemporaryDirectory() as cache:
        for judge in judges:
            path = gguf_path(judge, os.environ.get("LOCALJUDGE_CACHE") or cache)
            row: dict = {"file": path.name, "bytes": path.stat().st_size, "runs": {w: [] for w in WAYS}}
            if do_check:
                row["check"] = check(path)
                print(judge, "check:", json.dumps(row["check"]), flush=True)
            for r in range(repeats):
                for way in WAYS if r % 2 == 0 else WAYS[::-1]:
                    result = run_child(way, path)
                    row["runs"][way].append(result)
                    print(judge, way, json.dumps(result), flush=True)
            data["judges"][judge] = row
    data["load_after"] = os.getloadavg()[0]
    return data


def report(data: dict) -> str:
    m = data["machine"]
    lines = [
        "# Cold GGUF parse: gguf-py against localjudge's fast path",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores ({m['torch_threads']} torch threads; SIMD {m['simd']}), "
        f"torch {m['torch']}, transformers {m['transformers']}, Python {m['python']}; shared with other jobs: "
        f"load average {data['load_before']:.1f} at the start, {data['load_after']:.1f} at the end (1-minute). "
        "Made by `benchmarks/speed/gguf_parse.py`.",
        "",
        "`gguf.parse_gguf` (model and tokenizer from the GGUF, fp32), each in a fresh process after "
        "`import torch, transformers.modeling_utils`; wall seconds (CPU seconds), median over the runs, "
        "the ways in turn, their order reversed every other repeat. Same bytes: every field part and every "
        "quantised tensor compared bit for bit first (`check`). `fast`: the weights in 4 KiB pages; "
        "`fast, huge pages`: the same code with numpy's huge-page advice (NUMPY_MADVISE_HUGEPAGE=1).",
        "",
        "| judge | GGUF | tensors | same bytes | gguf-py parse | fast parse | fast, huge pages | "
        "fast / gguf-py (wall) | fast / fast, huge pages (wall) | reader: gguf-py → fast | "
        "dequantise: gguf-py → fast |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for judge, row in data["judges"].items():
        runs = row["runs"]
        med = {w: [statistics.median(r["seconds"][i] for r in runs[w]) for i in (0, 1)] for w in runs if runs[w]}
        huge = med.get("fast-huge")
        chk = row.get("check")
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(chk["tensors"].items())) if chk else "–"
        same = f"yes ({chk['fields']} fields, {chk['parts']} parts)" if chk else "not checked"
        reader = f"{chk['reader'][0]:.2f} → {chk['reader'][1]:.2f} s" if chk else "–"
        deq = f"{chk['dequantize'][0]:.2f} → {chk['dequantize'][1]:.2f} s" if chk else "–"
        lines.append(
            f"| {judge} | {row['bytes'] / 2**20:.0f} MiB | {kinds} | {same} | "
            f"{med['gguf-py'][0]:.1f} ({med['gguf-py'][1]:.1f}) | {med['fast'][0]:.1f} ({med['fast'][1]:.1f}) | "
            + (f"{huge[0]:.1f} ({huge[1]:.1f})" if huge else "–")
            + f" | **{med['fast'][0] / med['gguf-py'][0]:.2f}** | "
            + (f"**{med['fast'][0] / huge[0]:.2f}**" if huge else "–")
            + f" | {reader} | {deq} |"
        )
    walls = {
        j: {w: ", ".join(f"{r['seconds'][0]:.1f}" for r in runs) for w, runs in row["runs"].items()}
        for j, row in data["judges"].items()
    }
    lines += [
        "",
        "Runs (wall seconds): "
        + "; ".join(f"{j}: " + ", ".join(f"{way} {runs}" for way, runs in w.items() if runs) for j, w in walls.items())
        + ".",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", nargs=2, metavar=("WAY", "GGUF"), help=argparse.SUPPRESS)
    ap.add_argument("--judges", nargs="+", default=list(JUDGES))
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--no-check", action="store_true", help="skip the bit-for-bit comparison")
    ap.add_argument("--report", action="store_true", help="rewrite the results file from the JSON")
    args = ap.parse_args()
    if args.child:
        return child(*args.child)
    store = RESULTS.with_suffix(".json")
    if args.report:
        data = json.loads(store.read_text())
    else:
        data = measure(args.judges, args.repeats, not args.no_check)
        store.write_text(json.dumps(data, indent=1) + "\n")
    RESULTS.write_text(report(data) + kept_section(RESULTS))
    print(RESULTS.read_text())


if __name__ == "__main__":
    main()
