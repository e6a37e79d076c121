"""A run's peak resident memory against the judge's weights, per embedded judge and dtype, first run and later.

Each measurement is a fresh Python process, as a CLI call is: it imports localjudge, loads the
judge (`load_judge`, with a cache folder of this study's own), runs a short fixed workload on the
bundled RAG demo (`localjudge/examples/rag_demo.jsonl`: G-Eval `correctness` and the likelihood
metric `faithfulness_pmi` on its first `--cases` cases, and the log-likelihood of each answer), and
reports its peak resident set (`VmHWM` of /proc/self/status, which counts the file pages a memory
map touched too) after the imports, after the load and at the end. The weights are the judge's
parameters in the dtype it runs (4 bytes each in fp32, 2 in bf16); the target: the peak less the
imports' at most twice that.

Per judge, the cache folder starts empty (as `LOCALJUDGE_CACHE=$(mktemp -d)`); per dtype a `cold`
run comes first, the judge's first run: its load writes the prepared copy from the GGUF (the
judge's first dtype also joins a chunked GGUF into the folder), then the workload; then a `warm`
run, the load from the copy and the same workload. The copies' bytes on disk are listed beside.

dtypes: `float32`; `bf16-mixed` (bf16 linear layers, the rest in fp32: the CPU default for bf16);
`bf16-full` (every op in bf16, `mixed_precision=False`). Each label records its host's bf16 support
(`bf16`: `native` where oneDNN packs bf16 weights, AVX-512 BF16 or AMX; else `not native`, where
bf16 GEMMs read their weights unpacked); a kind of host no label measured is listed as not measured.

`--dump FILE` also writes the workload's scores and likelihoods (every record's distribution, raw
score and token log-probabilities, as JSON) from each run, so that two versions of the code can be
compared byte for byte (`cmp`). `--cases 0` measures the load alone.
Rows are saved as they are measured: a run cut short keeps what it has.

Usage: `python -m benchmarks.memory.memory --label NAME [--judges smollm2-135m] [--dtypes float32]`
writes `memory_results.json` (the runs under the label) and rewrites `memory_results.md`;
`--report` rewrites the markdown alone; `--publish LABEL...` writes the labels' cold and warm peaks to
`localjudge/judges/peak_memory.json`, which `localjudge models` shows.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.lib.common import kept_section, machine

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RESULTS_JSON = HERE / "memory_results.json"
RESULTS_MD = HERE / "memory_results.md"
PUBLISHED = REPO / "localjudge" / "judges" / "peak_memory.json"
DEMO = REPO / "localjudge" / "examples" / "rag_demo.jsonl"
JUDGES = ("smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
DTYPES = ("float32", "bf16-mixed", "bf16-full")
METRICS = ("correctness", "faithfulness_pmi")
MACHINE = ("torch_threads", "torch", "transformers", "python", "simd", "bf16")
PHASES = ("cold", "warm")
HOSTS = {
    "not native": "AVX2 or AVX-512 without BF16: bf16 GEMMs read unpacked weights",
    "native": "AVX-512 BF16 or AMX: oneDNN packs bf16 weights",
}


def _vm(field: str) -> int:
    """A /proc/self/status figure in bytes (VmHWM: the peak resident set so far; VmRSS: now)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status (Linux only)")


def _options(dtype: str):
    from localjudge import EngineOptions

    if dtype == "float32":
        return EngineOptions(device="cpu", dtype="float32")
    return EngineOptions(device="cpu", dtype="bfloat16", mixed_precision=dtype == "bf16-mixed")


def _weights_bytes(model, dtype: str) -> int:
    """The judge's parameters (a tied weight once) at the bytes of the dtype it runs."""
    numel = sum(p.numel() for p in model.parameters())
    return numel * (4 if dtype == "float32" else 2)


def _held_bytes(model) -> int:
    """The bytes the model's parameters take as they are held (fp32 and bf16 tensors mixed)."""
    return sum(p.numel() * p.element_size() for p in model.parameters())


def _dump(result, logprobs, model) -> dict:
    """What the workload computed (every record but the judge's description, and the token
    log-probabilities of `loglikelihood`), and the model it ran (the SHA-256 of every parameter and
    buffer, with its dtype and shape), with nothing that varies between runs."""
    import hashlib

    import torch

    from localjudge.engine.invariant import restore_weights

    restore_weights(model)  # the plain weights the packed copies stand for (after the peak is read)
    tensors = {}
    for name, t in [*model.named_parameters(), *model.named_buffers()]:
        data = t.detach().contiguous().view(-1).view(torch.uint8).numpy().tobytes()
        tensors[name] = f"{str(t.dtype).removeprefix('torch.')} {tuple(t.shape)} {hashlib.sha256(data).hexdigest()}"
    return {
        "records": [r.model_dump(mode="json", exclude={"judge"}) for r in result.records],
        "loglikelihood": [[repr(x) for x in item.logprobs] for item in logprobs],
        "tensors": tensors,
    }


def child(judge_name: str, dtype: str, cache: str, cases: int, dump: str | None) -> None:
    """One measurement in this (fresh) process; prints it as JSON. `cases` 0: the load alone."""
    try:  # on a shared machine short of memory, the kernel ends this process before anyone else's
        Path("/proc/self/oom_score_adj").write_text("1000")
    except OSError:
        pass
    t0 = time.perf_counter()
    import torch  # noqa: F401  (the imports' memory, measured apart)
    import transformers.modeling_utils  # noqa: F401

    from localjudge import builtin_metric, evaluate, load_cases, load_judge

    imported = _vm("VmHWM")
    judge = load_judge(judge_name, options=_options(dtype), cache=cache, progress=False)
    loaded, t_load = _vm("VmHWM"), time.perf_counter() - t0
    from localjudge.engine.hf import HFBackend

    assert isinstance(judge.backend, HFBackend)
    model = judge.backend.model
    if cases:
        chosen = load_cases(DEMO)[:cases]
        result = evaluate(chosen, [builtin_metric(m) for m in METRICS], judge, progress=False)
        prompts = [f"Question: {c.input}\nAnswer:" for c in chosen]
        logprobs = judge.loglikelihood(prompts, [c.actual_output or "" for c in chosen])
    peak = _vm("VmHWM")
    if dump and cases:
        Path(dump).write_text(
            json.dumps(_dump(result, logprobs, model), indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
    print(
        json.dumps(
            {
                "imported": imported,
                "loaded": loaded,
                "peak": peak,
                "rss_end": _vm("VmRSS"),
                "weights": _weights_bytes(model, dtype),
                "held": _held_bytes(model),
                "seconds": round(time.perf_counter() - t0, 1),
                "load_seconds": round(t_load, 1),
            }
        )
    )


def _copies(cache: Path) -> dict[str, int]:
    """Each prepared copy's folder name and bytes on disk."""
    weights = cache / "weights"
    if not weights.is_dir():
        return {}
    return {
        d.name: sum(f.stat().st_size for f in d.iterdir()) for d in sorted(weights.iterdir()) if not d.name[0] == "."
    }


def _run_child(judge: str, dtype: str, cache: Path, cases: int, dump: str | None) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.memory.memory", "--child", judge, dtype, str(cache), str(cases)]
    if dump:
        cmd += ["--dump-to", dump]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{judge} {dtype} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(judges, dtypes, cases: int, dump_dir: Path | None, save) -> list[dict]:
    """Every row (`save(rows)` after each, so a run cut short keeps what it measured)."""
    rows: list[dict] = []
    for judge in judges:
        with tempfile.TemporaryDirectory(prefix="lj-memory-") as tmp:
            cache = Path(tmp)  # empty: the judge's first run writes its copies here
            for dtype in dtypes:
                for phase in PHASES:
                    before = set(_copies(cache))
                    dump = str(dump_dir / f"{judge}-{dtype}-{phase}.json") if dump_dir else None
                    run = _run_child(judge, dtype, cache, cases, dump)
                    copies = _copies(cache)
                    if (phase == "cold") != bool(set(copies) - before):
                        did = "did not write" if phase == "cold" else "wrote"
                        raise SystemExit(f"{judge} {dtype}: a {phase} run that {did} a prepared copy")
                    run["copies"] = copies
                    rows.append({"judge": judge, "dtype": dtype, "phase": phase, **run})
                    save(rows)
                    print(
                        f"{judge} {dtype} {phase}: peak {run['peak'] / 2**30:.2f} GiB, imports "
                        f"{run['imported'] / 2**30:.2f}, weights {run['weights'] / 2**30:.2f}, "
                        f"ratio {_ratio(run):.2f}, {run['seconds']} s",
                        flush=True,
                    )
    return rows


def _ratio(row: dict) -> float:
    """(peak - the imports' peak) / the weights in the dtype run: the target is at most 2."""
    return (row["peak"] - row["imported"]) / row["weights"]


def _gib(n: int | None) -> str:
    return "" if n is None else f"{n / 2**30:.2f}"


def report(data: dict) -> str:
    labels = list(data["labels"])
    lines = [
        "# Peak resident memory of a run, against the judge's weights",
        "",
        "Written by `python -m benchmarks.memory.memory` (see its docstring). Each row is a fresh process: "
        "import, `load_judge`, then G-Eval `correctness`, `faithfulness_pmi` and the log-likelihood of the "
        "answer on the first cases of the bundled RAG demo. *cold*: the judge's first run, from an empty cache "
        "folder (its load writes the prepared copy from the GGUF); *warm*: a later run, the load from the copy. "
        "*peak*: VmHWM of the process (GiB); *imports*: the peak after importing torch, transformers and "
        "localjudge, before the load; *weights*: the judge's parameters at the bytes of the dtype it runs; "
        "*held*: the bytes its parameters take as loaded (mixed precision keeps the embeddings and the output "
        "layer in fp32); *ratio*: (peak - imports) / weights, the target at most 2; *copies*: the prepared "
        "copies on disk (GiB). Times depend on how busy the host was: compare memory, not times. Older labels "
        "measured a cold row as the load alone (their notes say).",
        "",
        "## Hosts",
        "",
        "| bf16 support | what it means | measured in |",
        "|---|---|---|",
    ]
    for kind, meaning in HOSTS.items():
        which = [label for label in labels if data["labels"][label]["machine"].get("bf16") == kind]
        lines.append(f"| {kind} | {meaning} | {', '.join(which) or 'not measured'} |")
    lines.append("")
    for label in labels:
        run = data["labels"][label]
        bf16 = run["machine"].get("bf16", "not recorded")
        cases = run.get("cases")
        workload = "the load alone" if cases == 0 else f"{cases} RAG demo case(s)" if cases else "see the note"
        lines += [
            f"## {label}",
            "",
            f"{run['note']}",
            "",
            f"Workload: {workload}. Machine: {json.dumps(run['machine'])}",
            "",
        ]
        lines += [
            "| judge | dtype | host bf16 | phase | weights | held | imports | after load | peak | ratio "
            "| copies on disk | seconds |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in run["rows"]:
            copies = sum(r.get("copies", {}).values()) or None
            held = r.get("held")
            lines.append(
                f"| {r['judge']} | {r['dtype']} | {bf16} | {r['phase']} | {_gib(r['weights'])} | {_gib(held)} | "
                f"{_gib(r['imported'])} | {_gib(r['loaded'])} | {_gib(r['peak'])} | {_ratio(r):.2f} | "
                f"{_gib(copies)} | {r['seconds']} |"
            )
        lines.append("")
    return "\n".join(lines) + "\n" + kept_section(RESULTS_MD)


def publish(data: dict, labels: list[str]) -> None:
    """The labels' cold and warm peaks per judge and dtype, for `localjudge models`: each from the first
    label that measured it (e.g. a rerun of some rows after a change, then the full run before it)."""
    runs = [data["labels"][label] for label in labels]
    hosts = {(r["machine"]["cpu"], r["machine"]["cores"], r["machine"]["simd"], r["machine"]["bf16"]) for r in runs}
    workloads = {r["cases"] for r in runs}
    if len(hosts) != 1 or len(workloads) != 1:
        raise SystemExit(f"the labels {labels} were measured on different hosts or workloads: {hosts}, {workloads}")
    peaks: dict[str, dict[str, dict[str, int]]] = {}
    for run in runs:
        for r in run["rows"]:
            if r["phase"] in PHASES:
                peaks.setdefault(r["judge"], {}).setdefault(r["dtype"], {}).setdefault(r["phase"], r["peak"])
    cpu, cores, simd, bf16 = hosts.pop()
    cases = workloads.pop()
    doc = {
        "source": "benchmarks/memory/memory_results.md",
        "labels": labels,
        "machine": f"{cpu}, {cores} cores, {simd}, bf16 {bf16}",
        "workload": "loading the judge" if cases == 0 else f"loading the judge and scoring {cases} RAG demo case(s)",
        "dtypes": list(DTYPES),
        "peak_rss_bytes": peaks,
    }
    PUBLISHED.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs=4, metavar=("JUDGE", "DTYPE", "CACHE", "CASES"), help=argparse.SUPPRESS)
    parser.add_argument("--dump-to", help=argparse.SUPPRESS)
    parser.add_argument("--judges", nargs="+", default=list(JUDGES))
    parser.add_argument("--dtypes", nargs="+", default=list(DTYPES), choices=DTYPES)
    parser.add_argument("--cases", type=int, default=1, help="RAG demo cases in the workload")
    parser.add_argument("--label", help="name of this set of runs in the results (e.g. before, after)")
    parser.add_argument("--note", default="", help="what the code measured was (a commit, a change)")
    parser.add_argument("--dump", type=Path, help="folder for each run's scores and likelihoods (JSON)")
    parser.add_argument("--report", action="store_true", help="rewrite the markdown from the JSON")
    parser.add_argument("--publish", nargs="+", metavar="LABEL", help="write the labels' peaks for `localjudge models`")
    args = parser.parse_args()
    if args.child:
        judge, dtype, cache, cases = args.child
        child(judge, dtype, cache, int(cases), args.dump_to)
        return
    data = json.loads(RESULTS_JSON.read_text()) if RESULTS_JSON.exists() else {"labels": {}}
    if args.publish:
        publish(data, args.publish)
        return
    if not args.report:
        if not args.label:
            parser.error("--label names the runs (e.g. --label before)")
        if args.dump:
            args.dump.mkdir(parents=True, exist_ok=True)
        entry = data["labels"].setdefault(args.label, {"note": args.note, "rows": []})
        entry.update(note=args.note or entry["note"], machine=machine(*MACHINE), cases=args.cases)
        earlier = list(entry["rows"])

        def save(rows: list[dict]) -> None:
            new = {(x["judge"], x["dtype"], x["phase"]) for x in rows}
            entry["rows"] = [r for r in earlier if (r["judge"], r["dtype"], r["phase"]) not in new] + rows
            RESULTS_JSON.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")

        measure(args.judges, args.dtypes, args.cases, args.dump, save)
    RESULTS_MD.write_text(report(data), encoding="utf-8")


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
