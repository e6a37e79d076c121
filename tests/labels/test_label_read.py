"""One reader of a label field: a rating mapped onto the metric's scale, yes/no, a choice; one group default."""

from __future__ import annotations

import numpy as np
import pytest

from localjudge.errors import ConfigError, DataError
from localjudge.io.cases import TestCase
from localjudge.labels import Labels, group_names, read_labels
from localjudge.metrics import builtin_metric
from localjudge.metrics.spec import metric_from_dict


def cases(values, **extra) -> list[TestCase]:
    return [TestCase(id=f"c{i}", input=f"doc {i // 2}", extra={"h": v, **extra}) for i, v in enumerate(values)]


def test_ratings_on_another_scale_map_linearly_onto_the_metrics():
    coherence = builtin_metric("coherence")  # 1..5
    labels = read_labels(coherence, cases([0, 10, 5, 2.5]), "h", scale=(0, 10))
    assert isinstance(labels, Labels) and labels.kind == "rating" and labels.scale == (1.0, 5.0)
    assert labels.values.dtype == np.float64 and labels.values.tolist() == [1.0, 5.0, 3.0, 2.0]
    assert labels.field == "h" and len(labels) == 4
    same = read_labels(coherence, cases([1, 4.5]), "h")  # the metric's own scale by default
    assert same.values.tolist() == [1.0, 4.5]
    three = metric_from_dict({**coherence.model_dump(), "name": "three", "high": 3})
    assert read_labels(three, cases([1, 5]), "h", scale=(1, 5)).values.tolist() == [1.0, 3.0]


def test_ratings_outside_the_scale_and_an_empty_scale_are_refused_with_the_next_step():
    with pytest.raises(DataError, match=r"1 labels in 'h' lie outside 1..5 \(e.g. 9\); give their scale with --human"):
        read_labels(builtin_metric("coherence"), cases([1, 9]), "h")
    with pytest.raises(ConfigError, match="the low end must be below the high end"):
        read_labels(builtin_metric("coherence"), cases([1, 2]), "h", scale=(5, 5))


def test_yes_no_and_choices_read_as_1_or_0():
    entail = read_labels(builtin_metric("consistency_entailment"), cases([1, 0, True, False]), "h")
    assert entail.kind == "binary" and entail.scale is None and entail.values.tolist() == [1.0, 0.0, 1.0, 0.0]
    pair = read_labels(builtin_metric("pairwise"), cases([1, 2, 2]), "h")
    assert pair.kind == "preference" and pair.values.tolist() == [1.0, 0.0, 0.0]
    with pytest.raises(DataError, match=r"1 labels in 'h' are not 1 \(yes\) or 0 \(no\) \(e.g. 2\)"):
        read_labels(builtin_metric("consistency_entailment"), cases([1, 2]), "h")
    with pytest.raises(DataError, match=r"are not 1 or 2 \(the better output\)"):
        read_labels(builtin_metric("pairwise"), cases([1, 0]), "h")


@pytest.mark.parametrize("value", [None, "high", float("nan")])
def test_a_missing_or_non_numeric_label_names_the_case(value):
    with pytest.raises(DataError, match=r"case 'c1': field 'h' must hold a number \(the human label\)"):
        read_labels(builtin_metric("coherence"), cases([1, value]), "h")


def test_a_metric_that_takes_no_labels_says_which_kinds_do():
    with pytest.raises(ConfigError, match=r"'rouge_l' is a reference metric, which does not learn from labels.*geval"):
        read_labels(builtin_metric("rouge_l"), cases([1, 2]), "h")


def test_one_group_default_the_input_else_the_case_id():
    rows = [TestCase(id="a", input="x"), TestCase(id="b", input="x"), TestCase(id="c"), TestCase(id="d", input="")]
    assert group_names(rows, None) == ["x", "x", "c", "d"]
    assert read_labels(builtin_metric("coherence"), cases([1, 2, 3]), "h").groups == ("doc 0", "doc 0", "doc 1")
    assert read_labels(builtin_metric("coherence"), cases([1, 2], doc=7), "h", group="doc").groups == ("7", "7")
    with pytest.raises(DataError, match="case 'c0' has no 'doc' field to group by"):
        read_labels(builtin_metric("coherence"), cases([1, 2]), "h", group="doc")
