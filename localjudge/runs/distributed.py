"""Data parallelism over several processes (GPUs): deal the cases, score, gather on rank 0.

Launch one process per GPU with `torchrun` (part of torch) or `accelerate launch` (installed
with localjudge), which set the same RANK / WORLD_SIZE / LOCAL_RANK variables; every process
loads the judge on its own device, scores its share of the cases and sends the records to rank 0
(torch.distributed: nccl on CUDA, gloo on the CPU), which returns (and writes) them in input
order, exactly as a single-process run orders them:

    torchrun --nproc-per-node 8 -m localjudge eval cases.jsonl --metric correctness \\
        --distributed --out results.jsonl

Cases are dealt by prompt length in snake order (longest to ranks 0..W-1, the next W to ranks
W-1..0, ...), so every rank gets about the same number of tokens and the same length mix, and
each rank's batches stay as well packed as a single run's. Ranks score the same metrics with the
same evaluation steps, so each record is the one a single process would give up to float rounding
of different batch compositions (~1e-7 in fp32).

Pick this for one machine with several GPUs (or a few machines you launch by hand); pick
`localjudge.runs.ray` to spread a large dataset over a Ray cluster, with autoscaling and
fault-tolerant scheduling of batches.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, NamedTuple

from localjudge.io.cases import TestCase
from localjudge.judges.judge import Judge
from localjudge.kinds import Metric
from localjudge.runs.options import RunOptions, ScoringOptions


class Rank(NamedTuple):
    """This process's place in the launch."""

    rank: int
    world: int
    local_rank: int


def current_rank() -> Rank:
    """Rank, world size and local rank from the launcher's environment (1 process when absent)."""
    env = os.environ
    return Rank(int(env.get("RANK", 0)), int(env.get("WORLD_SIZE", 1)), int(env.get("LOCAL_RANK", 0)))


def local_device() -> str:
    """The device this rank should load its judge on: its own GPU, else the CPU."""
    import torch

    return f"cuda:{current_rank().local_rank}" if torch.cuda.is_available() else "cpu"


def deal(lengths: Sequence[int], world: int) -> list[list[int]]:
    """Item indices of each rank: by length, longest first, dealt in snake order.

    Each rank's list is in input order.

    Examples:
        >>> deal([5, 100, 7, 98, 50], 2)
        [[0, 1, 2], [3, 4]]
    """
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    shares: list[list[int]] = [[] for _ in range(world)]
    for k, i in enumerate(order):
        turn, pos = divmod(k, world)
        shares[pos if turn % 2 == 0 else world - 1 - pos].append(i)
    return [sorted(s) for s in shares]


def merge(shares: Sequence[Sequence[int]], parts: Sequence[Sequence[Any]], n: int) -> list[Any]:
    """Per-rank results (in the order of each rank's share) back into input order."""
    out: list[Any] = [None] * n
    for share, part in zip(shares, parts):
        assert len(share) == len(part), "a rank returned a different number of results"
        for i, r in zip(share, part):
            out[i] = r
    assert all(r is not None for r in out), "some items were dealt to no rank"
    return out


def case_length(case: TestCase) -> int:
    """Characters of a case's content, a proxy for its prompt length (no tokenizer needed)."""
    return sum(len(str(v)) for v in case.model_dump().values() if v is not None)


def evaluate_distributed(
    cases: Sequence[TestCase],
    metrics: Sequence[Metric],
    judge: Judge,
    *,
    scoring: ScoringOptions | None = None,
    progress: bool | None = None,
):
    """`evaluate` over all launched processes; rank 0 gets the `EvaluationResult`, others None.

    Call it on every rank with the same cases and metrics. `scoring`
    is `evaluate`'s, for each rank's share; `progress` defaults to rank 0 only. Resuming and
    streaming to a file are single-process features: rank 0 writes the gathered records with
    `write_records`.
    """
    import torch.distributed as dist

    from localjudge.runs.evaluate import EvaluationResult, evaluate
    from localjudge.runs.summary import summarize

    scoring = scoring or ScoringOptions()
    rank, world, _ = current_rank()

    def run(share: Sequence[TestCase], show: bool):
        return evaluate(
            share, metrics, judge, scoring=scoring, run=RunOptions(progress=show if progress is None else progress)
        )

    if world == 1:
        return run(cases, True)
    created = not dist.is_initialized()
    if created:
        dist.init_process_group("nccl" if judge.info.device.startswith("cuda") else "gloo")
    try:
        shares = deal([case_length(c) for c in cases], world)
        mine = [cases[i] for i in shares[rank]]
        result = run(mine, rank == 0)
        per_case = [result.records[k * len(metrics) : (k + 1) * len(metrics)] for k in range(len(mine))]
        parts: list[Any] | None = [None] * world if rank == 0 else None
        dist.gather_object(per_case, parts, dst=0)
    finally:
        # a group left alive at exit can abort the process ("terminate called without an active
        # exception") while its threads are torn down; one we created is ours to destroy
        if created:
            dist.destroy_process_group()
    if parts is None:  # not rank 0
        return None
    records = [r for rows in merge(shares, parts, len(cases)) for r in rows]
    return EvaluationResult(records=records, summaries=summarize(records, [m.name for m in metrics]))


def write_records(result, out, overwrite: bool = False) -> None:
    """Writes gathered records to a results file (rank 0), atomically: the old file or the new one."""
    from localjudge.runs.results_file import open_results, replace_results

    if not overwrite:
        open_results(out, "new").close()  # refuses a file that holds something
    replace_results(out, result.records)
