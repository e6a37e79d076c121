"""One agreement figure per kind of label; expected values are those of tune's former `tune.agreement` (15ccff4)."""

from __future__ import annotations

import numpy as np
import pytest

from localjudge.errors import ConfigError
from localjudge.labels import Agreement, Labels, agreement, spearman_agreement
from localjudge.metrics import builtin_metric

HUMAN = np.array([1, 2, 3, 4, 5, 1, 3, 2, 5, 4, 2, 2], float)
GROUPS = ("a",) * 4 + ("b",) * 4 + ("c",) * 4
SCORES = np.array([0.1, 0.4, 0.2, 0.8, 0.9, 0.3, 0.5, 0.2, 0.7, 0.6, np.nan, 0.1])


def test_ratings_read_summary_level_spearman_or_all_cases_when_no_group_has_3():
    labels = Labels(HUMAN, GROUPS, "h", "rating", (1.0, 5.0))
    coherence = builtin_metric("coherence")
    every = agreement(coherence, SCORES, labels)
    assert isinstance(every, Agreement) and every.value == pytest.approx(0.8666666666666666, abs=1e-15)
    assert every.name.startswith("Spearman rho of expected score vs human, per group averaged")
    few = agreement(coherence, SCORES[[0, 1, 4, 5]], labels, np.array([0, 1, 4, 5]))  # groups of 2: all cases
    assert few.value == pytest.approx(0.9486832980505139, abs=1e-15)
    assert agreement(coherence, np.full(12, np.nan), labels).value is None


def test_yes_no_labels_read_roc_auc_and_choices_read_accuracy():
    yes = Labels(np.array([1, 0, 1, 1, 0, 0, 1, 0], float), ("g",) * 8, "h", "binary")
    auc = agreement(builtin_metric("consistency_entailment"), np.array([0.9, 0.2, 0.6, 0.4, 0.5, 0.1, 0.8, 0.45]), yes)
    assert auc == Agreement("ROC AUC of P(yes) against the human labels", 0.875)
    chosen = Labels(np.array([1, 0, 1, 0, 1, 1], float), ("g",) * 6, "h", "preference")
    acc = agreement(builtin_metric("pairwise"), np.array([0.7, 0.6, 0.4, 0.2, 0.9, 0.5]), chosen)
    assert acc == Agreement("accuracy of P(output 1 better) > 0.5 against the human choices", 0.5)


def test_labels_of_another_kind_than_the_metric_takes_are_refused():
    with pytest.raises(ConfigError, match="takes rating labels, not binary ones"):
        agreement(builtin_metric("coherence"), np.zeros(2), Labels(np.zeros(2), ("a", "b"), "h", "binary"))


def test_spearman_with_groups_falls_back_to_all_items_only_when_asked():
    x, y, g = np.array([1.0, 2, 3, 4]), np.array([1.0, 3, 2, 4]), np.array(list("aabb"))
    assert spearman_agreement(x, y, g) is None  # calibrate's hybrid fit: per group only
    assert spearman_agreement(x, y, g, fall_back=True) == pytest.approx(0.8)
    assert spearman_agreement(x, y, None) == pytest.approx(0.8)
