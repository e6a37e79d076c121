"""What each kind tells training: the labels it takes, whether it can be trained, its targets and readings."""

from __future__ import annotations

import numpy as np
import pytest

from localjudge.errors import ConfigError
from localjudge.kinds import KINDS, kind_of
from localjudge.metrics import builtin_metric
from localjudge.metrics.spec import metric_from_dict


@pytest.mark.parametrize(
    ("metric", "label_kind", "scale"),
    [
        ("coherence", "rating", (1, 5)),
        ("consistency_entailment", "binary", None),
        ("pairwise", "preference", None),
        ("rouge_l", None, None),
        ("consistency_likelihood", None, None),
        ("pairwise_likelihood", None, None),
    ],
)
def test_each_kind_says_which_labels_its_metrics_take(metric, label_kind, scale):
    m = builtin_metric(metric)
    assert kind_of(m).label_kind(m) == label_kind
    assert kind_of(m).label_scale(m) == scale


def test_only_the_trainable_kinds_say_so():
    assert sorted(name for name, k in KINDS.items() if k.trainable) == ["entailment", "geval", "pairwise"]


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"name": "rouge_l"}, "is a reference metric; tuning trains a judge's reading"),
        ({"name": "coherence", "reasoning": "before"}, "reads its score after generated reasoning"),
        ({"name": "consistency_entailment", "unit": "sentence"}, "tune a metric with unit: response"),
        ({"name": "pairwise", "allow_tie": True}, "allows ties"),
    ],
)
def test_a_metric_that_cannot_be_trained_is_refused_by_its_kind(spec, words):
    base = builtin_metric(spec["name"])
    m = metric_from_dict({**base.model_dump(), **spec})
    with pytest.raises(ConfigError, match=words):
        kind_of(m).check_trainable(m)


@pytest.mark.parametrize("name", ["coherence", "consistency_entailment", "pairwise"])
def test_trainable_metrics_pass_the_check(name):
    m = builtin_metric(name)
    kind_of(m).check_trainable(m)


def test_g_eval_teaches_the_rating_spread_over_the_two_nearest_scores():
    m = builtin_metric("coherence")
    (example,) = kind_of(m).training_examples(m, "prompt", 3.25)
    assert example.prompt == "prompt" and example.target.tolist() == [0, 0, 0.75, 0.25, 0]
    dists = np.array([[0, 0, 1.0, 0, 0], [0.5, 0, 0, 0, 0.5]])
    assert kind_of(m).example_readings(m, dists, np.zeros(2, int)).tolist() == [3.0, 3.0]  # the expected score


def test_entailment_teaches_p_yes():
    m = builtin_metric("consistency_entailment")
    (example,) = kind_of(m).training_examples(m, "prompt", 0.0)
    assert example.target.tolist() == [0.0, 1.0]
    assert kind_of(m).example_readings(m, np.array([[0.8, 0.2]]), np.zeros(1, int)).tolist() == [0.8]


def test_pairwise_teaches_both_orders_with_swapped_targets_and_reads_output_1_in_each():
    m = builtin_metric("pairwise")
    first, second = kind_of(m).training_examples(m, ("1 then 2", "2 then 1"), 1.0)
    assert (first.prompt, first.target.tolist()) == ("1 then 2", [1.0, 0.0])
    assert (second.prompt, second.target.tolist()) == ("2 then 1", [0.0, 1.0])
    dists = np.array([[0.9, 0.1], [0.3, 0.7]])  # A, B: output 1 is A first, then B
    assert kind_of(m).example_readings(m, dists, np.array([0, 1])).tolist() == [0.9, 0.7]
