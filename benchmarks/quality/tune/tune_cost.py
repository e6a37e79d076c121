"""What a cold `localjudge tune` costs: wall time from the command to the folder, memory, adapter size.

Each judge is tuned from nothing (a new feature cache: the frozen layers run on every pack) for
`consistency` on the first `--articles` SummEval dev articles (16 summaries each, grouped by
article, one held out for early stopping), by the command a user runs, in its own process, so the
wall time holds loading, features, training and validation, and the peak resident memory is the
process's (GNU time's maximum RSS, beside the manifest's own figure). A small subset on purpose:
what is measured is the cost per token and the memory bound, which the pack size sets, not the
agreement (the held-out studies beside this script report that).

    python -m benchmarks.quality.tune.tune_cost --judges qwen2.5-coder-0.5b qwen2.5-coder-1.5b --articles 3
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.lib.common import SUMMEVAL_DATA, host_load, kept_section, machine

HERE = Path(__file__).resolve().parent


def outputs(articles: int) -> tuple[Path, Path]:
    """The results files of a run on `articles` articles: one pair per subset size, so runs of
    different sizes (the 1.5B's memory bound, the 0.5B's 400-case time) keep their own notes."""
    stem = f"tune_cost_{articles}_articles_results"
    return HERE / f"{stem}.md", HERE / f"{stem}.json"


def write_cases(path: Path, articles: int) -> int:
    """The first `articles` SummEval dev articles' summaries as `tune` reads them; the number of cases."""
    rows = json.loads(Path(SUMMEVAL_DATA).read_text(encoding="utf-8"))
    docs = list(dict.fromkeys(r["doc_id"] for r in rows))[:articles]
    kept = [r for r in rows if r["doc_id"] in docs]
    with open(path, "w", encoding="utf-8") as f:
        for r in kept:
            case = {
                "id": f"{r['doc_id']}/{r['system_id']}",
                "input": r["source"],
                "actual_output": r["system_output"],
                "doc_id": r["doc_id"],
                "human_consistency": r["scores"]["consistency"],
            }
            f.write(json.dumps(case) + "\n")
    return len(kept)


def tune_once(judge: str, cases: Path, out: Path, epochs: int) -> dict:
    """One cold tune in its own process: wall seconds, max RSS (GiB), the manifest's figures or the error."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [
        sys.executable, "-m", "localjudge", "tune", str(cases), "--method", "lora", "--metric", "consistency",
        "--judge", judge,
        "--human", "human_consistency", "--group", "doc_id", "--out", str(out), "--epochs", str(epochs),
        "--features", str(out.with_name(out.name + "-features")),
    ]  # fmt: skip
    shutil.rmtree(out.with_name(out.name + "-features"), ignore_errors=True)
    t0 = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    row: dict = {"judge": judge, "wall_seconds": round(wall, 1), "rc": proc.returncode}
    row["max_rss_gib"] = round(int(rss.group(1)) / 2**20, 2) if rss else None
    manifest = out / "tune.json"
    if proc.returncode == 0 and manifest.is_file():
        m = json.loads(manifest.read_text())
        row |= {k: m[k] for k in ("tokens_per_second", "peak_memory_gib", "best_epoch", "train_cases")}
        row["adapter_mib"] = round((out / "adapter.safetensors").stat().st_size / 2**20, 2)
        row["history"] = [(h["epoch"], h["agreement"], h["valid_mass"]) for h in m["history"]]
    else:
        lines = [x for x in proc.stderr.splitlines() if x.strip() and not x.startswith("\t")]
        row["error"] = next((x for x in lines if "Error" in x or "error" in x), lines[-1] if lines else "")
        state = out / "checkpoint" / "state.json"
        if state.is_file():  # a tune that kept no adapter still trained: its speed is in the checkpoint
            st = json.loads(state.read_text())
            row["tokens_per_second"] = round(st["tokens"] / max(st["seconds"], 1e-9), 1)
    return row


def write(result: dict) -> None:
    out_md, out_json = outputs(result["articles"])
    out_json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    m = result["machine"]
    lines = [
        "# The cost of a cold `localjudge tune`",
        "",
        f"One run of `{result['command']}` on {m['cpu']}, {m['cores']} cores; {result['host']}.",
        "",
        f"Each judge tuned from nothing for `consistency` on the first {result['articles']} SummEval dev articles "
        f"({result['cases']} summaries, a fifth of the articles and at least one held out for early stopping), at "
        f"most {result['epochs']} "
        "epoch(s), default settings otherwise (4 top layers, LoRA rank 16, packs of at most 4,096 tokens), by the "
        "CLI in its own process. Wall: from the command to the folder (load, features, training, validation). "
        "Tokens/s: packed tokens per second of training steps (the manifest's). Peak: maximum RSS of the process "
        "(GNU time) and the manifest's own reading.",
        "",
        "| judge | wall (s) | training tokens/s | max RSS GiB | manifest peak GiB | adapter MiB | epoch kept | "
        "outcome |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        outcome = r.get("error") or "validation ρ " + ", ".join(f"{a:.3f}" for _, a, _ in r["history"] if a is not None)
        lines.append(
            f"| {r['judge']} | {r['wall_seconds']} | {r.get('tokens_per_second', 'n/a')} | {r['max_rss_gib']} | "
            f"{r.get('peak_memory_gib', 'n/a')} | {r.get('adapter_mib', 'n/a')} | {r.get('best_epoch', 'n/a')} | "
            f"{outcome} |"
        )
    out_md.write_text("\n".join(lines) + "\n" + kept_section(out_md), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judges", nargs="+", default=["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
    ap.add_argument("--articles", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--work", type=Path, default=Path("/tmp/localjudge-tune-cost"))
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    cases = args.work / "cases.jsonl"
    n = write_cases(cases, args.articles)
    rows = []
    for judge in args.judges:
        rows.append(tune_once(judge, cases, args.work / judge, args.epochs))
        print(json.dumps(rows[-1]), flush=True)
    result = {
        "command": "python -m benchmarks.quality.tune.tune_cost " + " ".join(sys.argv[1:]),
        "machine": machine("torch_threads", "torch"),
        "host": host_load(load),
        "articles": args.articles,
        "cases": n,
        "epochs": args.epochs,
        "rows": rows,
    }
    write(result)
    print(outputs(args.articles)[0].read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
