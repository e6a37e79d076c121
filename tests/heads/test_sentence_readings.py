"""Sentence-level readings on a tiny random model: each sentence of an output read alone after its source, as
head features (`--sentences`), as a likelihood metric's option and as an entailment metric's mean; old specs
keep their bytes.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from click.testing import CliRunner

from localjudge.cli import main
from localjudge.engine.options import EngineOptions
from localjudge.errors import ConfigError
from localjudge.heads.store import load_features
from localjudge.io.cases import TestCase, load_cases
from localjudge.judges.heads import HEAD_MANIFEST, HeadManifest
from localjudge.judges.loading import load_judge
from localjudge.kinds import kind_of
from localjudge.kinds.head.features import matrix, prompt_of, sentences_of
from localjudge.kinds.head.spec import FeatureSpec
from localjudge.kinds.likelihood import prompts as L
from localjudge.metrics.spec import metric_from_dict
from localjudge.runs.evaluate import evaluate

pytestmark = pytest.mark.usefixtures("torch_one_thread")

WORDS = ["apple", "river", "stone", "cloud", "green", "quiet", "paper", "light", "seven", "table", "north", "glass"]
LIKELIHOOD = {"kind": "likelihood", "name": "fluent", "instruction": "Write a summary.", "fields": ["input"]}
ENTAILMENT = {"kind": "entailment", "name": "supported", "question": "Is it supported?", "fields": ["input"]}


def _sentences(rng: random.Random, n: int) -> str:
    return " ".join(" ".join(rng.sample(WORDS, 3)).capitalize() + "." for _ in range(n))


@pytest.fixture(scope="module")
def files(tmp_path_factory, tiny_model_dir):
    """A tiny model and 12 documents × 4 outputs of 1-3 sentences, with random ratings."""
    root = tmp_path_factory.mktemp("sentences")
    (root / "model").symlink_to(tiny_model_dir)
    rng = random.Random(0)
    rows = [
        {
            "id": f"d{doc}-{k}",
            "input": f"Document {doc}: " + " ".join(rng.sample(WORDS, 6)),
            "actual_output": _sentences(rng, 1 + (doc + k) % 3),
            "doc": f"d{doc}",
            "human": float(rng.randint(1, 5)),
        }
        for doc in range(12)
        for k in range(4)
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "metric.json").write_text(
        json.dumps(
            {
                "kind": "geval",
                "name": "goodness",
                "task": "Rate it.",
                "criteria": "How good.",
                "steps": ["Read."],
                "fields": ["input", "actual_output"],
                "low": 1,
                "high": 5,
            }
        )
    )
    return root


def test_sentence_features_are_each_sentence_read_alone_and_only_they_are_computed_anew(files, tmp_path):
    judge = load_judge(str(files / "model"), progress=False)
    cases = load_cases(files / "cases.jsonl")
    plain = FeatureSpec(layers=[1, 2])
    spec = plain.model_copy(update={"sentences": True})
    assert "sentences" not in plain.model_dump() and json.loads(spec.model_dump_json())["sentences"] is True
    items = [(prompt_of(spec, c), str(c.actual_output)) for c in cases]
    base, computed = load_features(judge, plain, items, tmp_path)
    assert computed == len(items)
    feats, computed = load_features(judge, spec, items, tmp_path)
    sentences = [(p, s) for p, o in items for s in sentences_of(o)]
    new = [x for x in sentences if x not in items]  # a one-sentence output is its own sentence: already read
    assert computed == len(new) and 0 < len(new) < len(sentences)  # the outputs' own features came from the cache
    for f, b in zip(feats, base):
        assert np.array_equal(f.pooled, b.pooled) and np.array_equal(f.logprobs, b.logprobs)
    p, o = items[5]
    alone = judge.features([p] * 3, [" " + s for s in sentences_of(o)], [1, 2])
    assert len(sentences_of(o)) == 3 == len(feats[5].sentences)
    assert np.array_equal(feats[5].sentences, [a.logprobs.mean() for a in alone])
    x, y = matrix(feats, spec, [1, 2]), matrix(feats, plain, [1, 2])
    assert x.shape[1] == y.shape[1] + 2
    assert np.array_equal(x[:, -5], [f.sentences.mean() for f in feats])
    assert np.array_equal(x[:, -4], [f.sentences.min() for f in feats])
    assert np.array_equal(x[:, -3:], y[:, -3:])  # the anchor still reads the whole output's mean


def test_a_head_with_sentence_readings_fits_loads_and_reads_bitwise_whatever_the_batch(files):
    out = files / "head"
    args = ["tune", str(files / "cases.jsonl"), "--metric", str(files / "metric.json"), "--judge", str(files / "model")]
    args += ["--human", "human", "--group", "doc", "--out", str(out), "--folds", "3", "--sentences"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    manifest = HeadManifest.model_validate_json((out / HEAD_MANIFEST).read_text())
    assert manifest.features["sentences"] is True and manifest.settings["sentences"] is True
    cases = load_cases(files / "cases.jsonl")
    metric = metric_from_dict(json.loads((files / "metric.json").read_text()))
    judge = load_judge(str(out), options=EngineOptions(dtype="float32"), progress=False)
    one = evaluate(cases, [metric], judge.with_options(token_budget=4096), progress=False, chunk_size=16)
    other = evaluate(cases[::-1], [metric], judge.with_options(token_budget=128), progress=False, chunk_size=1)
    assert all(r.kind == "head" for r in one.records)
    assert {r.case_id: r.raw_score for r in one.records} == {r.case_id: r.raw_score for r in other.records}


def test_a_likelihood_metric_reads_each_sentence_alone_and_scores_their_mean_or_least(files):
    judge = load_judge(str(files / "model"), progress=False)
    cases = load_cases(files / "cases.jsonl")[:8]
    whole = metric_from_dict(LIKELIHOOD)
    assert "sentences" not in whole.model_dump(mode="json")
    for how in ("mean", "min"):
        metric = metric_from_dict({**LIKELIHOOD, "name": f"fluent_{how}", "sentences": how})
        records = evaluate(cases, [metric], judge, progress=False).records
        for c, r in zip(cases, records):
            prompt = L.condition_prompt(judge, metric, c)
            sents = sentences_of(str(c.actual_output))
            means = [ll.mean for ll in judge.loglikelihood([prompt] * len(sents), [" " + s for s in sents])]
            assert r.raw_score == pytest.approx(np.mean(means) if how == "mean" else min(means), abs=1e-9)
            assert [s.text for s in r.detail.sentences] == sents
            assert r.score == pytest.approx(np.exp(r.raw_score))
            said = kind_of(metric).explain(r).how
            assert f"{how} over {len(sents)} sentences" in said and "least likely sentence" in said
    plain = evaluate(cases, [whole], judge, progress=False).records
    assert all("sentences" not in r.detail.model_dump(mode="json") for r in plain)
    with pytest.raises(ConfigError, match="sentences"):
        metric_from_dict({**LIKELIHOOD, "sentences": "min", "aggregation": "min"})


def test_an_entailment_metric_can_average_its_sentences(files):
    judge = load_judge(str(files / "model"), progress=False)
    cases = load_cases(files / "cases.jsonl")[:6]
    least = metric_from_dict({**ENTAILMENT, "unit": "sentence"})
    mean = metric_from_dict({**ENTAILMENT, "name": "supported_mean", "unit": "sentence", "sentences": "mean"})
    assert "sentences" not in least.model_dump(mode="json")
    a = evaluate(cases, [least], judge, progress=False, min_valid_mass=0.0).records  # a random model's mass is low
    b = evaluate(cases, [mean], judge, progress=False, min_valid_mass=0.0).records
    for r, s in zip(a, b):
        p = [x.p_yes for x in s.detail.sentences]
        assert [x.p_yes for x in r.detail.sentences] == p
        assert r.score == pytest.approx(min(p)) and s.score == pytest.approx(np.mean(p))
    with pytest.raises(ConfigError, match="unit: sentence"):
        metric_from_dict({**ENTAILMENT, "sentences": "mean"})


def test_a_sentence_is_an_output_without_a_break():
    assert sentences_of("  no break here ") == ["no break here"]
    assert sentences_of("One. Two.") == ["One.", "Two."]
    case = TestCase(id="x", input="src", actual_output="A b. C d.")
    assert prompt_of(FeatureSpec(layers=[1]), case) == "Input:\nsrc\n\nOutput:"
