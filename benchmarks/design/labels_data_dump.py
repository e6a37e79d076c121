"""What `tune` builds from labels, under the code first on the path: examples, targets, readings, split, agreement.

Reads the tiny model and the cases a `labels_capture.py` capture wrote (its folder is the argument) and prints
one line per labelled field: sha256 of every example's case, token ids and target bytes; the outcome values and
token tree; the labels and groups; `case_scores` of seeded Dirichlet distributions; the validation split (share
0.3, seed 0) and the validation agreement of those scores. Run it under the code before and after a change
(`PYTHONPATH=<checkout> python benchmarks/design/labels_data_dump.py CAPTURE`) and diff the two outputs. It
speaks the tune API of either side of #68's label floor (before: `tune.examples.read_labels`; after:
`localjudge.labels`).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from localjudge.io.cases import load_cases
from localjudge.metrics.spec import metric_from_dict
from localjudge.tune import examples as E
from localjudge.tune.job import TuneJob
from localjudge.tune.options import TuneOptions


def _sha(data: bytes, n: int = 12) -> str:
    return hashlib.sha256(data).hexdigest()[:n]


def main(folder: Path) -> None:
    judge = TuneJob(judge=str(folder / "model"), human="-", out=Path("/nonexistent"), progress=False).load()
    cases, pairs = load_cases(folder / "cases.jsonl"), load_cases(folder / "pairs.jsonl")
    jobs = [
        ("geval", cases, "human", None, "doc"),
        ("geval", cases, "human_goodness", (0, 40), None),
        ("brief", cases, "human_brief", (0, 40), "doc"),
        ("entail", cases, "human_supported", None, "doc"),
        ("pairwise", pairs, "label", None, "doc"),
    ]
    after = not hasattr(E, "read_labels")
    for name, cs, field, scale, group in jobs:
        metric = metric_from_dict(json.loads((folder / f"{name}.json").read_text()))
        if after:
            from localjudge.labels import agreement, read_labels
            from localjudge.tune.split import validation_split

            labels = read_labels(metric, cs, field, scale, group)
            data = E.build_data(judge, metric, cs, labels)
            human, groups = labels.values, list(labels.groups)
        else:
            human = E.read_labels(metric, cs, field, scale)  # type: ignore[attr-defined]
            groups = E.group_names(cs, group)  # type: ignore[attr-defined]
            data = E.build_data(judge, metric, cs, human, groups)  # type: ignore[call-arg]
        h = hashlib.sha256()
        for ex in data.examples:
            h.update(f"{ex.case}|{ex.ids}|".encode())
            h.update(np.asarray(ex.target, np.float64).tobytes())
        dists = np.random.default_rng(0).dirichlet(np.ones(len(data.values)), len(data.examples))  # (E, V)
        scores = data.case_scores(dists)  # (C,)
        if after:
            sp: Any = validation_split(groups, TuneOptions(validation_share=0.3, seed=0))
            keep = np.array(sp.validation)
            agr = agreement(metric, scores[keep], labels, keep).value
        else:
            from localjudge.tune.agreement import agreement as old  # type: ignore[import-not-found,unused-ignore]
            from localjudge.tune.split import grouped_split  # type: ignore[attr-defined,unused-ignore]

            sp = grouped_split(groups, 0.3, 0)
            keep = np.array(sp.validation)
            agr = old(data, scores[keep], keep)
        tree = _sha(data.tree.token_ids.tobytes() + data.tree.parents.tobytes())
        print(
            name, field, "examples", len(data.examples), h.hexdigest()[:16], "values", data.values.tolist(),
            "tree", tree, "human", _sha(np.asarray(human, np.float64).tobytes()),
            "groups", _sha("|".join(groups).encode()), "scores", _sha(scores.tobytes(), 16),
            "split", sp.train[:6], sp.validation[:6], sp.train_groups, sp.validation_groups, "agreement", repr(agr),
        )  # fmt: skip


if __name__ == "__main__":
    main(Path(sys.argv[1]))
