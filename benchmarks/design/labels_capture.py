"""Capture what the label floor (#68 point 1) moves: real tiny tunes, calibrate fits and the panel-weights fit.

`benchmarks/design/capture.py` covers the jobs a user runs with the embedded judges, but its tune keeps no
adapter. This script adds what depends on the labels, splits and agreements that moved into
`localjudge.labels`, on inputs that take seconds on a CPU:

- tunes of a tiny random 2-layer Llama (`localjudge.testing.tiny_models`, as `tests/tune` tunes it) for each
  trainable kind: G-Eval grouped by a field and by the default group (the input), two G-Eval metrics on one
  adapter with ratings on another scale (`--human-scale`), entailment and pairwise; each tune's manifest
  (times blanked) and its adapter's sha256;
- `calibrate agreement` with an isotonic fit on a held-out split, with and without groups, on a seeded table;
- `calibrate panel-weights` on a seeded panel results file of three members, with and without --group.

    python -m benchmarks.design.labels_capture --out /tmp/before
    ... change the code ...
    python -m benchmarks.design.labels_capture --out /tmp/after
    python -m benchmarks.design.labels_capture --compare /tmp/before /tmp/after

Every command runs `python -m localjudge` with this tree first on the path.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
TIME_KEYS = {"wall_seconds", "tokens_per_second", "peak_memory_gib", "created"}

GEVAL = {
    "kind": "geval",
    "name": "goodness",
    "task": "Rate the response.",
    "criteria": "How good the response is.",
    "steps": ["Count the good words."],
    "fields": ["input", "actual_output"],
    "low": 1,
    "high": 5,
}
BRIEF = {**GEVAL, "name": "brief", "criteria": "How good, in three steps.", "high": 3}
ENTAIL = {
    "kind": "entailment",
    "name": "supported",
    "question": "Are most words good?",
    "fields": ["input"],
}
PAIRWISE = {"kind": "pairwise", "name": "better", "task": "Which response is better?", "criteria": "More good words."}
FLAGS = "--layers 2 --lora-rank 8 --alpha 16 --learning-rate 0.01 --validation-share 0.3 --min-tuned-valid-mass 0.01 "
FLAGS += "--pack-tokens 1024 --epochs 3 --patience 3"


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def inputs(out: Path) -> dict[str, Path]:
    """The tiny model, labelled cases of each kind, a table and a panel file, all seeded."""
    from localjudge.testing.tiny_models import tiny_llama
    from localjudge.testing.tiny_tokenizer import build_tiny_tokenizer

    tok = build_tiny_tokenizer()
    tiny_llama(tok).save_pretrained(out / "model")
    tok.save_pretrained(out / "model")
    rng, rows = random.Random(0), []
    for doc in range(12):
        for k in range(5):
            words = rng.sample(["good"] * 4 + ["bad"] * 4, 4)
            good = words.count("good")
            rows.append(
                {
                    "id": f"d{doc}-{k}",
                    "input": f"Document {doc}: the answer is",
                    "actual_output": " ".join(words),
                    "doc": f"d{doc}",
                    "human": 1 + good,
                    "human_goodness": 10 * good,  # on 0..40, --human-scale 0 40
                    "human_brief": 5 * good,  # on 0..20: one scale for both with --human-scale 0 40 would not fit
                    "human_supported": int(good >= 2),
                }
            )
    pairs: list[dict] = []
    prng = random.Random(1)
    while len(pairs) < 48:
        a, b = (prng.sample(["good"] * 4 + ["bad"] * 4, 4) for _ in range(2))
        if a.count("good") != b.count("good"):
            n = len(pairs)
            label = 1 if a.count("good") > b.count("good") else 2
            pairs.append(
                {"id": f"p{n}", "input": f"Question {n // 4}:", "doc": f"q{n // 4}", "label": label,
                 "output_1": " ".join(a), "output_2": " ".join(b)}
            )  # fmt: skip
    nrng = np.random.default_rng(7)
    table = []
    for i in range(90):
        truth = nrng.uniform(1, 5)
        table.append({"judge": float(truth + nrng.normal(0, 1)), "human": float(round(truth)), "doc": f"g{i % 15}"})
    files = {
        "cases": _write(out / "cases.jsonl", rows),
        "pairs": _write(out / "pairs.jsonl", pairs),
        "table": _write(out / "table.jsonl", table),
        "panel": panel_file(out / "panel.jsonl"),
    }
    for name, spec in [("geval", GEVAL), ("brief", BRIEF), ("entail", ENTAIL), ("pairwise", PAIRWISE)]:
        files[name] = out / f"{name}.json"
        files[name].write_text(json.dumps(spec))
    return files


def panel_file(path: Path) -> Path:
    """Panel records of two metrics over 40 cases in 10 groups, three members, a few unscored readings."""
    from localjudge.panel.records import MemberReading, PanelRecord

    rng = np.random.default_rng(3)
    out = []
    for metric in ("coherence", "consistency"):
        for i in range(40):
            human = float(rng.integers(1, 6))
            members = []
            for j, noise in enumerate((0.3, 0.8, 2.0)):
                s = None if rng.random() < 0.05 else float(np.clip((human - 1) / 4 + rng.normal(0, noise / 4), 0, 1))
                members.append(
                    MemberReading(judge=f"j{j}", weight=1 / 3, score=s, raw_score=None, distribution=None,
                                  valid_mass=None, unscored_reason=None if s is not None else "no mass")
                )  # fmt: skip
            out.append(
                PanelRecord(case_id=f"c{i}", metric=metric, kind="geval", method="mean", score=None, pooled=0,
                            raw_score=None, distribution=None, mode=None, passed=None, threshold=None, spread=None,
                            members=members, extra={"human": human, "doc": f"g{i // 4}"}, metric_spec={},
                            judges=[], localjudge_version="capture")
            )  # fmt: skip
    path.write_text("".join(r.model_dump_json() + "\n" for r in out))
    return path


def jobs(out: Path, f: dict[str, Path]) -> dict[str, str]:
    """Each job's command line (after `localjudge`)."""
    model = f"--judge {out / 'model'}"
    return {
        "tune_geval_1epoch": f"tune {f['cases']} --metric {f['geval']} {model} --human human --group doc {FLAGS} "
        f"--epochs 1 --out {out}/tune_geval_1epoch",
        "tune_geval": f"tune {f['cases']} --metric {f['geval']} {model} --human human --group doc {FLAGS} "
        f"--out {out}/tune_geval",
        "tune_geval_default_group": f"tune {f['cases']} --metric {f['geval']} {model} --human human {FLAGS} "
        f"--seed 3 --out {out}/tune_geval_default_group",
        "tune_two": f"tune {f['cases']} --metric {f['geval']} --metric {f['brief']} {model} --human human_{{metric}} "
        f"--human-scale 0 40 --group doc {FLAGS} --out {out}/tune_two",
        "tune_entail": f"tune {f['cases']} --metric {f['entail']} {model} --human human_supported --group doc "
        f"{FLAGS} --out {out}/tune_entail",
        "tune_pairwise": f"tune {f['pairs']} --metric {f['pairwise']} {model} --human label --group doc {FLAGS} "
        f"--out {out}/tune_pairwise",
        "calibrate_iso": f"calibrate agreement {f['table']} --group-col doc --fit isotonic --split 0.4 --seed 2 "
        "--bootstrap 50 --json --no-plots",
        "calibrate_iso_items": f"calibrate agreement {f['table']} --fit isotonic --bootstrap 50 --json --no-plots",
        "panel_weights": f"calibrate panel-weights {f['panel']} --human human --group doc --save {out}/pw_group.json",
        "panel_weights_cases": f"calibrate panel-weights {f['panel']} --human human --split 0.3 --seed 5 --json "
        f"--save {out}/pw_cases.json",
    }


TIMES = re.compile(r"\d+ s, [\d.]+ tokens/s tuned, peak [\d.]+ GiB")
"""The one line of a tune's printed output that holds times (its manifest's are blanked)."""


def compare(a: Path, b: Path) -> int:
    """Says, file by file, whether two captures are equal: manifests with times blanked, adapters by sha256,
    printed output with the tune's timing line masked, everything else byte for byte. The model and the
    tune folders themselves (their adapter and manifest are compared as the captured files) are skipped."""
    names = sorted(p.name for p in a.iterdir() if p.is_file())
    differ = [
        n
        for n in names
        if not (b / n).is_file() or TIMES.sub("<t>", (a / n).read_text()) != TIMES.sub("<t>", (b / n).read_text())
    ]
    for n in names:
        print(f"{'DIFFERS' if n in differ else 'same   '} {n}")
    print(f"{len(names)} files, {len(differ)} differ")
    return 1 if differ else 0


def blank(value: object) -> object:
    if isinstance(value, dict):
        return {k: None if k in TIME_KEYS else blank(v) for k, v in value.items()}
    if isinstance(value, list):
        return [blank(v) for v in value]
    return value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="folder to capture into (must not exist)")
    ap.add_argument("--only", nargs="+", help="run only these jobs (names in `jobs`)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        ap.error("give --out or --compare")
    out: Path = args.out.resolve()
    out.mkdir(parents=True)
    files = inputs(out)
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path, TQDM_DISABLE="1", TRANSFORMERS_VERBOSITY="error")
    for name, line in jobs(out, files).items():
        if args.only and name not in args.only:
            continue
        r = subprocess.run([sys.executable, "-m", "localjudge", *line.split()], capture_output=True, text=True, env=env)
        (out / f"{name}.stdout").write_text(r.stdout.replace(str(out), "<out>"))
        (out / f"{name}.exit").write_text(f"{r.returncode}\n{r.stderr.replace(str(out), '<out>')[-2000:]}")
        folder = out / name
        if (folder / "tune.json").is_file():
            manifest = blank(json.loads((folder / "tune.json").read_text()))
            (out / f"{name}.manifest.json").write_text(json.dumps(manifest, indent=1).replace(str(out), "<out>"))
            digest = hashlib.sha256((folder / "adapter.safetensors").read_bytes()).hexdigest()
            (out / f"{name}.adapter.sha256").write_text(digest + "\n")
        print(f"{name}: exit {r.returncode}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
