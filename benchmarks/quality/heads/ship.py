"""Fits the heads localjudge ships, on dev data only (`../shared/data/`), with `localjudge.heads.fit_heads`.

    python -m benchmarks.quality.heads.ship --judge smollm2-135m

Writes `localjudge/tuned/<judge>-summeval` (coherence, consistency, fluency, relevance on all 800
SummEval dev summaries), `<judge>-summedits` (consistency_entailment on SummEdits' five dev domains)
and `<judge>-mtbench` (pairwise on MT-Bench's 200 human pairs); features come from the studies'
cache (`data.WORK`), so a head costs its fit. Each folder's manifest says what it saw.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from benchmarks.quality.heads import data
from localjudge.heads import fit_heads
from localjudge.metrics import builtin_metric
from localjudge.tune.job import TuneJob

TUNED = Path(__file__).resolve().parents[3] / "localjudge" / "tuned"
HELD = "the release checks' human-labelled data; every other data set"


def sha256(*paths: Path) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes())
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--judge", default="smollm2-135m")
    ap.add_argument("--sets", nargs="+", default=["summeval", "summedits", "mtbench"])
    args = ap.parse_args()
    plans = {
        "summeval": (
            [builtin_metric(d) for d in data.DIMENSIONS],
            "human_{metric}",
            "doc_id",
            [data.DATA / "summeval_dev.json"],
            "SummEval dev: 800 summaries of 50 CNN/DM articles, expert ratings (1-5) of the four dimensions",
        ),
        "summedits": (
            [builtin_metric("consistency_entailment")],
            "label",
            "doc_id",
            [data.DATA / "summedits" / f"summedits_{d}.json" for d in data.DOMAINS],
            "SummEdits dev, five domains (ectsum, qmsumm, sales_call, sales_email, scitldr): 2698 summaries "
            "labelled consistent or not",
        ),
        "mtbench": (
            [builtin_metric("pairwise")],
            "label",
            None,
            [data.DATA / "mtbench_human_pairs.json"],
            "MT-Bench human pairs: 200 pairs of answers to 75 questions, expert majority votes",
        ),
    }
    for name in args.sets:
        metrics, human, group, files, said = plans[name]
        cases, options, _ = data.data_set(name)
        job = TuneJob(
            judge=args.judge,
            human=human,
            group=group,
            out=TUNED / f"{args.judge}-{name}",
            overwrite=True,
            resume=False,
            features=data.WORK / "features",
            data_sha256=sha256(*files),
            data_name=said,
            trained_on=said,
            never_shown=HELD,
            human_scale=(1.0, 5.0) if name == "summeval" else None,  # experts' 1-5, fluency's metric is 1-3
        )
        manifest = fit_heads(cases, metrics, job, options)
        for h in manifest.heads:
            print(
                f"{manifest.name} {h.metric}: layers {h.chosen.layers} alpha {h.chosen.alpha:g} cv {h.chosen.agreement}"
            )


if __name__ == "__main__":
    main()
