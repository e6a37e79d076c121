"""How a report page of 50,000 records fares in headless Chromium: its size, first render and a filter.

The issue's bar: a page of at most 25 MB that first renders within 3 s and filters within 300 ms in
headless Chromium on 2 cores. The records are synthetic but of `eval`'s own shape (a fake judge's
record, copied with varied scores, distributions, valid mass and 5% unscored): two judges, two
G-Eval metrics, 12,500 cases each, with the cases' fields (question, answer, reference) on the page.

The page times itself (`localjudge/report/assets/report.js`): `data-render-ms` is when its first
render ended, from the start of navigation (HTML parse, data parse, summaries, the table);
`data-filter-ms` the script's time to select, sort and rebuild the table's rows for a filter (the
view in the URL fragment: the same function a change of a control runs). Chromium runs pinned to
two cores (`taskset -c 0,1`), three rounds each, median kept; the wall time of each whole browser
run (start to exit) is recorded beside.

    python -m benchmarks.report.page_load            # writes page_load_results.{md,json}
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.lib.common import host_load, kept_section, machine
from localjudge import builtin_metric, evaluate, fake_judge, load_cases
from localjudge.report import ReportOptions, write_report

HERE = Path(__file__).resolve().parent
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND",
]
FILTER = "metric=correctness&judge=judge-a&min=0.3&max=0.7&sort=score&dir=desc"


def template(folder: Path) -> dict:
    """One real record of `eval` by a fake judge, the shape every synthetic record copies."""
    case = {"id": "t", "input": "q?", "actual_output": "a", "expected_output": "a"}
    (folder / "t.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    judge = fake_judge(lambda p: {"4": 0.5, "5": 0.3, "3": 0.2}, name="judge-a")
    evaluate(load_cases(folder / "t.jsonl"), [builtin_metric("correctness")], judge, out=folder / "t_results.jsonl")
    return json.loads((folder / "t_results.jsonl").read_text(encoding="utf-8"))


def synthesise(folder: Path, cases: int, seed: int) -> list[Path]:
    """Two judges' results files of `cases` cases on two metrics each (4 × `cases` records), and the cases."""
    rng = random.Random(seed)
    base = template(folder)
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as f:
        for k in range(cases):
            words = " ".join(rng.choice(["the", "bridge", "opened", "in", "March", "1932", "river"]) for _ in range(25))
            case = {"id": f"case-{k:05d}", "input": f"Question {k}: {words}?", "actual_output": words}
            f.write(json.dumps({**case, "expected_output": words[:60], "human_correctness": rng.randint(1, 5)}) + "\n")
    paths = []
    for judge in ("judge-a", "judge-b"):
        path = folder / f"{judge}.jsonl"
        with path.open("w", encoding="utf-8") as f:
            for metric in ("correctness", "faithfulness"):
                for k in range(cases):
                    f.write(json.dumps(_record(base, rng, f"case-{k:05d}", metric, judge)) + "\n")
        paths.append(path)
    return paths


def _record(base: dict, rng: random.Random, case_id: str, metric: str, judge: str) -> dict:
    weights = [rng.random() ** 2 for _ in range(5)]
    total = sum(weights)
    dist = {str(s + 1): w / total for s, w in enumerate(weights)}
    expected = sum((s + 1) * p for s, p in enumerate(dist.values()))
    unscored = rng.random() < 0.05
    mass = rng.uniform(0.01, 0.09) if unscored else rng.uniform(0.5, 1.0)
    score = None if unscored else (expected - 1) / 4
    return {
        **base,
        "case_id": case_id,
        "metric": metric,
        "score": score,
        "raw_score": None if unscored else expected,
        "passed": None if score is None else score >= 0.5,
        "distribution": dist,
        "valid_mass": mass,
        "unscored_reason": f"valid mass {mass:.3f} < min_valid_mass 0.1" if unscored else None,
        "extra": {"human_correctness": rng.randint(1, 5)},
        "judge": {**base["judge"], "name": judge},
        "metric_spec": {**base["metric_spec"], "name": metric},
    }


def browse(page: Path, fragment: str) -> tuple[dict[str, float], float]:
    """(the page's own timings, the browser run's wall seconds) of one headless Chromium run."""
    with tempfile.TemporaryDirectory() as profile:
        start = time.perf_counter()
        done = subprocess.run(
            ["taskset", "-c", "0,1", shutil.which("chromium") or "chromium", *FLAGS, f"--user-data-dir={profile}",
             "--dump-dom", f"{page.as_uri()}#{fragment}"],
            capture_output=True, text=True, timeout=300, check=True,
        )  # fmt: skip
        wall = time.perf_counter() - start
    body = re.search(r"<body([^>]*)>", done.stdout)
    assert body is not None, "no body in the dumped page"
    timings = {k: float(v) for k, v in re.findall(r'data-(render-ms|filter-ms)="([\d.]+)"', body.group(1))}
    assert "render-ms" in timings, "the page did not finish its first render"
    return timings, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=12_500, help="Cases per judge and metric (4 records each).")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = synthesise(folder, args.cases, seed=0)
        page = folder / "report.html"
        start = time.perf_counter()
        report = write_report(paths, page, ReportOptions(), load_cases(folder / "cases.jsonl"))
        build = time.perf_counter() - start
        rounds = {"plain": [browse(page, "") for _ in range(args.rounds)]}
        rounds["filtered"] = [browse(page, FILTER) for _ in range(args.rounds)]
    render = statistics.median(t["render-ms"] for t, _ in rounds["plain"])
    filter_ms = statistics.median(t["filter-ms"] for t, _ in rounds["filtered"])
    wall = statistics.median(w for _, w in rounds["plain"])
    results = {
        "machine": machine("python"),
        "chromium": subprocess.run(["chromium", "--version"], capture_output=True, text=True).stdout.strip(),
        "host_load": host_load(load),
        "records": report.records,
        "page_bytes": report.size_bytes,
        "build_seconds": round(build, 1),
        "first_render_ms": {"median": render, "rounds": [t["render-ms"] for t, _ in rounds["plain"]]},
        "filter_ms": {"median": filter_ms, "rounds": [t["filter-ms"] for t, _ in rounds["filtered"]], "view": FILTER},
        "browser_run_wall_s": {"median": round(wall, 2), "rounds": [round(w, 2) for _, w in rounds["plain"]]},
        "bar": {"page_mb": 25, "first_render_ms": 3000, "filter_ms": 300},
    }
    (HERE / "page_load_results.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    md = HERE / "page_load_results.md"
    md.write_text(_markdown(results) + kept_section(md), encoding="utf-8")  # the hand-written notes stay
    print(_markdown(results))


def _markdown(r: dict) -> str:
    m = r["machine"]
    size_mb = r["page_bytes"] / 1e6
    render, filter_ms = r["first_render_ms"]["median"], r["filter_ms"]["median"]
    rows = [
        ("page size", f"{size_mb:.1f} MB", "25 MB", size_mb <= 25),
        ("first render (from navigation start)", f"{render:.0f} ms", "3000 ms", render <= 3000),
        (f"a filter: select, sort and rebuild the rows (`#{r['filter_ms']['view']}`)", f"{filter_ms:.0f} ms", "300 ms",
         filter_ms <= 300),
    ]  # fmt: skip
    table = "\n".join(f"| {what} | {got} | {bar} | {'within' if ok else 'MISSED'} |" for what, got, bar, ok in rows)
    rounds = len(r["first_render_ms"]["rounds"])
    return f"""# A report page of {r["records"]:,} records in headless Chromium

Made by `python -m benchmarks.report.page_load` on {m["cpu"]}, {m["cores"]} cores, Python {m["python"]};
{r["chromium"]}, pinned to 2 cores (`taskset -c 0,1`); {r["host_load"]}.
Records: {r["records"]:,}, synthetic, of `eval`'s shape (two judges × two G-Eval metrics × 12,500 cases, 5%
unscored), the cases' fields on the page. Each figure is the median of {rounds} browser runs.

| | measured | the bar | |
|---|---|---|---|
{table}

Beside them: `write_report` built the page in {r["build_seconds"]} s (Python; reading and validating the
records, the bootstrap intervals and `calibrate` on 12,500 pairs per judge); a whole browser run, start to
exit, took {r["browser_run_wall_s"]["median"]} s. Rounds: first render {r["first_render_ms"]["rounds"]} ms, filter
{r["filter_ms"]["rounds"]} ms.
"""


if __name__ == "__main__":
    main()
