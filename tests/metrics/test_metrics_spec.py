"""Metric definitions: rubric validation, scales and normalisation, files, built-in metrics."""

from __future__ import annotations

import json

import pytest

from localjudge.errors import ConfigError, UnknownNameError
from localjudge.metrics import builtin_metric, builtin_names, load_metric_file, resolve_metric
from localjudge.metrics.builtin import RAG_TRIAD, SUMMEVAL, with_reasoning
from localjudge.metrics.spec import GEvalMetric, PairwiseMetric, dump_metric, metric_from_dict

BASE = {"name": "clarity", "task": "Judge an answer.", "criteria": "Is it clear?", "fields": ["input", "actual_output"]}


def metric(**kw) -> GEvalMetric:
    return metric_from_dict({**BASE, **kw})


def rng(low: int, high: int, text: str = "meaning") -> dict:
    return {"low": low, "high": high, "description": text}


# -- rubric validation ----------------------------------------------------------------------------


def test_valid_rubric_covering_the_scale_has_no_gaps():
    m = metric(rubric=[rng(1, 2), rng(3, 3), rng(4, 5)])
    assert m.rubric_gaps() == []


def test_rubric_gaps_are_reported():
    m = metric(low=0, high=10, rubric=[rng(0, 2), rng(5, 7), rng(10, 10)])
    assert m.rubric_gaps() == [3, 4, 8, 9]


def test_no_rubric_means_no_gaps():
    assert metric().rubric_gaps() == []


@pytest.mark.parametrize("low, high, value, expected", [(1, 5, 3.0, 0.5), (1, 1, 1.0, 0.0)])
def test_single_point_ranges_are_allowed(low, high, value, expected):
    # every range a single point: no range has zero width problems, normalising uses the scale
    m = metric(rubric=[rng(s, s) for s in range(1, 6)])
    assert m.rubric_gaps() == []
    assert metric(rubric=[rng(low, high)]).normalize(value) == pytest.approx(expected)


@pytest.mark.parametrize(
    "rubric, message",
    [
        ([rng(0, 2)], "outside the scale"),
        ([rng(4, 6)], "outside the scale"),
        ([rng(1, 3), rng(3, 5)], "overlap"),
        ([rng(4, 5), rng(1, 4)], "overlap"),
        ([rng(4, 2)], "reversed"),
        ([{"low": 1.5, "high": 2, "description": "x"}], "rubric.0.low"),
        ([{"low": "one", "high": 2, "description": "x"}], "rubric.0.low"),
        ([{"low": 1, "high": 2, "description": ""}], "rubric.0.description"),
        ([{"low": 1, "high": 2, "description": "x", "extra": 1}], "rubric.0.extra"),
    ],
)
def test_invalid_rubrics_raise_config_error(rubric, message):
    with pytest.raises(ConfigError, match=message) as info:
        metric_from_dict({**BASE, "rubric": rubric}, "my_metric.yaml")
    assert str(info.value).startswith("my_metric.yaml: ")


@pytest.mark.parametrize(
    "update, message",
    [
        ({"low": 3, "high": 3}, "invalid scale 3..3"),  # a one-point scale cannot be normalised
        ({"low": 5, "high": 1}, "invalid scale"),
        ({"low": -1, "high": 5}, "invalid scale"),
        ({"high": 101}, "invalid scale"),
        ({"steps": []}, "steps"),
        ({"steps": ["ok", "  "]}, "steps"),
        ({"fields": ["input", "input"]}, "repeated"),
        ({"fields": ["question"]}, "fields"),
        ({"required": ["expected_output"]}, "required"),
        ({"threshold": 1.5}, "threshold"),
        ({"reasoning": "sometimes"}, "reasoning"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_invalid_metrics_raise_config_error(update, message):
    with pytest.raises(ConfigError, match=message):
        metric_from_dict({**BASE, **update})


def test_missing_field_is_named():
    data = dict(BASE)
    del data["criteria"]
    with pytest.raises(ConfigError, match="criteria"):
        metric_from_dict(data)


def test_non_mapping_is_rejected():
    with pytest.raises(ConfigError, match="must be a mapping"):
        metric_from_dict(["name", "x"], "m.yaml")


# -- scales ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "low, high, expected, normalized",
    [
        (1, 5, 1.0, 0.0),
        (1, 5, 5.0, 1.0),
        (1, 5, 4.0, 0.75),
        (0, 10, 7.0, 0.7),
        (0, 10, 0.0, 0.0),
        (0, 100, 35.0, 0.35),
        (0, 100, 100.0, 1.0),
        (1, 3, 2.0, 0.5),
        (1, 3, 1.0, 0.0),
        (1, 3, 2.5, 0.75),
    ],
)
def test_normalize_uses_the_scale_low(low, high, expected, normalized):
    assert metric(low=low, high=high).normalize(expected) == pytest.approx(normalized)


# -- files ----------------------------------------------------------------------------------------

YAML_METRIC = """\
name: concise
task: Judge a response.
criteria: Is it concise?
fields: [actual_output]
low: 0
high: 10
rubric:
  - {low: 0, high: 4, description: wordy}
  - {low: 5, high: 10, description: concise}
steps:
  - Count the words.
"""


def test_load_yaml_file(tmp_path):
    path = tmp_path / "concise.yaml"
    path.write_text(YAML_METRIC, encoding="utf-8")
    m = load_metric_file(path)
    assert isinstance(m, GEvalMetric)
    assert (m.name, m.low, m.high, m.steps) == ("concise", 0, 10, ["Count the words."])
    assert [(r.low, r.high) for r in m.rubric] == [(0, 4), (5, 10)]


def test_load_json_file_and_pairwise(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({**BASE, "low": 1, "high": 3}), encoding="utf-8")
    assert load_metric_file(path).high == 3
    pw = tmp_path / "pw.json"
    pw.write_text(json.dumps({"kind": "pairwise", "name": "pw", "task": "t", "criteria": "c", "allow_tie": True}))
    m = load_metric_file(pw)
    assert isinstance(m, PairwiseMetric) and m.allow_tie


def test_bad_yaml_names_file_and_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\ntask: t\ncriteria: [unclosed\nfields: [input]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.yaml:4: invalid YAML"):
        load_metric_file(path)
    path.write_text("name: x\n  task: t\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.yaml:2: invalid YAML"):
        load_metric_file(path)


def test_invalid_rubric_in_file_names_file(tmp_path):
    path = tmp_path / "overlap.yaml"
    path.write_text(YAML_METRIC.replace("{low: 5, high: 10", "{low: 4, high: 10"), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"overlap\.yaml: .*rubric ranges 0-4 and 4-10 overlap"):
        load_metric_file(path)


def test_unreadable_metric_files(tmp_path):
    with pytest.raises(ConfigError, match=r"cannot read metric file .*missing\.yaml: it does not exist"):
        load_metric_file(tmp_path / "missing.yaml")
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match=r"latin1\.yaml:1: not valid UTF-8 \(byte offset 9\)"):
        load_metric_file(path)
    path = tmp_path / "empty.yaml"
    path.write_text("")
    with pytest.raises(ConfigError, match="mapping"):
        load_metric_file(path)


def test_dump_metric_round_trips(tmp_path):
    m = metric(rubric=[rng(1, 2), rng(3, 5)], steps=["One.", "Two."], low=1, high=5)
    path = tmp_path / "m.yaml"
    path.write_text(dump_metric(m), encoding="utf-8")
    assert load_metric_file(path) == m


def test_resolve_metric_from_path_with_overrides(tmp_path):
    path = tmp_path / "concise.yaml"
    path.write_text(YAML_METRIC, encoding="utf-8")
    m = resolve_metric(str(path), reasoning="before")
    assert m.name == "concise" and m.reasoning == "before"
    with pytest.raises(ConfigError, match="invalid scale"):  # overrides are validated, as for built-ins
        resolve_metric(str(path), low=20)


# -- built-in metrics -----------------------------------------------------------------------------


def test_builtin_names():
    assert set(builtin_names()) >= {
        "correctness",
        "completeness",
        "style",
        "coherence",
        "consistency",
        "relevance",
        "fluency",
        "faithfulness",
        "context_relevance",
        "answer_relevance",
        "pairwise",
    }


@pytest.mark.parametrize("name", [n for n in builtin_names() if n != "style"])
def test_every_builtin_loads(name):
    m = builtin_metric(name)
    assert m.name == name
    if isinstance(m, GEvalMetric):
        assert m.steps, "built-in G-Eval metrics pin their steps"
        assert m.rubric_gaps() == []


@pytest.mark.parametrize("name, high", [("coherence", 5), ("consistency", 5), ("relevance", 5), ("fluency", 3)])
def test_summeval_scales(name, high):
    assert name in SUMMEVAL
    m = builtin_metric(name)
    assert (m.low, m.high) == (1, high)


def test_rag_triad_fields():
    assert set(RAG_TRIAD) == {"faithfulness", "context_relevance", "answer_relevance"}
    assert builtin_metric("faithfulness").required_fields == ["retrieval_context", "actual_output"]
    assert "retrieval_context" in builtin_metric("context_relevance").fields
    assert builtin_metric("answer_relevance").fields == ["input", "actual_output"]


def test_correctness_does_not_penalise_brevity():
    m = builtin_metric("correctness")
    assert "brief" in m.criteria and "still fully correct" in m.criteria
    assert any("brevity" in s for s in m.steps)
    assert m.fields == ["input", "actual_output", "expected_output"]


def test_style_needs_a_style_guide():
    with pytest.raises(ConfigError, match="style guide"):
        builtin_metric("style")
    m = builtin_metric("style", style_guide="Use British spelling.\n")
    assert "Use British spelling." in m.criteria and "{style_guide}" not in m.criteria


def test_pairwise_builtin():
    m = builtin_metric("pairwise")
    assert isinstance(m, PairwiseMetric)
    assert m.output_fields == ("output_1", "output_2") and not m.allow_tie
    assert builtin_metric("pairwise", allow_tie=True).allow_tie


def test_unknown_builtin_suggests_close_match():
    with pytest.raises(UnknownNameError, match="did you mean 'correctness'"):
        builtin_metric("correctnes")


def test_builtin_overrides_are_validated():
    assert builtin_metric("coherence", reasoning="after").reasoning == "after"
    with pytest.raises(ConfigError, match="reasoning"):
        builtin_metric("coherence", reasoning="maybe")
    assert with_reasoning(builtin_metric("fluency"), "before").reasoning == "before"
    assert with_reasoning(builtin_metric("pairwise"), "before") == builtin_metric("pairwise")
