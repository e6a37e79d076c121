"""Fake judges and generators with planted biases, and the bias study's prompts and responses they make.

The tests of the bias lab (`tests/bias/`) share them: three generator families whose answers carry a
marker word and a readable quality, and judges whose scores are that quality plus noise plus
whatever bias a test plants.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

from localjudge.bias import BiasOptions
from localjudge.io.cases import load_cases
from localjudge.runs.generation import generate_responses
from localjudge.runs.options import RunOptions
from localjudge.testing import fake_judge

FAST = BiasOptions(n_bootstrap=300, n_permutations=1999)
MARKERS = {"alpha": "zephyr", "beta": "quokka", "gamma": "marimba"}
N_ITEMS = 30


def _u(*parts: object) -> float:
    """A deterministic uniform draw in [0, 1) keyed by `parts` (Python's hash is salted)."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()
    return int(digest[:8], 16) / 2**32


def _generator(family: str):
    def write(prompt: str) -> str:
        item = re.search(r"Question number (\d+)", prompt).group(1)
        quality = 1.6 + 1.8 * _u("quality", family, item)
        filler = " and so on" * int(30 * _u("length", family, item))
        return f" {MARKERS[family]} answers with quality {quality:.2f}.{filler}"

    return write


def _quality(text: str) -> float:
    return float(re.search(r"quality (\d+\.\d+)", text).group(1))


def _block(prompt: str, tag: str) -> str:
    return re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.S).group(1)


def biased_judge(
    name: str,
    family: str,
    *,
    own_bonus: float = 0.0,
    length_rate: float = 0.0,
    first_bias: float = 0.0,
    chat: bool = True,
):
    """A fake judge: score = quality + noise + planted biases, read from the prompt it is given.

    own_bonus: points (pointwise) and logits (pairwise) added to its own family's answers;
    length_rate: points per 100 characters; first_bias: logit added to the answer shown first.
    """
    marker = MARKERS.get(family, "\0")

    def value(text: str) -> float:
        noise = 0.4 * (_u("noise", name, text) - 0.5)
        bonus = own_bonus if marker in text else 0.0
        return _quality(text) + noise + bonus + length_rate * len(text) / 100

    def policy(prompt: str) -> dict[str, float]:
        if "<response_a>" in prompt:
            d = value(_block(prompt, "response_a")) - value(_block(prompt, "response_b"))
            p_a = 1 / (1 + math.exp(-(2 * d + first_bias)))
            return {"A": 0.95 * p_a, "B": 0.95 * (1 - p_a)}
        s = value(_block(prompt, "actual_output"))
        weights = {k: math.exp(-((k - s) ** 2) / 0.5) for k in range(1, 6)}
        total = sum(weights.values())
        return {str(k): 0.95 * w / total for k, w in weights.items()}

    judge = fake_judge(policy, _generator(family), name=name, family=family, chat_template=chat)
    # the same ids as FakeBackend.encode (one per character), by dict instead of list.index:
    # these prompts are long and the test would spend most of its time tokenising
    ids = {s: i for i, s in enumerate(judge.backend.token_surfaces())}
    other = len(ids) - 1
    judge.backend.encode = lambda text: [ids.get(c, other) for c in text]
    return judge


def write_prompts(folder: Path) -> Path:
    """The study's prompts file in `folder` (fixtures of other modules use it too)."""
    path = folder / "prompts.jsonl"
    rows = [
        {
            "id": f"p{i:02d}",
            "input": f"Question number {i}?",
            "reference": f"Answer {i}.",
            "category": "quiz",
            "human": round(_u("human", i) * 5, 1),
        }
        for i in range(N_ITEMS)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_responses(prompts: Path) -> Path:
    """Answers of three fake generators, one per family, next to the prompts file."""
    out = prompts.parent / "responses.jsonl"
    cases = load_cases(prompts)
    for family, chat in (("alpha", True), ("beta", False), ("gamma", True)):
        generate_responses(
            cases, biased_judge(f"gen-{family}", family, chat=chat), RunOptions(out=out, resume=True, progress=False)
        )
    return out
