"""The report in a real browser: Debian's Chromium, headless, with the network blocked.

Each view is opened as a user opens it, from `file://` with the table's state in the URL
fragment; `--dump-dom` gives the page as its script left it, `--screenshot` what it drew.
`make test` installs Chromium where it is missing (the Makefile's test set-up).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from localjudge.report import ReportOptions, write_report
from localjudge.runs.results_file import read_results

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # no network: every host name fails to resolve and every connection goes to a closed port
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=http://127.0.0.1:9",
]
BAR_BLUE = (0x3B, 0x6F, 0xD4)


def browse(page: Path, fragment: str, *args: str) -> str:
    assert CHROMIUM, "Debian's chromium is not installed: `make test` installs it (apt-get install chromium)"
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args, f"{page.as_uri()}#{fragment}"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def table(dom: str) -> str:
    body = re.search(r'<tbody id="rows">(.*?)</tbody>', dom, re.S)
    assert body is not None, "no table of cases"
    return body.group(1)


def shown_rows(dom: str) -> list[str]:
    return re.findall(r'<tr class="row[^"]*" data-i="\d+"><td class="case-id">([^<]*)</td>', table(dom))


@pytest.fixture(scope="module")
def page(runs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("page") / "report.html"
    write_report([runs.a, runs.b], out, ReportOptions(n_bootstrap=200))
    return out


def test_the_page_renders_every_case_and_why_some_are_unscored(page, runs):
    dom = browse(page, "", "--dump-dom")
    assert re.search(r'<body[^>]* data-render-ms="[\d.]+"', dom), "the script did not finish its first render"
    assert sorted(set(shown_rows(dom))) == runs.ids and len(shown_rows(dom)) == 36
    # every record with a distribution draws its bars: all but the 3 unscored for a missing field
    assert table(dom).count('<span class="dist">') == 36 - 3
    unscored = [r for r in read_results(runs.a) if r.score is None]
    assert len(unscored) == 5 and len({r.unscored_reason for r in unscored}) == 2
    shown = table(dom).replace("&#39;", "'")
    for r in unscored:
        row = re.search(rf'<td class="case-id">{r.case_id}</td><td>{r.metric}</td>.*?</tr>', shown)
        assert row is not None and f'<span class="outcome-unscored">unscored: {r.unscored_reason}</span>' in row.group()
    assert "Spearman ρ" in dom and "judge-a (A) vs judge-b (B)" in dom  # agreement and comparison drawn


def test_filters_in_the_fragment_change_the_rows(page, runs):
    dom = browse(page, "metric=correctness&judge=judge-a&min=0.5&sort=score&dir=desc", "--dump-dom")
    high = [r for r in read_results(runs.a) if r.metric == "correctness" and r.score is not None and r.score >= 0.5]
    ordered = [r.case_id for r in sorted(high, key=lambda r: -(r.score or 0))]
    assert shown_rows(dom) == ordered and 0 < len(ordered) < 12


def blue_pixels(png: Path) -> int:
    pixels = np.asarray(Image.open(png).convert("RGB"), dtype=int)  # (H, W, 3)
    return int((np.abs(pixels - np.array(BAR_BLUE)).max(axis=2) <= 24).sum())


def test_the_distribution_bars_are_drawn(page, tmp_path):
    # the same page twice, every correctness row shown, then none: what differs, in the bars' blue, is the bars
    blue = {}
    for name, fragment in (("rows", "metric=correctness"), ("none", "q=no-such-case")):
        shot = tmp_path / f"{name}.png"
        browse(page, fragment, f"--screenshot={shot}", "--window-size=1200,3600", "--hide-scrollbars")
        blue[name] = blue_pixels(shot)
    assert blue["none"] > 0  # the histograms of the summary
    assert blue["rows"] - blue["none"] > 22 * 9 * 3, blue  # 22 rows, each with bars 9 pixels wide
