"""Heads end to end on a tiny random model: the engine's features are the model's own states, a planted
linear signal in them is recovered on groups never fit, and the head judge loads by folder and by name,
answers its metrics through the head bitwise under batching, and leaves every other metric to its base.
"""

from __future__ import annotations

import json
import random
import shutil

import numpy as np
import pytest
from click.testing import CliRunner
from pooled_states import pooled_stock

from localjudge.cli import main
from localjudge.engine.options import EngineOptions
from localjudge.errors import ConfigError
from localjudge.heads.fit import grouped_folds
from localjudge.io.cases import load_cases
from localjudge.judges.heads import HEAD_MANIFEST, HeadManifest
from localjudge.judges.loading import load_judge
from localjudge.metrics.spec import metric_from_dict
from localjudge.runs.evaluate import evaluate
from localjudge.testing.tiny_models import tiny_llama

pytestmark = pytest.mark.usefixtures("torch_one_thread")

METRIC = {
    "kind": "geval",
    "name": "goodness",
    "task": "Rate the response.",
    "criteria": "How good the response is.",
    "steps": ["Read it."],
    "fields": ["input", "actual_output"],
    "low": 1,
    "high": 5,
}
PAIRWISE = {"kind": "pairwise", "name": "better", "task": "Pick the better response.", "criteria": "Which is better."}
WORDS = ["apple", "river", "stone", "cloud", "green", "quiet", "paper", "light", "seven", "table", "north", "glass"]
PLANT_LAYER = 1


@pytest.fixture(scope="module")
def files(tmp_path_factory, tiny_tokenizer):
    """A tiny model, and 16 documents × 6 outputs rated by a planted linear read of the model's layer-1 states."""
    root = tmp_path_factory.mktemp("heads")
    model = tiny_llama(tiny_tokenizer)
    model.save_pretrained(root / "model")
    tiny_tokenizer.save_pretrained(root / "model")
    judge = load_judge(str(root / "model"), progress=False)
    rng = random.Random(0)
    rows = []
    for doc in range(16):
        for k in range(6):
            rows.append(
                {
                    "id": f"d{doc}-{k}",
                    "input": f"Document {doc}: " + " ".join(rng.sample(WORDS, 5)),
                    "actual_output": " ".join(rng.sample(WORDS, 4)),
                    "doc": f"d{doc}",
                }
            )
    prompts = [f"Input:\n{r['input']}\n\nOutput:" for r in rows]
    pooled = np.stack([pooled_stock(model, judge, p, r["actual_output"], PLANT_LAYER) for p, r in zip(prompts, rows)])
    direction = np.random.default_rng(1).normal(size=pooled.shape[1])
    z = pooled @ direction
    z = (z - z.mean()) / z.std()
    for r, v in zip(rows, z):
        r["human"] = float(np.clip(3 + 1.2 * v, 1, 5))
    fit, held = rows[: 12 * 6], rows[12 * 6 :]
    for name, part in (("cases.jsonl", fit), ("held.jsonl", held)):
        (root / name).write_text("".join(json.dumps(r) + "\n" for r in part))
    (root / "metric.json").write_text(json.dumps(METRIC))
    return root


@pytest.fixture(scope="module")
def head(files):
    out = files / "head"
    args = ["tune", str(files / "cases.jsonl"), "--metric", str(files / "metric.json"), "--judge", str(files / "model")]
    args += ["--human", "human", "--group", "doc", "--out", str(out), "--anchor", "none", "--folds", "4"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "goodness: 72 labels in 12 groups" in result.output
    return out


def test_a_planted_linear_signal_is_recovered_on_groups_never_fit(head, files):
    manifest = HeadManifest.model_validate_json((head / HEAD_MANIFEST).read_text())
    fit = manifest.heads[0]
    assert fit.labelled_cases == 72 and fit.groups == 12 and fit.folds == 4
    assert fit.chosen.agreement > 0.8
    planted_alone = max(c.agreement for c in fit.candidates if c.layers == [PLANT_LAYER])
    assert planted_alone > 0.9  # the layer the signal was planted in carries it alone
    held = load_cases(files / "held.jsonl")
    metric = metric_from_dict(METRIC)
    result = evaluate(held, [metric], load_judge(str(head), progress=False), progress=False)
    from scipy.stats import spearmanr

    scores = [r.raw_score for r in result.records]
    assert spearmanr(scores, [c.extra["human"] for c in held])[0] > 0.8
    base = evaluate(held, [metric], load_judge(str(files / "model"), progress=False), progress=False)
    assert spearmanr([r.score for r in base.records], [c.extra["human"] for c in held])[0] < 0.5


def test_cross_validation_folds_keep_groups_whole():
    groups = np.array([f"g{i // 3}" for i in range(30)])
    folds = grouped_folds(groups, 4, seed=0)
    assert sorted(np.concatenate(folds).tolist()) == list(range(30))
    for f in folds:
        rest = np.setdiff1d(np.arange(30), f)
        assert not set(groups[f]) & set(groups[rest])


def test_head_judge_answers_its_metric_through_the_head_and_others_on_its_base(head, files):
    held = load_cases(files / "held.jsonl")
    judge = load_judge(str(head), progress=False)
    manifest = HeadManifest.model_validate_json((head / HEAD_MANIFEST).read_text())
    assert judge.info.name == "head" and set(judge.readings) == {"goodness"}
    likelihood = metric_from_dict(
        {"kind": "likelihood", "name": "fluent", "instruction": "Write a response.", "fields": ["input"]}
    )
    result = evaluate(held[:6], [metric_from_dict(METRIC), likelihood], judge, progress=False)
    by_metric = {r.metric: r for r in result.records if r.case_id == held[0].id}
    rec = by_metric["goodness"]
    assert rec.kind == "head" and rec.detail.head_sha256 == manifest.head_sha256
    assert rec.metric_spec["head_sha256"] == manifest.head_sha256 and 1 <= rec.raw_score <= 5
    assert rec.score == pytest.approx((rec.raw_score - 1) / 4)
    assert by_metric["fluent"].kind == "likelihood"


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_head_readings_are_bitwise_whatever_the_batch(head, files, dtype):
    held = load_cases(files / "held.jsonl")
    metric = metric_from_dict(METRIC)
    judge = load_judge(str(head), options=EngineOptions(dtype=dtype), progress=False)
    assert judge.info.bitwise and (dtype == "float32" or judge.info.mixed_precision)
    one = evaluate(held, [metric], judge.with_options(token_budget=4096), progress=False, chunk_size=24)
    other = evaluate(held[::-1], [metric], judge.with_options(token_budget=256), progress=False, chunk_size=1)
    a = {r.case_id: r.raw_score for r in one.records}
    b = {r.case_id: r.raw_score for r in other.records}
    assert a == b


def test_head_judge_loads_by_registry_name_and_refuses_another_base(head, files, tmp_path):
    shutil.copytree(head, tmp_path / "heads" / "tiny-head")
    registry = tmp_path / "models.yaml"
    registry.write_text(
        "default: tiny-head\njudges:\n"
        "  - {name: tiny-head, family: tiny, context_length: 1024, source: {kind: tuned, path: heads/tiny-head}}\n"
    )
    judge = load_judge("tiny-head", registry_path=registry, progress=False)
    assert judge.info.name == "tiny-head" and set(judge.readings) == {"goodness"}
    held = load_cases(files / "held.jsonl")[:4]
    by_name = evaluate(held, [metric_from_dict(METRIC)], judge, progress=False)
    by_folder = evaluate(held, [metric_from_dict(METRIC)], load_judge(str(head), progress=False), progress=False)
    assert [r.raw_score for r in by_name.records] == [r.raw_score for r in by_folder.records]
    path = tmp_path / "heads" / "tiny-head" / HEAD_MANIFEST
    manifest = json.loads(path.read_text())
    path.write_text(json.dumps({**manifest, "base_provenance": "sha256:" + "0" * 64}))
    with pytest.raises(ConfigError, match="was fit on"):
        load_judge("tiny-head", registry_path=registry, progress=False)


def test_a_preference_head_reads_no_position(files, tmp_path):
    """Pairs of outputs labelled by the planted reading; the head's P(1 better) flips exactly with the order."""
    cases = load_cases(files / "cases.jsonl")
    rows = []
    for i in range(0, len(cases) - 1, 2):
        a, b = cases[i], cases[i + 1]
        rows.append(
            {
                "id": f"p{i}",
                "input": a.input,
                "output_1": a.actual_output,
                "output_2": b.actual_output,
                "doc": a.extra["doc"],
                "label": 1 if a.extra["human"] >= b.extra["human"] else 2,
            }
        )
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "pairwise.json").write_text(json.dumps(PAIRWISE))
    out = tmp_path / "pair-head"
    args = ["tune", str(tmp_path / "pairs.jsonl"), "--metric", str(tmp_path / "pairwise.json")]
    args += ["--judge", str(files / "model"), "--human", "label", "--group", "doc", "--out", str(out), "--folds", "3"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    judge = load_judge(str(out), progress=False)
    pairs = load_cases(tmp_path / "pairs.jsonl")[:6]
    swapped = [
        p.model_copy(update={"extra": {**p.extra, "output_1": p.extra["output_2"], "output_2": p.extra["output_1"]}})
        for p in pairs
    ]
    metric = metric_from_dict(PAIRWISE)
    one = evaluate(pairs, [metric], judge, progress=False).records
    two = evaluate(swapped, [metric], judge, progress=False).records
    for r, s in zip(one, two):
        assert r.kind == "head" and r.raw_score == pytest.approx(1 - s.raw_score, abs=1e-12)


def test_lora_flags_are_refused_with_the_head_method(files, tmp_path):
    args = ["tune", str(files / "cases.jsonl"), "--metric", str(files / "metric.json"), "--judge", str(files / "model")]
    args += ["--human", "human", "--out", str(tmp_path / "x"), "--lora-rank", "8"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "--lora-rank is a LoRA setting" in result.output


def test_a_yes_no_head_reads_a_planted_label_on_groups_never_fit(files, tmp_path):
    """Labels 1 where the planted reading is above its median: the head's P(yes) ranks held-out cases by it."""
    from localjudge.metrics import builtin_metric
    from localjudge.stats.classification import roc_auc

    rows = [json.loads(line) for line in (files / "cases.jsonl").read_text().splitlines()]
    cut = float(np.median([r["human"] for r in rows]))
    for r in rows:
        r["supported"] = int(r["human"] > cut)
    (tmp_path / "yes_no.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "yes-no-head"
    args = [
        "tune",
        str(tmp_path / "yes_no.jsonl"),
        "--metric",
        "consistency_entailment",
        "--judge",
        str(files / "model"),
    ]
    args += ["--human", "supported", "--group", "doc", "--out", str(out), "--folds", "4", "--anchor", "none"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    manifest = HeadManifest.model_validate_json((out / HEAD_MANIFEST).read_text())
    assert manifest.heads[0].chosen.agreement > 0.8  # out-of-fold ROC AUC
    held = load_cases(files / "held.jsonl")
    records = evaluate(held, [builtin_metric("consistency_entailment")], load_judge(str(out), progress=False),
                       progress=False).records  # fmt: skip
    p = np.array([r.raw_score for r in records])
    assert all(r.kind == "head" for r in records) and ((p > 0) & (p < 1)).all()
    truth = np.array([int(c.extra["human"] > cut) for c in held])
    assert roc_auc(p, truth) > 0.8
