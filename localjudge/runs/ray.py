"""Ray Data integration: judge a dataset on a cluster, one judge loaded per actor.

`JudgeActor` is a callable class for `ray.data.Dataset.map_batches`: Ray starts `concurrency`
actors (one per GPU with `num_gpus=1`), each loads the judge once in its constructor, and streams
batches of cases through it. Each output row is one (case, metric) record.

Multi-node: start Ray on every node (`ray start --head` on one, `ray start --address=HEAD:6379`
on the others, or a KubeRay / cloud cluster), install localjudge and the judge's weights (or a
shared Hugging Face cache) on every node, then run the driver anywhere with `ray.init("auto")`.
Read the cases from storage every node can reach (`ray.data.read_json("s3://...")`) and write
results the same way (`.write_json(...)`); Ray schedules batches on free actors, retries failed
tasks and can autoscale. Records match a local `evaluate` run up to float rounding of different
batch compositions.

When to pick which: `localjudge.runs.distributed` (torchrun) for one machine with several
GPUs and a dataset that fits in memory: no extra dependency, results in input order, one
command. Ray for many machines, datasets larger than memory, autoscaling or spot instances, or
when judging is one stage of a larger Ray pipeline.

Examples:
    >>> import ray  # doctest: +SKIP
    >>> from localjudge.runs.ray import JudgeActor, judge_dataset  # doctest: +SKIP
    >>> ds = ray.data.read_json("cases.jsonl")  # doctest: +SKIP
    >>> out = judge_dataset(ds, judge="qwen2.5-7b", metrics=["correctness"], concurrency=8,
    ...                     num_gpus=1, batch_size=512)  # doctest: +SKIP
    >>> out.write_json("results/")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from localjudge.engine.options import EngineOptions
from localjudge.runs.options import RunOptions, ScoringOptions

OUTPUT_COLUMNS = ("case_id", "metric", "score", "raw_score", "passed", "valid_mass", "unscored_reason", "record")


class JudgeActor:
    """Scores batches of cases with a judge loaded once per actor (for `map_batches`).

    Args:
        judge: registry name, model directory, `.gguf` file or hub id, as for `load_judge`.
        metrics: built-in metric names or metric files.
        device: default each actor's GPU when Ray gave it one, else the CPU.
        dtype: compute dtype, as for `load_judge`.
        options: every engine setting as one `EngineOptions`, as for `load_judge` (not with device or dtype).
        scoring: how each case is scored (`ScoringOptions`), as for `evaluate`, whole: a Ray run
            scores as a local one does.
    """

    def __init__(
        self,
        judge: str,
        metrics: Sequence[str],
        device: str | None = None,
        dtype: str | None = None,
        *,
        options: EngineOptions | None = None,
        scoring: ScoringOptions | None = None,
    ):
        from localjudge.judges.loading import load_judge
        from localjudge.metrics import resolve_metric

        self.scoring = scoring or ScoringOptions()
        self.judge = load_judge(judge, device=device, dtype=dtype, options=options)
        self.metrics = [resolve_metric(m) for m in metrics]

    def __call__(self, batch):
        """A pandas batch of cases in, a pandas frame of records (one per case and metric) out."""
        import pandas as pd

        from localjudge.io.cases import TestCase
        from localjudge.runs.evaluate import evaluate

        cases = [TestCase(**_clean(row)) for row in batch.to_dict("records")]
        result = evaluate(cases, self.metrics, self.judge, scoring=self.scoring, run=RunOptions(progress=False))
        rows = [
            {
                "case_id": r.case_id,
                "metric": r.metric,
                "score": r.score,
                "raw_score": r.raw_score,
                "passed": r.passed,
                "valid_mass": r.valid_mass,
                "unscored_reason": r.unscored_reason,
                "record": r.model_dump_json(),
            }
            for r in result.records
        ]
        return pd.DataFrame(rows, columns=list(OUTPUT_COLUMNS))


def judge_dataset(
    ds,
    judge: str,
    metrics: Sequence[str],
    *,
    concurrency: int = 1,
    num_gpus: float = 0,
    batch_size: int = 256,
    device: str | None = None,
    dtype: str | None = None,
    options: EngineOptions | None = None,
    scoring: ScoringOptions | None = None,
):
    """`ds` (one row per case: id, input, actual_output, ...) judged by `concurrency` actors.

    The judge and scoring settings are `JudgeActor`'s (`scoring`, given to every actor whole); the others are Ray's
    `map_batches`.

    Returns:
        A lazy `ray.data.Dataset` with the columns of `OUTPUT_COLUMNS`; `record` holds the full
        `ResultRecord` as JSON.
    """
    scoring = scoring or ScoringOptions()
    actor = {"device": device, "dtype": dtype, "options": options, "scoring": scoring}
    return ds.map_batches(
        JudgeActor,
        fn_constructor_args=(judge, list(metrics)),
        fn_constructor_kwargs=actor,
        batch_format="pandas",
        batch_size=batch_size,
        concurrency=concurrency,
        num_gpus=num_gpus,
    )


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    """A pandas row as TestCase fields: arrays to lists, missing values dropped."""
    out = {}
    for k, v in row.items():
        if hasattr(v, "tolist"):
            v = v.tolist()
        if v is None or (isinstance(v, float) and v != v):
            continue
        out[k] = v
    return out
