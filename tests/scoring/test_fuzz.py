"""Property-based fuzzing: data files, metric scales and rubrics, and the score math.

Whatever the input, parsing fails only with `DataError`, metric validation only with
`ConfigError`, and the probability math keeps its invariants (probabilities sum to 1, the
expected score lies on the scale, results do not depend on the order of items in a batch).
"""

from __future__ import annotations

import csv
import io
import json
import math
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from reference import VOCAB

from localjudge.errors import ConfigError, DataError
from localjudge.io.cases import CASE_FIELDS, TEXT_FIELDS, load_cases
from localjudge.metrics.spec import GEvalMetric, metric_from_dict
from localjudge.scoring.distribution import outcome_mass, score_distribution
from localjudge.scoring.trie import build_score_tree
from localjudge.testing import fake_judge

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


# -- data files ---------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
field_names = st.sampled_from([*CASE_FIELDS, "id", "human", "doc_id", ""]) | st.text(max_size=8)
rows = st.dictionaries(field_names, json_values | st.text(max_size=30), max_size=7) | json_values
jsonl_lines = st.lists(
    st.one_of(rows.map(lambda r: json.dumps(r)), st.text(max_size=40).filter(lambda t: "\n" not in t)),
    max_size=8,
)


def _load(path, skip: bool):
    skipped: list[str] | None = [] if skip else None
    try:
        cases = load_cases(path, skipped)
    except DataError as exc:
        assert str(exc)  # a message, never empty
        return None, skipped
    assert cases and len({c.id for c in cases}) == len(cases)
    return cases, skipped


@FAST
@given(lines=jsonl_lines, skip=st.booleans())
def test_random_jsonl_only_raises_data_error(scratch, lines, skip):
    path = scratch / "d.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cases, skipped = _load(path, skip)
    if cases is not None:
        for c in cases:
            for f in TEXT_FIELDS:
                assert getattr(c, f) is None or isinstance(getattr(c, f), str)
        if skip:  # every non-blank line is either a case or a listed skip
            assert len(cases) + len(skipped) == sum(bool(line.strip()) for line in lines)


def test_jsonl_strings_may_hold_unicode_line_breaks(scratch):
    """Regression: a JSONL line is cut at "\\n" only, not at U+2028/U+0085/\\x1e inside a string."""
    path = scratch / "u.jsonl"
    texts = ["a\u2028b", "c\x85d", "e\x1ef\u2029g", "h\r\ni"]
    path.write_text("".join(json.dumps({"input": t}, ensure_ascii=False) + "\r\n" for t in texts), encoding="utf-8")
    assert [c.input for c in load_cases(path)] == texts


@FAST
@given(data=st.binary(max_size=200), suffix=st.sampled_from([".jsonl", ".json", ".csv"]), skip=st.booleans())
def test_random_bytes_only_raise_data_error(scratch, data, suffix, skip):
    path = scratch / f"b{suffix}"
    path.write_bytes(data)
    _load(path, skip)


@FAST
@given(value=st.lists(rows, max_size=5) | json_values)
def test_random_json_document_only_raises_data_error(scratch, value):
    path = scratch / "d.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    _load(path, False)


csv_cell = st.text(max_size=15)


@FAST
@given(
    header=st.lists(field_names, min_size=1, max_size=5),
    body=st.lists(st.lists(csv_cell, max_size=6), max_size=5),
    skip=st.booleans(),
)
def test_random_csv_only_raises_data_error(scratch, header, body, skip):
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(body)
    path = scratch / "d.csv"
    path.write_text(buf.getvalue(), encoding="utf-8")
    _load(path, skip)


@FAST
@given(texts=st.lists(st.text(max_size=30).filter(lambda t: "\x00" not in t), min_size=1, max_size=5))
def test_csv_text_round_trips(scratch, texts):
    """Well-formed CSV keeps every text cell exactly (quotes, commas, newlines inside cells)."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["id", "input"])
    w.writerows([[f"r{i}", t] for i, t in enumerate(texts)])
    path = scratch / "rt.csv"
    path.write_text(buf.getvalue(), encoding="utf-8")
    cases = load_cases(path)
    assert [c.input for c in cases] == texts


# -- scales and rubrics ---------------------------------------------------------------------------------

bounds = st.integers(-3, 104)
ranges = st.lists(st.tuples(bounds, bounds), max_size=6)


def _metric(low, high, rubric) -> dict:
    return {
        "name": "m",
        "task": "t",
        "criteria": "c",
        "fields": ["input"],
        "low": low,
        "high": high,
        "rubric": [{"low": a, "high": b, "description": f"r{i}"} for i, (a, b) in enumerate(rubric)],
    }


def _expected_valid(low, high, rubric) -> bool:
    if not 0 <= low < high <= 100:
        return False
    if any(a > b or a < low or b > high for a, b in rubric):
        return False
    spans = sorted(rubric)
    return all(b2[0] > b1[1] for b1, b2 in pairwise(spans))


@settings(max_examples=400, deadline=None)
@given(low=bounds, high=bounds, rubric=ranges)
def test_scale_and_rubric_validation(low, high, rubric):
    try:
        metric = metric_from_dict(_metric(low, high, rubric))
    except ConfigError:
        assert not _expected_valid(low, high, rubric)
        return
    assert _expected_valid(low, high, rubric)
    covered = {s for a, b in rubric for s in range(a, b + 1)}
    want = [s for s in range(low, high + 1) if s not in covered] if rubric else []
    assert metric.rubric_gaps() == want
    assert metric.normalize(low) == 0 and metric.normalize(high) == 1


@settings(max_examples=200, deadline=None)
@given(low=bounds, high=bounds, a=bounds)
def test_valid_rubrics_are_accepted(low, high, a):
    """Generated valid rubrics (a partition of the scale) always validate, with no gaps."""
    assume(0 <= low < high <= 100)
    cut = min(max(a, low), high)
    rubric = [(low, cut)] + ([(cut + 1, high)] if cut < high else [])
    metric = metric_from_dict(_metric(low, high, rubric))
    assert metric.rubric_gaps() == []


junk = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.integers(-200, 200),
)


@FAST
@given(low=junk, high=junk, threshold=junk, fields=junk | st.lists(st.text(max_size=12), max_size=3))
def test_metric_junk_types_only_raise_config_error(low, high, threshold, fields):
    data = {
        "name": "m",
        "task": "t",
        "criteria": "c",
        "fields": fields,
        "low": low,
        "high": high,
        "threshold": threshold,
    }
    try:
        metric = metric_from_dict(data)
    except ConfigError:
        return
    assert isinstance(metric, GEvalMetric)
    assert 0 <= metric.low < metric.high <= 100 and 0 <= metric.threshold <= 1


# -- score math -------------------------------------------------------------------------------------------


def _tree_logprobs(tree, logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What the engine reads, from (B, N, V) next-token logits at every tree node."""
    logp = logits - np.logaddexp.reduce(logits, axis=-1, keepdims=True)  # (B, N, V) log-softmax
    edge = np.zeros(logits.shape[:2])
    edge[:, 1:] = logp[:, tree.parents[1:], tree.token_ids[1:]]
    ends = np.ones(len(VOCAB), dtype=bool)
    ends[tree.continue_ids] = False
    end = np.logaddexp.reduce(np.where(ends, logp, -np.inf), axis=-1)  # (B, N)
    return edge, end


scales = st.sampled_from([(1, 5), (0, 10), (1, 10), (0, 100), (3, 4), (0, 1), (5, 12)])


@FAST
@given(scale=scales, seed=st.integers(0, 2**32 - 1), batch=st.integers(1, 6), temp=st.floats(0.1, 20))
def test_random_logits_give_valid_distributions(scale, seed, batch, temp):
    low, high = scale
    tree = build_score_tree(VOCAB, low, high)
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(batch, tree.n_nodes, len(VOCAB))) * temp
    edge, end = _tree_logprobs(tree, logits)
    mass = outcome_mass(tree, edge, end)  # (B, V)
    assert mass.shape == (batch, high - low + 1)
    assert (mass >= 0).all() and (mass.sum(axis=1) <= 1 + 1e-9).all()
    for row in mass:
        d = score_distribution(row, low, high, min_valid_mass=0.0)
        if not d.scored:
            assert row.sum() == 0
            continue
        assert math.isclose(sum(d.probs.values()), 1.0, abs_tol=1e-9)
        assert low - 1e-9 <= d.expected <= high + 1e-9
        assert -1e-9 <= d.normalized <= 1 + 1e-9
        assert low <= d.mode <= high and d.std >= 0
    perm = rng.permutation(batch)  # the order of items in a batch changes nothing
    np.testing.assert_allclose(outcome_mass(tree, edge[perm], end[perm]), mass[perm], rtol=0, atol=1e-15)


@FAST
@given(mass=st.lists(st.floats(0, 1), min_size=2, max_size=11), threshold=st.floats(0, 1))
def test_score_distribution_never_guesses(mass, threshold):
    """Too little valid mass gives an unscored item (NaN, a reason), never a number."""
    arr = np.asarray(mass)
    arr = arr / max(1.0, arr.sum())  # a probability vector can hold at most 1
    d = score_distribution(arr, 1, len(mass), min_valid_mass=threshold)
    if d.scored:
        assert arr.sum() >= threshold and arr.sum() > 0
        assert 1 <= d.expected <= len(mass)
    else:
        assert math.isnan(d.expected) and d.mode is None and d.unscored_reason


def _policy(prompt: str) -> dict[str, float]:
    rng = np.random.default_rng(sum(map(ord, prompt)))
    p = rng.dirichlet(np.ones(6)) * rng.uniform(0.3, 1.0)
    return {s: float(x) for s, x in zip(["1", "2", "3", " 4", "5", "10"], p)}


@FAST
@given(
    prompts=st.lists(st.text(alphabet="abcdefgh .:", max_size=20), min_size=1, max_size=8), seed=st.integers(0, 1000)
)
def test_fake_judge_batch_order_invariance(prompts, seed):
    judge = fake_judge(_policy)
    order = np.random.default_rng(seed).permutation(len(prompts))
    base = judge.score_texts(prompts, 1, 10)
    shuffled = judge.score_texts([prompts[i] for i in order], 1, 10)
    for j, i in enumerate(order):
        assert shuffled[j].probs == pytest.approx(base[i].probs, abs=1e-12)
        assert shuffled[j].valid_mass == pytest.approx(base[i].valid_mass, abs=1e-12)
