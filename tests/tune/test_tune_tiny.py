"""A whole tune on a tiny random model and a synthetic task: it learns, resumes to the same bytes, and loads as a judge.

The task: a response of four words, each "good" or "bad", rated 1 + the number of "good"s. A
2-layer model with LoRA on both layers learns it in a few epochs; the tuned folder then loads
wherever a judge is named, runs through the batch-invariant engine, and reads what the trainer read.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.errors import ConfigError, DataError
from localjudge.io.cases import load_cases
from localjudge.judges.adapters import ADAPTER, MANIFEST, TuneManifest
from localjudge.judges.loading import load_judge
from localjudge.metrics.spec import metric_from_dict
from localjudge.testing.tiny_models import tiny_llama
from localjudge.tune import TuneJob, TuneOptions, tune

METRIC = {
    "kind": "geval",
    "name": "goodness",
    "task": "Rate the response.",
    "criteria": "How good the response is.",
    "steps": ["Count the good words."],
    "fields": ["input", "actual_output"],
    "low": 1,
    "high": 5,
}
FLAGS = [
    "--method",
    "lora",
    "--layers",
    "2",
    "--lora-rank",
    "8",
    "--alpha",
    "16",
    "--learning-rate",
    "0.01",
    "--validation-share",
    "0.3",
    "--min-tuned-valid-mass",
    "0.01",
    "--pack-tokens",
    "1024",
]


@pytest.fixture(scope="module")
def files(tmp_path_factory, tiny_tokenizer):
    root = tmp_path_factory.mktemp("tune")
    model = tiny_llama(tiny_tokenizer)
    model.save_pretrained(root / "model")
    tiny_tokenizer.save_pretrained(root / "model")
    rng = random.Random(0)
    with open(root / "cases.jsonl", "w") as f:
        for doc in range(12):
            for k in range(5):
                words = rng.sample(["good"] * 4 + ["bad"] * 4, 4)
                case = {
                    "id": f"d{doc}-{k}",
                    "input": f"Document {doc}: the answer is",
                    "actual_output": " ".join(words),
                    "doc": f"d{doc}",
                    "human": 1 + words.count("good"),
                }
                f.write(json.dumps(case) + "\n")
    (root / "metric.json").write_text(json.dumps(METRIC))
    return root


def _tune_cli(files: Path, out: Path, *extra: str) -> list[str]:
    return [
        "tune",
        str(files / "cases.jsonl"),
        "--metric",
        str(files / "metric.json"),
        "--judge",
        str(files / "model"),
        "--human",
        "human",
        "--group",
        "doc",
        "--out",
        str(out),
        *FLAGS,
        *extra,
    ]


WHOLE = ["--epochs", "6", "--patience", "6"]
"""Six epochs, no early stop: the module's tune, and the one the killed tune must end as."""


@pytest.fixture(scope="module")
def tuned(files):
    out = files / "tuned"
    result = CliRunner().invoke(main, _tune_cli(files, out, *WHOLE))
    assert result.exit_code == 0, result.output
    return out


def test_loss_falls_and_validation_agreement_rises(tuned):
    m = TuneManifest.model_validate_json((tuned / MANIFEST).read_text())
    losses = [h.train_loss for h in m.history[1:]]
    assert losses[-1] < losses[0]
    assert m.history[m.best_epoch].agreement > m.history[0].agreement + 0.2
    assert m.best_epoch > 0 and m.train_cases + m.validation_cases == 60
    assert (tuned / ADAPTER).stat().st_size < 200_000


def test_tuned_judge_loads_by_folder_and_records_its_adapter(tuned, files):
    m = TuneManifest.model_validate_json((tuned / MANIFEST).read_text())
    out = files / "records.jsonl"
    result = CliRunner().invoke(
        main,
        [
            "eval",
            str(files / "cases.jsonl"),
            "--metric",
            str(files / "metric.json"),
            "--judge",
            str(tuned),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["judge"]["provenance"].split("+adapter:")[1] for r in records} == {f"sha256:{m.adapter_sha256}"}
    assert {r["judge"]["name"] for r in records} == {"tuned"}


def test_engine_reads_what_the_trainer_read_and_is_bitwise_under_batching(tuned, files):
    from localjudge.judges.adapters import merge_adapter, read_manifest
    from localjudge.labels import read_labels
    from localjudge.tune.examples import build_data
    from localjudge.tune.features import load_features
    from localjudge.tune.model import SplitJudgeModel
    from localjudge.tune.reading import TreeIndex
    from localjudge.tune.trainer import packs_of, read_packs

    cases = load_cases(files / "cases.jsonl")
    metric = metric_from_dict(METRIC)
    settings = TuneOptions(layers=2, pack_tokens=1024)
    base = TuneJob(judge=str(files / "model"), human="human", out=files / "unused", progress=False).load()
    merge_adapter(base.backend.model, tuned, read_manifest(tuned), base.info.provenance)
    data = build_data(base, metric, cases, read_labels(metric, cases, "human", group="doc"))
    split = SplitJudgeModel(base.backend.model, 2)
    packs = packs_of(data, list(range(len(cases))), settings)
    feats = load_features(split, packs, files / "features", "x", 2)
    trainer, _ = read_packs(split, TreeIndex.of(data.tree, split.vocab), len(data.examples), packs, feats)

    judge = load_judge(str(tuned))
    assert judge.info.bitwise
    prompts = [judge.backend.tokenizer.decode(ex.ids) for ex in data.examples]
    engine = np.array([list(d.probs.values()) for d in judge.score_texts(prompts, 1, 5)])
    assert np.abs(engine - trainer).max() < 1e-4
    # the same items alone, shuffled, and under other budgets: the same bits
    order = list(range(len(prompts)))
    random.Random(1).shuffle(order)
    for budget in (256, 4096):
        other = judge.with_options(token_budget=budget)
        shuffled = other.score_texts([prompts[i] for i in order], 1, 5)
        again = np.array([list(d.probs.values()) for d in shuffled])
        assert np.array_equal(again[np.argsort(order)], engine)
    alone = np.array([list(judge.score_texts([p], 1, 5)[0].probs.values()) for p in prompts[:5]])
    assert np.array_equal(alone, engine[:5])
    mixed = load_judge(str(tuned), dtype="bfloat16")
    a = [d.expected for d in mixed.score_texts(prompts[:8], 1, 5)]
    b = [d.expected for d in mixed.with_options(token_budget=256).score_texts(prompts[:8][::-1], 1, 5)][::-1]
    assert a == b


def test_a_metric_the_adapter_never_trained_on_is_read_with_a_warning(tuned, files, caplog):
    from localjudge.runs.evaluate import evaluate

    judge = load_judge(str(tuned))
    assert judge.tuned_for == ("goodness",) and judge.with_options(token_budget=256).tuned_for == ("goodness",)
    case = load_cases(files / "cases.jsonl")[:1]
    metric = metric_from_dict(METRIC)
    with caplog.at_level("WARNING", logger="localjudge.runs.evaluate"):
        evaluate(case, [metric], judge, progress=False)
        assert not caplog.records
        evaluate(case, [metric, metric.model_copy(update={"name": "politeness"})], judge, progress=False)
    assert [r.getMessage() for r in caplog.records] == [
        "judge tuned was tuned for goodness; politeness is not: its reading is the tuned weights' on a metric "
        "they never trained on"
    ]
    assert load_judge(str(files / "model")).tuned_for == ()


@pytest.mark.slow  # a tune in a subprocess, killed, then resumed
def test_a_killed_tune_resumes_to_the_same_adapter_bytes(files, tuned):
    args = WHOLE  # `tuned` is the unkilled tune of the same data, seed and settings
    killed = files / "killed"
    cmd = [sys.executable, "-m", "localjudge", *_tune_cli(files, killed, *args)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "CI": "1"})
    state = killed / "checkpoint" / "state.json"
    deadline = time.time() + 120
    while not state.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (killed / MANIFEST).exists(), "the tune finished before it could be killed"
    refused = CliRunner().invoke(main, _tune_cli(files, killed, *args))
    assert refused.exit_code == 2 and "--resume" in refused.output
    assert CliRunner().invoke(main, _tune_cli(files, killed, *args, "--resume")).exit_code == 0
    assert (killed / ADAPTER).read_bytes() == (tuned / ADAPTER).read_bytes()


@pytest.mark.parametrize(
    ("change", "error", "words"),
    [
        ({"human": 9}, DataError, "outside 1..5"),
        ({"doc": "one"}, DataError, "one group"),
    ],
)
def test_bad_labels_are_refused_before_any_weight_loads(files, tmp_path, change, error, words):
    cases = [c.model_copy(update={"extra": {**c.extra, **change}}) for c in load_cases(files / "cases.jsonl")]
    job = TuneJob(judge="no-such-judge", human="human", group="doc", out=tmp_path / "out")
    with pytest.raises(error, match=words):
        tune(cases, metric_from_dict(METRIC), job, TuneOptions())


def test_untunable_metric_and_occupied_folder_are_refused(files, tuned, tmp_path):
    from localjudge.metrics import builtin_metric

    cases = load_cases(files / "cases.jsonl")
    with pytest.raises(ConfigError, match="is a reference metric"):
        tune(
            cases,
            builtin_metric("rouge_l"),
            TuneJob(judge="no-such-judge", human="human", out=tmp_path / "o"),
            TuneOptions(),
        )
    with pytest.raises(ConfigError, match="holds a finished tune"):
        tune(cases, metric_from_dict(METRIC), TuneJob(judge="no-such-judge", human="human", out=tuned), TuneOptions())
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="other files"):
        tune(cases, metric_from_dict(METRIC), TuneJob(judge="x", human="human", out=tmp_path / "other"), TuneOptions())


def test_tuned_judge_loads_by_registry_name_and_refuses_another_base(tuned, files, tmp_path):
    import shutil

    registry = tmp_path / "models.yaml"
    shutil.copytree(tuned, tmp_path / "adapters" / "tiny-tuned")
    registry.write_text(
        "default: tiny-tuned\njudges:\n"
        "  - {name: tiny-tuned, family: tiny, context_length: 1024, source: {kind: tuned, path: adapters/tiny-tuned}}\n"
    )
    judge = load_judge("tiny-tuned", registry_path=registry)
    by_folder = load_judge(str(tuned))
    assert judge.info.name == "tiny-tuned" and judge.info.provenance == by_folder.info.provenance
    prompt = ["Document 1: the answer is good good bad good. Score:"]
    assert judge.score_texts(prompt, 1, 5)[0].probs == by_folder.score_texts(prompt, 1, 5)[0].probs
    manifest = json.loads((tmp_path / "adapters" / "tiny-tuned" / MANIFEST).read_text())
    manifest["base_provenance"] = "sha256:" + "0" * 64
    (tmp_path / "adapters" / "tiny-tuned" / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ConfigError, match="was tuned on"):
        load_judge("tiny-tuned", registry_path=registry)


def test_models_lists_a_tuned_judge_and_installs_its_base(tuned, files, tmp_path):
    import shutil

    shutil.copytree(tuned, tmp_path / "adapters" / "tiny-tuned")
    shutil.copytree(files / "model", tmp_path / "base")
    manifest = json.loads((tmp_path / "adapters" / "tiny-tuned" / MANIFEST).read_text())
    (tmp_path / "adapters" / "tiny-tuned" / MANIFEST).write_text(json.dumps({**manifest, "base": "tiny-base"}))
    registry = tmp_path / "models.yaml"
    registry.write_text(
        "default: tiny-tuned\njudges:\n"
        "  - {name: tiny-base, family: tiny, context_length: 1024, source: {kind: local_dir, path: base}}\n"
        "  - {name: tiny-tuned, family: tiny, context_length: 1024, source: {kind: tuned, path: adapters/tiny-tuned}}\n"
    )
    assert load_judge("tiny-tuned", registry_path=registry).info.name == "tiny-tuned"  # its base, by name
    listed = CliRunner().invoke(main, ["models", "--registry", str(registry)])
    assert listed.exit_code == 0, listed.output
    row = next(line for line in listed.output.splitlines() if "tiny-tuned" in line)
    size = (tuned / ADAPTER).stat().st_size / 2**20
    assert f"{size:.1f} MiB adapter" in row and row.rstrip().endswith("yes")
    # installing it installs its base (a folder here: nothing to install, said as for the base itself)
    installed = CliRunner().invoke(main, ["models", "--install", "tiny-tuned", "--registry", str(registry)])
    assert "installing its base judge, tiny-base" in installed.output
    assert installed.exit_code == 2 and "tiny-base is a model on disk" in installed.output
    shutil.rmtree(tmp_path / "base")
    listed = CliRunner().invoke(main, ["models", "--registry", str(registry)])
    row = next(line for line in listed.output.splitlines() if "tiny-tuned" in line)
    assert row.rstrip().endswith("no: localjudge models --install tiny-tuned (its base, tiny-base)")


def test_one_adapter_tunes_several_metrics_each_read_on_its_own_labels(files, tmp_path):
    # "goodness" on 1..5 and "brief" on 1..3 (1 + half the good words: soft targets), each read on its
    # own score tree from its own prompt, one adapter for both
    brief = {**METRIC, "name": "brief", "criteria": "How good, in three steps.", "high": 3}
    (tmp_path / "brief.json").write_text(json.dumps(brief))
    rows = [json.loads(line) for line in (files / "cases.jsonl").read_text().splitlines()]
    with open(tmp_path / "cases.jsonl", "w") as f:
        for row in rows:
            good = row["human"] - 1
            f.write(json.dumps({**row, "human_goodness": 1 + good, "human_brief": 1 + good / 2}) + "\n")
    args = _tune_cli(files, tmp_path / "both", *WHOLE)
    args[1] = str(tmp_path / "cases.jsonl")
    args[args.index("--human") + 1] = "human_{metric}"
    at = args.index("--metric") + 2
    args[at:at] = ["--metric", str(tmp_path / "brief.json")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    m = TuneManifest.model_validate_json((tmp_path / "both" / MANIFEST).read_text())
    assert [spec["name"] for spec in m.metrics] == ["goodness", "brief"]
    kept, before = m.history[m.best_epoch], m.history[0]
    assert set(kept.per_metric) == {"goodness", "brief"}
    assert kept.agreement == pytest.approx(np.mean(list(kept.per_metric.values())))
    assert all(kept.per_metric[k] > before.per_metric[k] + 0.2 for k in kept.per_metric), m.history
    assert "goodness" in result.output and "brief" in result.output  # per-metric figures shown
    # one field for two metrics is refused before any weight loads
    with pytest.raises(ConfigError, match=r"\{metric\}"):
        tune(
            load_cases(tmp_path / "cases.jsonl"),
            [metric_from_dict(METRIC), metric_from_dict(brief)],
            TuneJob(judge="no-such-judge", human="human", group="doc", out=tmp_path / "x"),
            TuneOptions(),
        )


PAIRWISE = {
    "kind": "pairwise",
    "name": "better",
    "task": "Which response is better?",
    "criteria": "The one with more good words.",
}


def test_a_pairwise_tune_learns_the_better_output_in_both_orders(files, tmp_path):
    # pairs of four-word responses; people prefer the one with more "good"s. Each pair trains in both
    # orders with swapped targets, so what the judge can learn is the content, not a position.
    from localjudge.runs.evaluate import evaluate

    rng, rows = random.Random(1), []
    while len(rows) < 48:
        a, b = (rng.sample(["good"] * 4 + ["bad"] * 4, 4) for _ in range(2))
        if a.count("good") != b.count("good"):
            n = len(rows)
            label = 1 if a.count("good") > b.count("good") else 2
            row = {"id": f"p{n}", "input": f"Question {n // 4}:", "doc": f"q{n // 4}", "label": label}
            rows.append({**row, "output_1": " ".join(a), "output_2": " ".join(b)})
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "better.json").write_text(json.dumps(PAIRWISE))
    args = _tune_cli(files, tmp_path / "pw", "--epochs", "5", "--patience", "5")
    args[1], args[args.index("--metric") + 1] = str(tmp_path / "pairs.jsonl"), str(tmp_path / "better.json")
    args[args.index("--human") + 1] = "label"
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    m = TuneManifest.model_validate_json((tmp_path / "pw" / MANIFEST).read_text())
    assert m.history[m.best_epoch].agreement > m.history[0].agreement + 0.2, m.history  # accuracy, held-out pairs

    def read(judge_path: Path) -> tuple[float, float]:
        """Accuracy of P(output 1 better) and the mean gap between the two orders' readings, by the engine."""
        records = evaluate(
            load_cases(tmp_path / "pairs.jsonl"),
            [metric_from_dict(PAIRWISE)],
            load_judge(str(judge_path)),
            min_valid_mass=0.0,
            progress=False,
        ).records  # fmt: skip (a random tiny model puts little mass on A/B, tuned or not)
        right = [(r.score > 0.5) == (row["label"] == 1) for r, row in zip(records, rows)]
        return float(np.mean(right)), float(np.mean([r.detail.disagreement for r in records]))

    (before, gap_before), (after, gap_after) = read(files / "model"), read(tmp_path / "pw")
    assert after > before + 0.25 and after >= 0.8, (before, after)
    assert gap_after < gap_before, (gap_before, gap_after)  # the orders agree more once tuned


def test_a_tune_that_keeps_no_adapter_says_why(files, tmp_path):
    from localjudge.judges.adapters import TuneFigures
    from localjudge.tune.trainer import _why_none_kept

    def figures(epoch: int, agreement: float, mass: float) -> TuneFigures:
        return TuneFigures(epoch=epoch, train_loss=None if epoch == 0 else 0.7, agreement=agreement, valid_mass=mass)

    # an untuned judge with little mass on the labels whose tuned epochs answer but agree no better: the
    # reason is the agreement, not the untuned epoch's mass (as LLMBar's halves once read)
    tied = [figures(0, 0.7, 0.26), figures(1, 0.6, 0.99), figures(2, 0.7, 0.99)]
    assert (
        _why_none_kept(tied, 0.5)
        == "no epoch agreed with the labels better than the untuned judge (+0.700 on validation)"
    )
    starved = [figures(0, 0.7, 0.26), figures(1, 0.9, 0.31), figures(2, 0.9, 0.42)]
    assert (
        _why_none_kept(starved, 0.5) == "every epoch's validation valid mass stayed below the guard 0.5 (highest 0.42)"
    )
    # end to end: a guard no epoch of the tiny model reaches fails the command with that reason, in one line
    args = _tune_cli(files, tmp_path / "guarded", "--epochs", "1")
    args[args.index("--min-tuned-valid-mass") + 1] = "0.999"
    result = CliRunner().invoke(main, args)
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "kept no adapter: every epoch's validation valid mass stayed below the guard 0.999" in result.output
