"""`localjudge demo` (what `make demo` runs) on the real default judge, then `localjudge calibrate` on its records.

These are the figures the README's quick start and its calibration example quote, so a change in
the demo, its data, the judge's readings or the calibration report shows up here (and in
tests/project/test_readme_figures.py, which finds the README's figures in this file).
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from localjudge.cli import main

pytestmark = pytest.mark.slow


def test_the_demo_and_a_calibration_of_its_records(localjudge_scripted, smollm_judge, monkeypatch, tmp_path):
    localjudge_scripted.add_any(smollm_judge)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["demo", "--no-progress", "--out", "out/demo_results.jsonl"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    rows = [line for line in lines if line.startswith(("article 1 ", "article 2 ", "article 3 "))]
    assert len(rows) == 48  # 3 articles × 16 summaries
    assert "averaged over 3 of 3 articles (n = 48 summaries)" in result.stdout
    judge = next(line for line in lines if "(consistency_likelihood): ρ =" in line)
    rouge = next(line for line in lines if line.lstrip().startswith("ROUGE-L vs the reference"))
    assert "ρ = +0.454" in judge and "per article: +0.64, +0.41, +0.31" in judge
    assert "ρ = +0.127" in rouge and "per article: -0.06, +0.25, +0.19" in rouge

    # the README's calibration example: `localjudge calibrate` on the records `make demo` writes
    report = CliRunner().invoke(
        main, ["calibrate", "agreement", "out/demo_results.jsonl", "--human", "human_consistency", "--group", "doc_id"]
    )
    assert report.exit_code == 0, report.output
    text = report.stdout
    assert "Calibration: 48 items, 48 scored, 0 unscored (0.0%)" in text
    assert "Spearman ρ     0.508   95% CI [0.308, 0.639]" in text  # dataset level
    assert "Spearman ρ     0.454   95% CI [0.308, 0.639]" in text  # summary level: ρ per article, averaged
    assert "only 48 labelled items (< 65)" in text and "aim for 119–150" in text
    assert "NOT READY: summary-level Spearman ρ = 0.454 < target 0.80; only 48 labelled items (< 65)" in text
    plots = sorted(p.name for p in (tmp_path / "calibration_plots").iterdir())
    assert plots == ["calibration_histograms.png", "calibration_scatter.png"]
