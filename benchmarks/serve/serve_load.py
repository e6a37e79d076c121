"""`localjudge serve` under load: throughput and latency with 1, 4, 8 and 16 concurrent clients, against an offline
`evaluate` of the same cases in one call, in one run; every served record checked bitwise against the offline one.

The server runs as `python -m localjudge serve` in a process of its own (the clients' threads would otherwise share
its interpreter); the offline run happens in this process, before the clients start, while the server waits idle.
Each client sends small requests (`--per-request` cases each) from a shared list until it is empty.

    python -m benchmarks.serve.serve_load                # smollm2-135m, fluency, the 48 SummEval demo cases
    python -m benchmarks.serve.serve_load --judge qwen2.5-coder-0.5b --metric coherence --clients 1 8

Writes serve_results.{md,json} beside this script.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from benchmarks.lib.common import machine

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "localjudge" / "examples" / "summeval_demo.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--judge", default="smollm2-135m")
    ap.add_argument("--metric", default="fluency")
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 4, 8, 16])
    ap.add_argument("--per-request", type=int, default=1, help="Cases per request.")
    ap.add_argument("--cases", type=int, default=48, help="First N cases of the demo file.")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch-window-ms", type=float, default=None, help="The server's; default its own.")
    ap.add_argument(
        "--rounds", type=int, default=3, help="Rounds of (offline run, every client count); medians are reported."
    )
    ap.add_argument("--note", default="", help="Said in the results file (e.g. 'host shared with a training job').")
    args = ap.parse_args()

    from localjudge import load_judge
    from localjudge.io.cases import load_cases
    from localjudge.metrics import builtin_metric
    from localjudge.runs.evaluate import evaluate

    cases = load_cases(DATA)[: args.cases]
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()[: args.cases]]
    batches = [rows[k : k + args.per_request] for k in range(0, len(rows), args.per_request)]
    bodies = [{"cases": b, "metrics": [args.metric]} for b in batches]
    server, url = _start_server(args.judge, args.device, args.batch_window_ms)
    offline_rates: list[float] = []
    measured: dict[int, list[dict]] = {c: [] for c in args.clients}
    try:
        judge = load_judge(args.judge, device=args.device, dtype="float32")
        metric = builtin_metric(args.metric)
        evaluate(cases[:2], [metric], judge, progress=False)  # warm-up
        _send(url, "/v1/evaluate", [{"cases": rows[:2], "metrics": [args.metric]}], 1)  # warm-up
        want: dict[str, str] = {}
        # rounds interleave the offline run with the served ones, so that a slower minute of a shared host
        # lands on both sides of a ratio; each ratio is a round's served rate over that round's offline rate
        for k in range(args.rounds):
            start = time.perf_counter()
            offline = evaluate(cases, [metric], judge, progress=False)
            offline_rates.append(len(rows) / (time.perf_counter() - start))
            lines = {r.case_id: json.dumps(r.model_dump(mode="json"), ensure_ascii=False) for r in offline.records}
            assert not want or lines == want, "offline runs of the same cases differ"
            want = lines
            for c in args.clients:
                wall, latencies, answers = _send(url, "/v1/evaluate", bodies, c)
                run = {
                    "cases_per_s": len(rows) / wall,
                    "ratio_to_offline": (len(rows) / wall) / offline_rates[-1],
                    "p50_s": statistics.median(latencies),
                    "p95_s": _quantile(latencies, 0.95),
                    "bitwise_equal_to_offline": all(
                        _lines(got) == [want[r["id"]] for r in b] for b, got in zip(batches, answers)
                    ),
                }
                measured[c].append(run)
                print({"round": k + 1, "clients": c, **run}, flush=True)
        del judge
    finally:
        server.terminate()
        server.wait(60)
    runs = [_summary(c, len(batches), measured[c]) for c in args.clients]
    result = {
        "judge": args.judge,
        "metric": args.metric,
        "cases": len(rows),
        "per_request": args.per_request,
        "rounds": args.rounds,
        "offline_cases_per_s": statistics.median(offline_rates),
        "offline_cases_per_s_each_round": offline_rates,
        "runs": runs,
        "machine": machine("torch_threads", "torch", "python"),
        "note": args.note,
    }
    (HERE / "serve_results.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (HERE / "serve_results.md").write_text(_markdown(result), encoding="utf-8")


def _start_server(judge: str, device: str, window_ms: float | None = None) -> tuple[subprocess.Popen, str]:
    cmd = [sys.executable, "-m", "localjudge", "serve", "--judge", judge, "--device", device, "--dtype", "float32"]
    cmd += [] if window_ms is None else ["--batch-window-ms", str(window_ms)]
    proc = subprocess.Popen(
        [*cmd, "--port", "0", "--no-progress", "--max-queue", "256"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(HERE.parents[1])},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if " at http" not in line:
        proc.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return proc, line.split(" at ")[1].split(" ")[0].rstrip(",")


def _send(url: str, path: str, bodies: list[dict], clients: int):
    """Every body POSTed to `path` by `clients` threads; (wall seconds, latencies, JSON answers in body order)."""
    parts = urlsplit(url)
    answers: list = [None] * len(bodies)
    latencies: list[float] = []
    todo = list(range(len(bodies)))
    lock = threading.Lock()

    def client() -> None:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=3600)
        while True:
            with lock:
                if not todo:
                    break
                k = todo.pop(0)
            t = time.perf_counter()
            conn.request("POST", path, body=json.dumps(bodies[k]), headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            text = resp.read().decode()
            assert resp.status == 200, text
            with lock:
                latencies.append(time.perf_counter() - t)
            answers[k] = json.loads(text)
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start, latencies, answers


def _summary(clients: int, requests: int, rounds: list[dict]) -> dict:
    """One client count's rounds: medians, the ratio's range, and whether every round was bitwise."""
    ratios = [r["ratio_to_offline"] for r in rounds]
    return {
        "clients": clients,
        "requests": requests,
        "cases_per_s": statistics.median(r["cases_per_s"] for r in rounds),
        "ratio_to_offline": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "p50_s": statistics.median(r["p50_s"] for r in rounds),
        "p95_s": statistics.median(r["p95_s"] for r in rounds),
        "bitwise_equal_to_offline": all(r["bitwise_equal_to_offline"] for r in rounds),
        "rounds": rounds,
    }


def _lines(answer: dict) -> list[str]:
    """An /v1/evaluate answer's records as the lines `eval` writes."""
    return [json.dumps(r, ensure_ascii=False) for r in answer["records"]]


def _quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def _markdown(r: dict) -> str:
    m = r["machine"]
    lines = [
        "# `localjudge serve` under load",
        "",
        f"Judge {r['judge']} (fp32, CPU), metric {r['metric']}, the first {r['cases']} cases of "
        f"`localjudge/examples/summeval_demo.jsonl`, {r['per_request']} case(s) per request. "
        f"Machine: {m['cpu']}, {m['cores']} cores, torch {m['torch']} ({m['torch_threads']} threads), "
        f"Python {m['python']}. {r['note']}",
        "",
        f"{r['rounds']} rounds, each an offline `evaluate` of all the cases in one call, then every client count; "
        "each ratio is a round's served rate over that round's offline rate, and the table gives medians over the "
        f"rounds (the ratio's range beside it). Offline: {r['offline_cases_per_s']:.2f} cases/s (median; rounds: "
        + ", ".join(f"{x:.2f}" for x in r["offline_cases_per_s_each_round"])
        + ").",
        "",
        "| clients | requests | cases/s | ratio to offline | ratio range | p50 latency (s) | p95 latency (s) "
        "| bitwise as offline, every round |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in r["runs"]:
        lines.append(
            f"| {run['clients']} | {run['requests']} | {run['cases_per_s']:.2f} | {run['ratio_to_offline']:.2f} | "
            f"{run['ratio_min']:.2f}–{run['ratio_max']:.2f} | {run['p50_s']:.2f} | {run['p95_s']:.2f} | "
            f"{run['bitwise_equal_to_offline']} |"
        )
    lines += [
        "",
        "Command: `python -m benchmarks.serve.serve_load` (see its docstring); raw figures in serve_results.json.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
