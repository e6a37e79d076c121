"""Bitwise batch invariance through the public `Judge` API: an item alone vs among random companions.

For each engine configuration (token budget × prefix reuse) every target item is run alone, then
`trials` times inside a batch of random companions at a random position; the target's result must
be bit-for-bit the one it got alone (`np.array_equal`): score distributions (valid mass and every
probability), likelihood log-probabilities (and token ids), greedy generations (the text). The
alone results of every configuration are also compared with those of the first one. Nothing here
reaches into the engine: a judge is built by `make_judge(budget, reuse)` and used as users do.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from localjudge import Judge

LOW, HIGH = 1, 10
GEN_TOKENS = 12


@dataclass
class Tally:
    """Pass/fail counts of one comparison kind, with the largest difference seen in a failure."""

    passed: int = 0
    failed: int = 0
    max_diff: float = 0.0
    examples: list[str] = field(default_factory=list)

    def add(self, same: bool, diff: float, where: str) -> None:
        if same:
            self.passed += 1
            return
        self.failed += 1
        self.max_diff = max(self.max_diff, diff)
        if len(self.examples) < 3:
            self.examples.append(where)


def _scores(judge: Judge, items: Sequence[tuple[str, str]]) -> list[np.ndarray]:
    dists = judge.score_texts([p for p, _ in items], LOW, HIGH, min_valid_mass=0.0)
    return [np.array([d.valid_mass] + [d.probs[v] for v in range(LOW, HIGH + 1)]) for d in dists]


def _loglik(judge: Judge, items: Sequence[tuple[str, str]]) -> list[np.ndarray]:
    out = judge.loglikelihood([p for p, _ in items], [c for _, c in items])
    # token ids first (as floats, exact below 2**53), then the log-probabilities
    return [np.array([float(t) for t in r.token_ids] + list(r.logprobs)) for r in out]


def _greedy(judge: Judge, items: Sequence[tuple[str, str]], share: bool) -> list[str]:
    return judge.generate([p for p, _ in items], max_new_tokens=GEN_TOKENS, share_prefix=share)


def _diff(a, b) -> float:
    if isinstance(a, str):
        return 0.0 if a == b else float("inf")
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def _same(a, b) -> bool:
    return a == b if isinstance(a, str) else bool(np.array_equal(a, b))


def bitwise(
    make_judge: Callable[[int, bool], Judge],
    targets: Sequence[tuple[str, str]],
    pool: Sequence[tuple[str, str]],
    budgets: Sequence[int],
    trials: int,
    seed: int = 0,
) -> dict:
    """Pass/fail counts per configuration and kind, and across configurations.

    Args:
        make_judge: (token budget, prefix reuse) -> a judge on the same model.
        targets: (prompt, continuation) items whose results are checked.
        pool: items that keep them company (random subsets, random order).
        budgets: token budgets to run under (each with prefix reuse off and on).
        trials: batches per target, configuration and kind.
    """
    rng = random.Random(seed)
    kinds = {
        "scores": lambda j, items, reuse: _scores(j, items),
        "loglik": lambda j, items, reuse: _loglik(j, items),
        "greedy": _greedy,
    }
    configs = [(b, reuse) for b in budgets for reuse in (False, True)]
    per_config: dict[str, dict[str, Tally]] = {}
    across = {k: Tally() for k in kinds}
    first_alone: dict[str, list] = {}
    for budget, reuse in configs:
        judge = make_judge(budget, reuse)
        name = f"budget {budget}, prefix reuse {'on' if reuse else 'off'}"
        tallies = per_config[name] = {k: Tally() for k in kinds}
        for kind, run in kinds.items():
            alone = [run(judge, [t], reuse)[0] for t in targets]
            if kind not in first_alone:
                first_alone[kind] = alone
            for i, (a, b) in enumerate(zip(first_alone[kind], alone)):
                across[kind].add(_same(a, b), _diff(a, b), f"target {i}: {name} vs {configs[0]}")
            for trial in range(trials):
                for i, target in enumerate(targets):
                    company = rng.sample(list(pool), rng.randint(1, len(pool)))
                    at = rng.randint(0, len(company))
                    got = run(judge, company[:at] + [target] + company[at:], reuse)[at]
                    where = f"target {i}, trial {trial}, {len(company)} companions, position {at}"
                    tallies[kind].add(_same(alone[i], got), _diff(alone[i], got), where)
    return {
        "per_config": {name: {k: asdict(t) for k, t in tallies.items()} for name, tallies in per_config.items()},
        "across_configs": {k: asdict(t) for k, t in across.items()},
    }


def markdown(result: dict) -> list[str]:
    """The section's table: one row per configuration and kind, then the cross-configuration row."""
    lines = [
        "| configuration | kind | pass | fail | max abs diff in a failure |",
        "|---|---|---|---|---|",
    ]

    def row(name: str, kind: str, t: dict) -> str:
        diff = "-" if not t["failed"] else ("different" if t["max_diff"] == float("inf") else f"{t['max_diff']:.3g}")
        return f"| {name} | {kind} | {t['passed']} | {t['failed']} | {diff} |"

    for name, tallies in result["per_config"].items():
        lines += [row(name, kind, t) for kind, t in tallies.items()]
    lines += [row("alone, every configuration vs the first", kind, t) for kind, t in result["across_configs"].items()]
    return lines
