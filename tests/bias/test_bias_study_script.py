"""benchmarks/bias/self_preference.py end to end with scripted fake models: runs, resumes after a kill, re-analyses.

Three fake models (two of family alpha, one of beta) summarise two tiny articles and answer two
prompts; the study judges everything with them. A run killed in the middle of a judge's pairwise
phase and started again must write the very judgments of an uninterrupted run; --analyse-only must
rebuild the reports without loading a model; a rerun may add items but not drop them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from pathlib import Path

import pytest

from localjudge.testing import fake_judge

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bias" / "self_preference.py"
FAMILIES = {"fa-1": "alpha", "fa-2": "alpha", "fb-1": "beta"}


def _u(*parts: object) -> float:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()
    return int(digest[:8], 16) / 2**32


def _block(prompt: str, tag: str) -> str:
    return re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.S).group(1)


def _fake(name: str, calls: list[int] | None = None, die_after: int | None = None):
    """A fake model: writes '<name> wrote ...', prefers its own text when asked which it wrote."""

    def write(prompt: str) -> str:
        return f" {name} wrote {_u(name, prompt):.3f} about it."

    def policy(prompt: str) -> dict[str, float]:
        if "<response_a>" in prompt:
            if calls is not None:
                calls[0] += 1
                if die_after is not None and calls[0] > die_after:
                    raise KeyboardInterrupt  # the run is killed here
            a, b = _block(prompt, "response_a"), _block(prompt, "response_b")
            if "Which response did you write?" in prompt:
                p = 0.8 if name in a else 0.2 if name in b else 0.5
            else:
                p = 0.3 + 0.4 * _u(name, a, b)
            return {"A": 0.9 * p, "B": 0.9 * (1 - p)}
        k = 1 + int(5 * _u(name, _block(prompt, "actual_output")))
        return {str(k): 0.7, str(min(k + 1, 5)): 0.2}

    return fake_judge(policy, write, name=name, family=FAMILIES[name])


@pytest.fixture
def study(localjudge_scripted, tmp_path):
    spec = importlib.util.spec_from_file_location("self_preference", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = []
    for d in range(3):
        article = f"Article {d}. The council met on Monday. It voted {d + 3} to 2 to build a bridge."
        for system, consistency in (("M20", 3.0 + d / 3), ("M22", 5.0), ("M5", 4.0)):
            rows.append(
                {
                    "doc_id": f"doc{d}",
                    "system_id": system,
                    "source": article,
                    "reference": f"The council voted for a bridge ({d}).",
                    "system_output": f"{system} says the council voted {d + 3} to 2.",
                    "scores": {"consistency": consistency},
                }
            )
    summeval = tmp_path / "summeval.json"
    summeval.write_text(json.dumps(rows))
    prompts = tmp_path / "prompts.jsonl"
    lines = [
        {"id": f"p{i}", "input": f"Question {i}?", "reference": f"Answer {i}.", "category": c}
        for i, c in enumerate(["factual", "factual", "explain"])
    ]
    prompts.write_text("".join(json.dumps(x) + "\n" for x in lines))
    loads: list[str] = []

    def run(out: Path, *extra: str, die_after: int | None = None, articles: int = 2, figures: bool = False) -> int:
        calls = [0]

        def load(asked):
            loads.append(asked.name)
            return _fake(asked.name, calls, die_after)

        localjudge_scripted.add_any(load)
        args = ["--out-dir", str(out), "--summeval", str(summeval), "--prompts-file", str(prompts)]
        args += ["--articles", str(articles), "--prompts", "2", "--judges", *FAMILIES, "--bootstrap", "50", *extra]
        args += [] if figures else ["--no-figures"]  # drawn in one run: 30 PNGs were half of each run's time
        return module.main(args)

    run.loads = loads
    return run


JUDGMENTS = ("pointwise_records.jsonl", "pairwise_records.jsonl", "recognition/pairwise_records.jsonl")


def test_a_killed_run_resumes_to_the_judgments_of_a_clean_run(study, tmp_path):
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    assert study(clean) == 0
    with pytest.raises(KeyboardInterrupt):
        study(killed, die_after=25)  # inside the first judge's pairwise phase
    assert not (killed / "results.md").exists()
    study.loads.clear()
    assert study(killed) == 0
    assert "fa-1" in study.loads  # the killed judge is loaded again to finish
    for task in ("summaries", "answers"):
        for name in JUDGMENTS:
            assert (killed / task / name).read_bytes() == (clean / task / name).read_bytes(), (task, name)
        one = json.loads((clean / task / "report.json").read_text())
        two = json.loads((killed / task / "report.json").read_text())
        assert one["models"] == two["models"] and one["pairwise"] == two["pairwise"]
    study.loads.clear()
    assert study(killed) == 0 and study.loads == []  # all done: no model loads
    timings = [json.loads(line) for line in (killed / "timings.jsonl").read_text().splitlines()]
    assert {"generate", "pointwise", "logppl", "pairwise", "recognition", "analysis"} <= {t["phase"] for t in timings}


def test_study_outputs_and_analysis_only(study, tmp_path):
    out = tmp_path / "out"
    assert study(out, figures=True) == 0
    summaries = json.loads((out / "summaries" / "report.json").read_text())
    # 3 models + reference + 2 systems = 6 generators: 15 pairs per article, each judged by 3 judges
    assert len((out / "summaries" / "pairwise_records.jsonl").read_text().splitlines()) == 2 * 15 * 3
    targets = {(x["judge"], x["target"]): x for x in summaries["models"]["targets"]}
    assert set(targets) == {("fa-1", "fa-1"), ("fa-1", "fa-2"), ("fa-2", "fa-2"), ("fa-2", "fa-1"), ("fb-1", "fb-1")}
    recognition = json.loads((out / "summaries" / "recognition" / "report.json").read_text())
    own = {x["judge"]: x for x in recognition["models"]["targets"] if x["relation"] == "self"}
    assert own["fb-1"]["rate"]["value"] == pytest.approx(0.8)  # the fake knows its own text
    for name in ("heatmap.png", "win_rates.png", "position.png"):
        assert (out / "summaries" / name).read_bytes()[:4] == b"\x89PNG"
    results = (out / "results.md").read_text()
    assert "## Summaries" in results and "## Answers" in results and "Human anchor" in results
    before = {t: (out / t / "report.json").read_text() for t in ("summaries", "answers")}
    study.loads.clear()
    assert study(out, "--analyse-only") == 0 and study.loads == []
    assert {t: (out / t / "report.json").read_text() for t in ("summaries", "answers")} == before
    # the analysis reads the records' own settings: a run's flags need not be repeated
    assert study(out, "--analyse-only", "--dtype", "bfloat16") == 0 and study.loads == []
    assert {t: (out / t / "report.json").read_text() for t in ("summaries", "answers")} == before


def test_a_rerun_may_add_items_but_not_drop_them(study, tmp_path):
    out = tmp_path / "out"
    assert study(out, articles=1) == 0
    assert study(out, articles=2) == 0
    report = json.loads((out / "summaries" / "report.json").read_text())
    assert report["n_items"] == 2
    with pytest.raises(SystemExit, match="may only add"):
        study(out, articles=1)
