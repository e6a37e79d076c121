"""Two fake judges' runs of twelve cases: scored, unscored for a missing field and for too little valid mass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest

from localjudge import builtin_metric, evaluate, fake_judge, load_cases


class Runs(NamedTuple):
    """Results files of judges A (correctness, faithfulness) and B (correctness) on `cases`."""

    a: Path
    b: Path
    cases: Path
    ids: list[str]


def _answer(prompt: str) -> int:
    return int(prompt.split("reply-")[1].split("-")[0])


def policy_a(prompt: str) -> dict[str, float]:
    k = _answer(prompt)
    if k == 7:  # nearly all of the judge's mass off the scale: unscored for too little valid mass
        return {"5": 0.02, "1": 0.03, "maybe": 0.95}
    return {"5": 0.1 + 0.05 * k, "3": 0.3, "1": 0.2, "maybe": 0.01}


def policy_b(prompt: str) -> dict[str, float]:
    return {"4": 0.5, "2": 0.2 + 0.02 * _answer(prompt)}


def write_runs(folder: Path) -> Runs:
    rows = [
        {
            "id": f"case-{k:02d}",
            "input": f"Question {k}?",
            "actual_output": f"reply-{k}-end",
            "expected_output": "the answer",
            "human_correctness": k % 5 + 1,
            **({"retrieval_context": [f"passage {k}"]} if k % 4 else {}),  # none: faithfulness unscored
        }
        for k in range(12)
    ]
    cases = folder / "cases.jsonl"
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    metrics = [builtin_metric("correctness"), builtin_metric("faithfulness")]
    for name, policy, judged in (("a", policy_a, metrics), ("b", policy_b, metrics[:1])):
        judge = fake_judge(policy, name=f"judge-{name}")
        evaluate(load_cases(cases), judged, judge, out=folder / f"{name}.jsonl", progress=False)
    return Runs(folder / "a.jsonl", folder / "b.jsonl", cases, [str(r["id"]) for r in rows])


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Runs:
    return write_runs(tmp_path_factory.mktemp("runs"))
