"""Capture what localjudge's user-facing jobs write, to show a refactor changes no result.

Runs, with the embedded judges on CPU in fp32, every job a user runs: the demo, the RAG demo, an
eval of each metric kind, panels (mean and agreement pooling, pointwise and pairwise), a ranking,
calibration (agreement on three results files, a hybrid, a verdict), the bias lab (judging and
re-analysis with a panel), a served evaluation over HTTP (evaluate, score, completions) and a
one-epoch tune (on 48 summaries it keeps no adapter; its training history is compared). Each
job's files and printed output land in --out; `--compare A B` then says, file by file, whether
two captures are equal byte for byte once the fields that hold time (seconds, dates, rates) are
blanked.

    .venv/bin/python -m benchmarks.design.capture --out /tmp/before
    ... change the code ...
    .venv/bin/python -m benchmarks.design.capture --out /tmp/after
    .venv/bin/python -m benchmarks.design.capture --compare /tmp/before /tmp/after

The command lines live in `jobs`; a change that renames a command updates them in the same commit
and says so, so that before and after run the same work. (The fits label coherence: consistency's
labels on the 48 bundled summaries are too often 5 to fit.) The first capture, of the code before
#48 (7cd9ec1), ran `calibrate PATH --hybrid/--verdict ... --save-hybrid/--save-verdict` and
`bias RESPONSES --verdicts`, the same work under the commands' former names (`bias analyse
--judgments` since 588d714). The names #48 changed in what the commands write (one word
per meaning, one bias report layout) are listed in `RENAMED_TEXT`, `RENAMED_KEYS` and `renamed`, and
applied to both captures; the comparison forgives nothing else. #71 renamed tune's `--rank` `--lora-rank`
(the job line follows) and its settings' `rank` and `min_valid_mass` `lora_rank` and
`min_tuned_valid_mass` (in the tune's checkpoint state.json; `renamed` maps the old keys).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
EXAMPLES = ROOT / "localjudge" / "examples"
# `python -m localjudge` with this tree first on the path: a capture runs the code of the tree it lives in.
CLI = [sys.executable, "-m", "localjudge"]

# Keys whose values are times, dates or rates: blanked before comparing. Anything else must match.
TIME_KEY = re.compile(
    r"^(seconds|elapsed|created|created_at|started|finished|timestamp|duration|date|time|timings|throughput)$"
    r"|_(seconds|s|ms|per_s|at)$"
)
# Per-request ids of the OpenAI-compatible endpoints: random by design.
REQUEST_ID = re.compile(r"\b(chat)?cmpl-[0-9a-f]{8,}")
TIME_TEXT = re.compile(
    r"\d+(\.\d+)?\s?(s|ms|min|h)\b|\d+(\.\d+)?(it|items|cases|tok)/s|\d{4}-\d{2}-\d{2}[T ][\d:.]+\S*"
)


def inputs(out: Path) -> dict[str, Path]:
    """Small input files cut from the bundled examples (first article's 16 summaries, pairs of them)."""
    rows = [json.loads(x) for x in (EXAMPLES / "summeval_demo.jsonl").read_text().splitlines() if x.strip()]
    first = [r for r in rows if r["doc_id"] == rows[0]["doc_id"]]
    pairs = [
        {
            "id": f"{a['id']}|{b['id']}",
            "input": a["input"],
            "output_1": a["actual_output"],
            "output_2": b["actual_output"],
            "human_preferred": 1 if a["human_consistency"] >= b["human_consistency"] else 2,
        }
        for a, b in zip(first[0:8:2], first[1:8:2])
    ]
    files = {"article": out / "in_article.jsonl", "pairs": out / "in_pairs.jsonl"}
    files["article"].write_text("".join(json.dumps(r) + "\n" for r in first))
    files["pairs"].write_text("".join(json.dumps(r) + "\n" for r in pairs))
    return files


def jobs(out: Path, files: dict[str, Path]) -> list[tuple[str, list[str]]]:
    """Each job's name and command line (the arguments after `localjudge`), in the order they run."""
    art, pairs, demo = files["article"], files["pairs"], EXAMPLES / "summeval_demo.jsonl"
    rag, study = EXAMPLES / "rag_demo.jsonl", ROOT / "benchmarks/bias/self_preference/summaries"
    s = "--judge smollm2-135m"  # named where the default would be the 1.5B judge (minutes per job on 2 cores)
    two = f"{s} --metric consistency_likelihood --metric consistency_tokens"
    human = "--human human_consistency --no-plots --json"
    lines = {
        "demo": f"demo --out {out}/demo.jsonl --no-progress",
        "rag": f"eval {rag} --metric correctness --metric faithfulness --out {out}/rag.jsonl",
        "kind_pmi": f"eval {rag} --metric faithfulness_pmi --limit 4 --out {out}/kind_pmi.jsonl",
        "kind_pointwise": f"eval {art} --limit 6 --out {out}/kind_pointwise.jsonl --metric consistency "
        "--metric fluency --metric consistency_likelihood --metric consistency_tokens "
        "--metric consistency_entailment --metric rouge_l",
        "kind_pairwise": f"eval {pairs} --metric pairwise --metric pairwise_likelihood {s} "
        f"--out {out}/kind_pairwise.jsonl",
        "kind_two": f"eval {demo} {two} --out {out}/two.jsonl",
        "panel_mean": f"eval {art} --limit 6 --metric consistency {s} --judge gemma3-270m --panel mean "
        f"--out {out}/panel_mean.jsonl",
        "panel_agreement": f"eval {art} --limit 6 --metric consistency {s} --judge gemma3-270m "
        f"--panel agreement --out {out}/panel_agreement.jsonl",
        "panel_pairwise": f"eval {pairs} --metric pairwise {s} --judge gemma3-270m --panel mean "
        f"--out {out}/panel_pairwise.jsonl",
        "rank": f"rank {art} --metric pairwise {s} --group doc_id --budget 2 --system system_id "
        f"--out {out}/rank.jsonl --no-progress --json",
        "calibrate": f"calibrate agreement {out}/demo.jsonl {human} --group doc_id",
        "calibrate_two": f"calibrate agreement {out}/two.jsonl --metric consistency_tokens {human} --group doc_id",
        "calibrate_rank": f"calibrate agreement {out}/rank.jsonl {human} --group doc_id",
        "fit_hybrid": f"calibrate fit-hybrid {out}/two.jsonl --human human_coherence --json "
        f"--metrics consistency_likelihood,consistency_tokens --save {out}/hybrid.json",
        "fit_verdict": f"calibrate fit-verdict {out}/two.jsonl --human human_coherence --json "
        f"--metrics consistency_likelihood,consistency_tokens --pass-at 4 --save {out}/verdict.json",
        "bias_run": f"bias run {out}/in_responses.jsonl {s} --judge gemma3-270m --pairwise --out-dir {out}/bias_run "
        "--no-progress --bootstrap 200",
        "bias_analyse": f"bias analyse {study}/responses.jsonl --judgments {study} --out-dir {out}/bias_analyse "
        "--bootstrap 200 --panel three=smollm2-135m,gemma3-270m,qwen2.5-coder-1.5b",
        "tune": f"tune {demo} --method lora --metric consistency {s} --human human_consistency --group doc_id "
        f"--epochs 1 --layers 1 --lora-rank 4 --validation-share 0.34 --out {out}/tune --overwrite",
    }
    return [(name, shlex.split(line)) for name, line in lines.items()]


def bias_responses(path: Path) -> None:
    """Six responses of two generators to three prompts, cut from the bias study's answers."""
    src = ROOT / "benchmarks/bias/self_preference/answers/responses.jsonl"
    rows = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
    keep = {"smollm2-135m", "gemma3-270m"}
    ids = sorted({r["id"] for r in rows})[:3]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows if r["id"] in ids and r["generator"] in keep))


def serve(out: Path, files: dict[str, Path]) -> None:
    """A served evaluation: `localjudge serve`, then /v1/evaluate and /v1/score over HTTP."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (out / "serve.log").open("w")
    proc = subprocess.Popen(
        [*CLI, "serve", "--judge", "smollm2-135m", "--port", str(port), "--no-progress"],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=_env(),
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                urllib.request.urlopen(base + "/health", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        cases = [json.loads(x) for x in files["article"].read_text().splitlines()[:3]]
        for name, path, body in [
            ("serve_evaluate", "/v1/evaluate", {"metrics": ["consistency"], "cases": cases}),
            ("serve_score", "/v1/score", {"prompts": ["Rate this answer from 1 to 5. Score:"], "low": 1, "high": 5}),
            (
                "serve_completions",
                "/v1/completions",
                {"prompt": "The capital of France is", "max_tokens": 4, "logprobs": 3},
            ),
        ]:
            req = urllib.request.Request(
                base + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
            )
            try:
                with urllib.request.urlopen(req, timeout=600) as r:
                    (out / f"{name}.json").write_bytes(r.read())
            except urllib.error.HTTPError as e:
                (out / f"{name}.json").write_text(f"HTTP {e.code}\n{e.read().decode()}")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
        log.close()


def _env() -> dict[str, str]:
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return dict(os.environ, PYTHONPATH=path, TQDM_DISABLE="1", TRANSFORMERS_VERBOSITY="error")


def capture(out: Path, only: list[str] | None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "tree.txt").write_text(str(ROOT) + "\n")
    files = inputs(out)
    bias_responses(out / "in_responses.jsonl")
    env = _env()
    for name, argv in jobs(out, files):
        if only and name not in only:
            continue
        start = time.perf_counter()
        r = subprocess.run([*CLI, *argv], capture_output=True, text=True, env=env, cwd=out)
        (out / f"{name}.stdout").write_text(r.stdout)
        (out / f"{name}.stderr").write_text(r.stderr)
        print(f"{name}: exit {r.returncode} in {time.perf_counter() - start:.0f}s", flush=True)
    if not only or "serve" in only:
        start = time.perf_counter()
        serve(out, files)
        print(f"serve: {time.perf_counter() - start:.0f}s", flush=True)
    tune = out / "tune"
    if tune.is_dir():
        (out / "tune_files.txt").write_text(
            "".join(
                f"{p.relative_to(tune)} {hashlib.sha256(p.read_bytes()).hexdigest()}\n"
                for p in sorted(tune.rglob("*"))
                if p.is_file() and p.suffix in {".safetensors", ".bin"}
            )
        )


def blank(value: object, key: str = "") -> object:
    """The value with time-like keys set to None and times in strings masked."""
    if TIME_KEY.search(key.lower()):
        return None
    if isinstance(value, dict):
        return {k: blank(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [blank(v) for v in value]
    if isinstance(value, str):
        return REQUEST_ID.sub("<id>", TIME_TEXT.sub("<t>", value))
    return value


# Names #48 changed in what the commands write, each the same value under its new name: applied to both
# captures, so a capture from before a rename compares with one from after it. Nothing else is forgiven.
RENAMED_TEXT = [
    ("its verdict flips", "its judgment flips"),  # bias sentences: a judge's decision is a judgment
    ("gave a verdict (its records", "gave a judgment (its records"),
    ("judge's verdicts on", "judge's judgments on"),
    ("Analysis only, of the verdicts in", "Analysis only, of the judgments in"),
    ("they are not verdicts and have no pass mark", "they are not pass/fail judgments and have no pass mark"),
    ("do not read them as verdicts", "do not read them as pass/fail judgments"),
    ("Verdict: ", "Finding: "),  # the hybrid fit's sentence (a fitted verdict's own report says "Verdict: on")
]
RENAMED_COLUMN = re.compile(r"^(case +metric +score +raw +)verdict( +note)$", re.M)  # the eval table's pass/FAIL column
RENAMED_KEYS = {"verdicts_files": "judgments_files"}
EMPTY_SECTIONS = {
    "matrix": None,
    "self_preference": [],
    "perplexity": [],
    "pairwise_self_preference": [],
    "equal_opportunity": [],
    "position": [],
    "length": [],
    "pairwise_length": [],
    "win_rates": None,
    "targets": [],
    "target_did": [],
    "panels": [],
}


def renamed(value: object) -> object:
    """The value in #48's names: keys renamed, a bias report in the one report layout (sections that are
    empty for its kind dropped, the model level's record counts dropped: they are new), the hybrid fit's
    `verdict` sentence as its `finding`, the calibration report's READY check as its `readiness`."""
    if isinstance(value, list):
        return [renamed(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {RENAMED_KEYS.get(k, k): renamed(v) for k, v in value.items()}
    if {"loss", "mass_weight", "rank", "min_valid_mass"} <= out.keys():  # tune's settings before #71 named them
        out["lora_rank"], out["min_tuned_valid_mass"] = out.pop("rank"), out.pop("min_valid_mass")
    if {"settings", "judges", "findings", "summary"} <= out.keys():  # a bias report, old or new layout
        if "kind" not in out:  # the former ModelReport
            targets, target_did = out.pop("pairwise"), out.pop("pointwise")
            out = {**out, "kind": "models", "targets": targets, "target_did": target_did}
        if out["kind"] == "models":
            for key in ("n_records", "n_unscored", "unscored_by_judge"):
                out.pop(key, None)
        out = {k: v for k, v in out.items() if not (k in EMPTY_SECTIONS and v == EMPTY_SECTIONS[k])}
    if isinstance(out.get("verdict"), str) and "held_out" in out:  # the hybrid fit's report
        out["finding"] = out.pop("verdict")
    if isinstance(out.get("verdict"), dict) and "ready" in out["verdict"]:  # the calibration report's READY check
        out["readiness"] = out.pop("verdict")
    return out


def canonical(path: Path, root: Path, tree: str) -> str:
    """A file's text to compare: JSON with times blanked, other text with times masked, the folder as <out>,
    #48's renames applied."""
    text = path.read_text(errors="replace").replace(str(root), "<out>").replace(tree, "<tree>")
    for old, new in RENAMED_TEXT:
        text = text.replace(old, new)
    text = RENAMED_COLUMN.sub(r"\1outcome\2", text)  # as wide as "verdict": the table keeps its layout
    try:
        if path.suffix == ".jsonl":
            return "".join(
                json.dumps(renamed(blank(json.loads(x))), sort_keys=True) + "\n" for x in text.splitlines() if x
            )
        if path.suffix == ".json" or (path.suffix == ".stdout" and text.lstrip().startswith("{")):
            return json.dumps(renamed(blank(json.loads(text))), sort_keys=True)
    except json.JSONDecodeError:
        pass
    return TIME_TEXT.sub("<t>", text)


def compare(a: Path, b: Path) -> int:
    """Print each file as same or different (first differing line); exit 1 when any differs."""
    skip = {".png", ".log", ".pt", ".safetensors"}
    names = sorted(
        {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
        | {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    )
    # the checkout each capture ran in: named in the files it wrote, and not a difference
    trees = [(c / "tree.txt").read_text().strip() if (c / "tree.txt").exists() else "<no tree>" for c in (a, b)]
    bad = 0
    for n in names:
        if n.suffix in skip or (n.parts[0] == "tune" and n.suffix not in {".json", ".jsonl", ".md"}):
            continue
        pa, pb = a / n, b / n
        if not pa.exists() or not pb.exists():
            print(f"ONLY IN {'after' if not pa.exists() else 'before'}: {n}")
            bad += 1
            continue
        ta, tb = canonical(pa, a, trees[0]), canonical(pb, b, trees[1])
        if ta == tb:
            print(f"same  {n}")
            continue
        bad += 1
        la, lb = ta.splitlines(), tb.splitlines()
        i = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
        print(
            f"DIFF  {n} line {i + 1}:\n  - {la[i][:300] if i < len(la) else '<end>'}\n"
            f"  + {lb[i][:300] if i < len(lb) else '<end>'}"
        )
    print(f"{len(names)} files, {bad} differ")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="folder to capture into (replaced)")
    ap.add_argument("--only", nargs="+", help="run only these jobs (names in JOBS, or serve)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        ap.error("--out or --compare is required")
    if args.out.exists() and not args.only:
        shutil.rmtree(args.out)
    capture(args.out.resolve(), args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
