"""Data parallelism: dealing and gathering, 2 processes over gloo, and Ray Data on a local instance.

Multi-process runs use a tiny random Llama saved to a model directory, loaded by path; they must
give the records of a single-process run (scores to 1e-5: batches are composed differently).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from localjudge.runs.distributed import deal, merge

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "localjudge" / "examples" / "rag_demo.jsonl"
TOL = 1e-5


# -- pure dealing and gathering --------------------------------------------------------------------


@pytest.mark.parametrize("world", [1, 2, 3, 8])
@pytest.mark.parametrize("lengths", [[5, 100, 7, 98, 50], list(range(1, 40)), [10] * 7, [3]])
def test_deal_covers_every_item_once_and_merge_restores_order(lengths, world):
    shares = deal(lengths, world)
    assert len(shares) == world
    assert sorted(i for s in shares for i in s) == list(range(len(lengths)))
    assert all(s == sorted(s) for s in shares)
    parts = [[f"r{i}" for i in s] for s in shares]
    assert merge(shares, parts, len(lengths)) == [f"r{i}" for i in range(len(lengths))]


def test_deal_balances_tokens():
    lengths = [1000, 900, 800, 700, 100, 90, 80, 70]
    totals = [sum(lengths[i] for i in s) for s in deal(lengths, 2)]
    assert max(totals) - min(totals) <= 100  # snake order; plain round-robin would give 170
    assert [len(s) for s in deal(lengths, 2)] == [4, 4]


def test_merge_rejects_a_short_rank():
    with pytest.raises(AssertionError):
        merge([[0, 1], [2]], [["a", "b"], []], 3)


# -- real processes --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def model_dir(tiny_model_dir):
    return tiny_model_dir


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _eval(model_dir, out: Path, env_extra: dict[str, str] | None = None, distributed: bool = False):
    cmd = [
        sys.executable,
        "-m",
        "localjudge",
        "eval",
        str(DATA),
        "--metric",
        "correctness",
        "--metric",
        "faithfulness",
        "--judge",
        str(model_dir),
        "--device",
        "cpu",
        "--no-progress",
        "--out",
        str(out),
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1", **(env_extra or {})}
    return subprocess.Popen(
        cmd + (["--distributed"] if distributed else []),
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _assert_same_records(a: list[dict], b: list[dict]):
    # a single run streams records as chunks finish (metric by metric): compare by key
    a = sorted(a, key=lambda r: (r["case_id"], r["metric"]))
    b = sorted(b, key=lambda r: (r["case_id"], r["metric"]))
    assert [(r["case_id"], r["metric"]) for r in a] == [(r["case_id"], r["metric"]) for r in b]
    for x, y in zip(a, b):
        assert (x["score"] is None) == (y["score"] is None), x["case_id"]
        if x["score"] is not None:
            assert x["score"] == pytest.approx(y["score"], abs=TOL)
            assert x["valid_mass"] == pytest.approx(y["valid_mass"], abs=TOL)


@pytest.mark.slow
def test_two_processes_match_a_single_process(model_dir, tmp_path):
    single = tmp_path / "single.jsonl"
    p = _eval(model_dir, single)
    assert p.wait(timeout=600) == 0, p.stderr.read()
    port = str(_free_port())
    dist_out = tmp_path / "dist.jsonl"
    procs = [
        _eval(
            model_dir,
            dist_out,
            {"RANK": str(r), "LOCAL_RANK": str(r), "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port},
            distributed=True,
        )
        for r in range(2)
    ]
    for q in procs:
        assert q.wait(timeout=600) == 0, q.stderr.read()
    a, b = _records(single), _records(dist_out)
    assert len(a) == 20
    # rank 0 writes in input order: cases as in the data, metrics as given
    assert [(r["case_id"], r["metric"]) for r in b][:3] == [
        ("rag-01", "correctness"),
        ("rag-01", "faithfulness"),
        ("rag-02", "correctness"),
    ]
    assert any(r["score"] is not None for r in a)  # the comparison compares something
    _assert_same_records(a, b)


# -- Ray -------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_ray_data_matches_local_evaluate(model_dir):
    ray = pytest.importorskip("ray", reason="ray is not installed: pip install 'ray[data]'")
    pytest.importorskip("ray.data", reason="ray[data] is not installed")
    from localjudge import load_judge
    from localjudge.io.cases import load_cases
    from localjudge.metrics import resolve_metric
    from localjudge.runs.evaluate import evaluate
    from localjudge.runs.ray import judge_dataset

    cases = load_cases(DATA)
    metrics = ["correctness", "faithfulness"]
    local = evaluate(
        cases, [resolve_metric(m) for m in metrics], load_judge(str(model_dir), device="cpu"), progress=False
    )
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        ds = ray.data.from_items([c.model_dump(exclude_none=True) for c in cases])
        rows = judge_dataset(ds, str(model_dir), metrics, concurrency=2, batch_size=4, device="cpu").take_all()
    finally:
        ray.shutdown()
    got = {(r["case_id"], r["metric"]): r for r in rows}
    assert len(got) == len(local.records) == 20
    want = [json.loads(r.model_dump_json()) for r in local.records]
    _assert_same_records(want, [json.loads(got[(r["case_id"], r["metric"])]["record"]) for r in want])


def test_ray_actor_takes_the_valid_mass_floor_of_a_local_run(model_dir):
    # the actor `judge_dataset` maps over batches, called on one batch as Ray would: a floor above the tiny
    # model's valid mass leaves every item unscored, as the same floor does in a local `evaluate`
    pd = pytest.importorskip("pandas", reason="pandas comes with ray[data]")
    from localjudge import load_judge
    from localjudge.io.cases import load_cases
    from localjudge.metrics import resolve_metric
    from localjudge.runs.evaluate import evaluate
    from localjudge.runs.options import ScoringOptions
    from localjudge.runs.ray import JudgeActor

    cases = load_cases(DATA)[:3]
    batch = pd.DataFrame([c.model_dump(exclude_none=True) for c in cases])
    for floor in (0.0, 0.999):
        local = evaluate(
            cases,
            [resolve_metric("correctness")],
            load_judge(str(model_dir), device="cpu"),
            progress=False,
            min_valid_mass=floor,
        )
        frame = JudgeActor(str(model_dir), ["correctness"], device="cpu", scoring=ScoringOptions(min_valid_mass=floor))(
            batch
        )
        want = [json.loads(r.model_dump_json()) for r in local.records]
        _assert_same_records(want, [json.loads(r) for r in frame["record"]])
        assert frame["score"].isna().all() == (floor > 0.5)  # the floor decides, in both


def _every_scoring_setting_changed(tmp_path: Path) -> dict:
    """A value other than the default for every `ScoringOptions` field (a new field must be added here)."""
    from localjudge.runs.options import ScoringOptions

    values = {
        "hardened": False,
        "truncate": True,
        "min_valid_mass": 0.05,
        "steps_cache": tmp_path / "steps",
        "chunk_size": 2,
    }
    assert set(values) == set(ScoringOptions.model_fields), "give the new scoring field a non-default value here"
    defaults = ScoringOptions()
    assert all(getattr(defaults, k) != v for k, v in values.items())
    return values


def test_ray_actor_scores_with_every_setting_of_a_local_run(model_dir, tmp_path):
    # one ScoringOptions with no field at its default: the actor's records are byte for byte those of a
    # local `evaluate` given the same object
    pd = pytest.importorskip("pandas", reason="pandas comes with ray[data]")
    from localjudge import load_judge
    from localjudge.io.cases import load_cases
    from localjudge.metrics import resolve_metric
    from localjudge.runs.evaluate import evaluate
    from localjudge.runs.options import ScoringOptions
    from localjudge.runs.ray import JudgeActor

    values = _every_scoring_setting_changed(tmp_path)
    scoring = ScoringOptions(**values)
    cases = load_cases(DATA)[:3]
    batch = pd.DataFrame([c.model_dump(exclude_none=True) for c in cases])
    metrics = ["correctness", "faithfulness"]
    local = evaluate(
        cases, [resolve_metric(m) for m in metrics], load_judge(str(model_dir), device="cpu"), scoring=scoring
    )
    want = [r.model_dump_json() for r in local.records]
    assert {json.loads(r)["min_valid_mass"] for r in want} == {0.05}  # the object reached the records
    by_object = JudgeActor(str(model_dir), metrics, device="cpu", scoring=scoring)
    assert by_object.scoring == scoring
    assert list(by_object(batch)["record"]) == want


class _Dataset:
    """Stands in for a `ray.data.Dataset`: keeps what `map_batches` was given."""

    def map_batches(self, fn, **kwargs):
        self.fn, self.kwargs = fn, kwargs
        return self


def test_judge_dataset_gives_every_actor_the_whole_scoring_object(tmp_path):
    from localjudge.runs.options import ScoringOptions
    from localjudge.runs.ray import JudgeActor, judge_dataset

    values = _every_scoring_setting_changed(tmp_path)
    scoring = ScoringOptions(**values)
    ds = judge_dataset(_Dataset(), "j", ["correctness"], device="cpu", scoring=scoring)
    assert ds.fn is JudgeActor
    assert ds.kwargs["fn_constructor_kwargs"] == {"device": "cpu", "dtype": None, "options": None, "scoring": scoring}
    # settings come as one object: a scoring field given as a keyword is refused before any actor starts
    with pytest.raises(TypeError, match="unexpected keyword argument 'truncate'"):
        judge_dataset(_Dataset(), "j", ["correctness"], truncate=False)  # type: ignore[call-arg]
