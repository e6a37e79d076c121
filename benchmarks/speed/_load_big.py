"""The 1.5B judge's cold and warm loads and the cache's bytes on disk: `python -m benchmarks.speed.load --big`.

Each load runs in a fresh process (`load.child`), on top of `import torch, transformers` and the
import of the modeling stack, here transformers' `modeling_utils` and the judge's own
`modeling_qwen2` (3.3 s, which any load of a Qwen model pays first). For fp32 and bf16, on an empty
cache folder: one cold load (joins the chunk packages into `gguf/`, parses the GGUF, writes the
prepared copy), then warm loads; the bytes the folder holds after each step; the parts of a warm
load; and the hashing the cache does against what it did before (sha256 of the copy, and of the
GGUF on every load). "bfloat16" is the CPU default, mixed precision, which loads the fp32
weights; "bfloat16-full" runs every op in bf16 and casts the same fp32 copy at load (warm loads
on the bf16 row's cache).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

BIG = "qwen2.5-coder-1.5b"
TARGET = 5.0  # warm load on top of the imports, seconds
STACK = "transformers.models.qwen2.modeling_qwen2"


def load_options(dtype: str) -> dict:
    """`load_judge` keywords for a benchmark dtype ("bfloat16-full": every op in bf16)."""
    if not dtype.endswith("-full"):
        return {"device": "cpu", "dtype": dtype}
    from localjudge.engine.options import EngineOptions

    return {"options": EngineOptions(device="cpu", dtype=dtype.removesuffix("-full"), mixed_precision=False)}


def gguf_path(judge: str, cache: str) -> Path:
    """The judge's GGUF file: its package's, or the one joined from its chunks in `cache`."""
    from localjudge.judges.registry import load_registry
    from localjudge.weights.chunks import joined_gguf
    from localjudge.weights.sources import PackageChunksSource, package_gguf_path

    entry = load_registry().get(judge)
    if isinstance(entry.source, PackageChunksSource):
        return joined_gguf(entry.source, judge, Path(cache))
    return package_gguf_path(entry.source)


def parts(judge: str, dtype: str, cache: str) -> dict:
    """A warm load's own parts, timed one by one in this process ([wall, CPU] seconds)."""
    import transformers

    from localjudge.weights.cache import CacheKey, prepared
    from localjudge.weights.gguf import load_prepared, load_tokenizer
    from localjudge.weights.hashes import remembered_sha256

    root, out, t, c = Path(cache), {}, time.perf_counter(), time.process_time()

    def lap(name: str) -> None:
        nonlocal t, c
        now, cpu = time.perf_counter(), time.process_time()
        out[name], t, c = [now - t, cpu - c], now, cpu

    path = gguf_path(judge, cache)
    lap("parts found, joined GGUF checked")
    layout = {"bfloat16": "bfloat16-mixed", "bfloat16-full": "bfloat16"}.get(dtype, dtype)  # the copy this dtype reads
    key = CacheKey(remembered_sha256(path, root), transformers.__version__, layout)
    lap("GGUF sha256 (remembered)")
    with prepared(key, root) as folder:
        assert folder is not None, "parts run after a warm load"
        lap("copy verified (xxh3-128)")
        load_prepared(folder, layout)
        lap("model + tokenizer from the copy")
        load_tokenizer(folder)
        lap("of which the tokenizer (again)")
    return out


def hashing(judge: str, cache: str) -> dict:
    """Seconds of each hash over the cache's files: what a warm load does now and what it did before."""
    from localjudge.weights.cache import weights_dir
    from localjudge.weights.hashes import fresh_sha256, sha256_file, xxh3_file

    (copy,) = [p for p in weights_dir(Path(cache)).iterdir() if p.is_dir()]
    files = [p for p in copy.iterdir() if p.name != "manifest.json"]
    out = {}
    for name, fn in (("copy xxh3-128 (now)", xxh3_file), ("copy sha256 (before)", sha256_file)):
        t = time.perf_counter()
        for p in files:
            fn(p)
        out[name] = time.perf_counter() - t
    t = time.perf_counter()
    fresh_sha256(gguf_path(judge, cache))
    out["GGUF sha256 (before, on every load)"] = time.perf_counter() - t
    out["copy bytes"] = sum(p.stat().st_size for p in files)
    return out


def on_disk(root: Path) -> dict:
    """Bytes under each of the cache's folders (file sizes)."""
    out = {}
    for sub in ("weights", "gguf", "hashes"):
        folder = root / sub
        out[sub] = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0
    return out


def seed(cache: Path, source: Path) -> None:
    """`cache` as a cold load leaves it, from the cold-loaded cache folder `source`: its copy and joined
    GGUF hard-linked (manifests copied, so the last use recorded here stays here), the GGUF's hash
    remembered."""
    from localjudge.weights.hashes import remembered_sha256

    shutil.copytree(source, cache, copy_function=os.link, ignore=shutil.ignore_patterns("hashes", ".*"))
    for manifest in cache.glob("weights/*/manifest.json"):
        manifest.unlink()
        shutil.copy2(source / manifest.relative_to(cache), manifest)
    for gguf in cache.glob("gguf/*.gguf"):
        remembered_sha256(gguf, cache)


def run_big(measure, repeats: int, info: dict, seeded: Path | None = None) -> dict:
    """Per dtype: an empty cache, a cold load, warm loads, with the bytes on disk after each step.

    "bfloat16-full" has no cold load of its own: its warm loads read the copy the bf16 cold load
    wrote (the one fp32 copy), and its row says how many bytes they added (none). `measure(mode,
    judge, dtype, cache)` runs one child process; `info` describes the machine. `seeded`: no cold
    loads (a cold load of this judge peaks at 13.6 GiB, more than a busy machine may have); each
    cache starts as a copy of this cold-loaded folder (`seed`).
    """
    res: dict = {"machine": info, "loadavg_start": os.getloadavg(), "rows": {}, "seeded": seeded is not None}
    with tempfile.TemporaryDirectory(prefix="lj-big-") as tmp:
        for dtype, also in (("float32", ()), ("bfloat16", ("bfloat16-full",))):
            cache = Path(tmp) / dtype
            for name in (dtype, *also):
                row = res["rows"][name] = {"cold": [], "warm": [], "disk": {}}
                print(f"{BIG}/{name}", flush=True)
                if name == dtype and seeded is None:
                    row["cold"].append(measure("cold", BIG, name, cache))
                elif name == dtype:
                    seed(cache, seeded)
                row["disk"]["before warm"] = on_disk(cache)
                row["warm"] = [measure("warm", BIG, name, cache) for _ in range(repeats)]
                row["disk"]["after warm"] = on_disk(cache)
                row["parts"] = measure("parts", BIG, name, cache)
                print(json.dumps(row), flush=True)
            if dtype == "float32":
                res["hashing"] = measure("hashing", BIG, dtype, cache)
            shutil.rmtree(cache)  # room for the next dtype's cache
    res["loadavg_end"] = os.getloadavg()
    return res


def _med(runs: list[dict], part: str = "load") -> float:
    return statistics.median(r[part][0] for r in runs)


def _pair(v: list[float] | float) -> str:
    """Wall (CPU) seconds; a bare number is wall seconds."""
    return f"{v[0]:.2f} ({v[1]:.2f})" if isinstance(v, list) else f"{v:.2f}"


def _gb(n: int) -> str:
    return f"{n / 1e9:.2f} GB"


def big_lines(res: dict) -> list[str]:
    """The 1.5B section of the results file."""
    info = res["machine"]
    lines = [
        f"## The 1.5B judge ({BIG}) and the cache's bytes",
        "",
        f"Machine: {info['cpu']}, {info['cores']} cores ({info['torch_threads']} torch threads"
        + (f"; SIMD {info['simd']}" if info.get("simd") else "")
        + f"), torch {info['torch']}, transformers {info['transformers']}, Python {info['python']}; shared with "
        f"other jobs: load average {res['loadavg_start'][0]:.1f} at the start, {res['loadavg_end'][0]:.1f} at the "
        "end (1-minute, on 2 cores). Made by `benchmarks/speed/load.py --big`.",
        "",
        "Fresh processes; wall seconds (CPU seconds). Loads are on top of `import torch, transformers` and the "
        f"modeling stack (`transformers.modeling_utils` and `{STACK}`). "
        + (
            "Each dtype's cache starts as hard links of a cold-loaded cache (`--seed`: no cold load in this run); "
            if res.get("seeded")
            else "Each dtype starts from an empty cache folder; "
        )
        + "the page cache holds the files when memory allows (a first read from this machine's disk adds its "
        "transfer).",
        "",
        "| dtype | cold load | peak RSS cold | warm load (median) | warm runs (wall) | of which verification | "
        "bytes on disk after the cold load: copy + joined GGUF + hashes | written by the warm loads |",
        "|---|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for dtype, row in res["rows"].items():
        warm, disk, after = row["warm"], row["disk"]["before warm"], row["disk"]["after warm"]
        written = sum(after.values()) - sum(disk.values())
        c = row["cold"][0] if row["cold"] else None
        cold = (
            f"{c['load'][0]:.1f} ({c['load'][1]:.1f}) | {c['rss'] / 2**30:.1f} GiB"
            if c
            else ("– (reads the bf16 row's copy) | –" if dtype.endswith("-full") else "not run (seeded) | –")
        )
        lines.append(
            f"| {dtype} | {cold} | "
            f"{_med(warm):.2f} ({statistics.median(w['load'][1] for w in warm):.2f}) | "
            f"{', '.join(f'{w_load:.2f}' for w_load in (w['load'][0] for w in warm))} | "
            f"{_pair(row['parts']['copy verified (xxh3-128)'])} | {_gb(disk['weights'])} + {_gb(disk['gguf'])} + "
            f"{disk['hashes']} B | {written} B |"
        )
        stack = statistics.median(w["stack"][0] for w in warm)
        verdicts.append(
            f"{dtype}: {_med(warm):.2f} s ({'met' if _med(warm) <= TARGET else 'NOT met'}; "
            f"{_med(warm) + stack:.2f} s counting the modeling stack's {stack:.1f} s)"
        )
    first = next(iter(res["rows"].values()))
    lines += [
        "",
        "Parts of a warm load ("
        + next(iter(res["rows"]))
        + ", one process, wall (CPU) seconds): "
        + ", ".join(f"{k} {_pair(v)}" for k, v in first["parts"].items())
        + "; the rest of the warm load is the engine's set-up on the loaded model (not the cache's).",
    ]
    if "hashing" in res:
        h = res["hashing"]
        lines += [
            "",
            f"Hashing the cache's files ({_gb(h['copy bytes'])} copy): "
            + ", ".join(f"{k} {v:.2f} s" for k, v in h.items() if k != "copy bytes")
            + ". A warm load pays none of them: each file's hash is remembered in `hashes/` with its device, "
            "inode, size, mtime and ctime, and a file that still matches them is not read again "
            "(`localjudge cache verify` hashes every byte on demand).",
        ]
    lines += ["", f"Target: warm load ≤ {TARGET:.0f} s after the imports: " + "; ".join(verdicts) + "."]
    return lines
