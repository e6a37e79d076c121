"""Takes the judge readings that `summedits.py` and `summeval_tokens.py` report on.

Each (judge, data set, condition) is read once and saved as it goes (`_readings.py`); a rerun reads
only what is missing. Conditions are described in `_faithful_data.py`.

Usage (from the repository root; slow: run it in the background under `nice`):

    .venv/bin/python -m benchmarks.quality.faithfulness.faithful_collect --set summedits --judge smollm2-135m \
        --conditions given nodoc entail shuffled lead lead_nodoc
    .venv/bin/python -m benchmarks.quality.faithfulness.faithful_collect --set summeval --judge gemma3-270m \
        --conditions given nodoc

Readings go to `benchmarks/quality/faithful_readings/<judge>/<set>/` (see `_readings.py`).

`--timing` reads the first two documents of each domain again into a fresh folder
(`faithful_readings/timing/<judge>/`), recording wall and process CPU seconds per condition: the
per-summary cost the results files quote, measured in one go rather than summed over a long run
that shared the machine.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from benchmarks.lib.readings import READINGS, Store, read_labels, read_likelihoods
from benchmarks.quality.faithfulness import _faithful_data as D

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", dest="dataset", choices=["summedits", "summeval"], required=True)
    ap.add_argument("--judge", required=True)
    ap.add_argument("--conditions", nargs="+", required=True)
    ap.add_argument("--docs", type=int, help="first N documents per domain (a quick run)")
    ap.add_argument("--domains", nargs="+", default=list(D.SUMMEDITS_DOMAINS))
    ap.add_argument("--readings", type=Path, default=READINGS, help=f"readings folder [default: {READINGS}]")
    ap.add_argument("--timing", action="store_true", help="time each condition on 2 documents per domain")
    args = ap.parse_args(argv)

    from localjudge import load_judge

    t0 = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t0:7.0f} s] {args.judge} {args.dataset} {msg}", flush=True)

    judge = load_judge(args.judge, progress=False)
    log(f"loaded {judge.info.dtype} {judge.info.device}, bitwise {judge.info.bitwise}")
    items = D.load_items(args.dataset, tuple(args.domains), 2 if args.timing else args.docs)
    root = args.readings / "timing" if args.timing else args.readings
    store = Store(root / args.judge / args.dataset)
    for cond in args.conditions:
        if cond in D.LABEL_CONDITIONS:
            read_labels(judge, store, cond, D.label_items(judge, cond, items), ("Yes", "No"), log)
        else:
            read_likelihoods(judge, store, cond, D.ll_items(judge, cond, items), log)
        log(f"{cond} done")


if __name__ == "__main__":
    main()
