"""Every figure in the README (and the docs pages its measurements moved to) is found where its
paragraph, list item or table row says it comes from.

How it works, and how to keep it passing:

- The README is cut into units: paragraphs, list items, table rows, and `text` code blocks (shown
  output, which take the sources of the paragraph before them). A table row also takes the
  sources of the paragraph just above its table (its caption).
- A unit's sources are the repository files it names in backticks (`benchmarks/x_results.md`,
  `tests/test_x.py`, `models.yaml`, ...). Its anchors are its other backticked words
  (`pmi:stmin`, `consistency_likelihood`): the names of the rows it quotes.
- A figure is a number outside code spans and links: one with a decimal point or an exponent
  (0.449, 1e-5), a percentage, or an integer of 10 and above (800 summaries). Smaller integers,
  versions (4.3.1), citation years, and numbers glued to a word (Qwen2.5, 270M) are not figures.
- Each figure must appear, as the same number with the same sign (a leading + and thousands
  separators aside), in one of its sources: `0.449` is not found in a file that says `0.4491`, nor
  `0.022` in one that says `-0.022`. In a markdown source it must appear in a paragraph, list item
  or table row that holds one of the unit's anchors (or under a heading that does), when any part
  of the source holds one; and a figure in a judge's column of a README table must appear where
  that judge is named (in the row or its heading), when the source names it at all. So a stale
  figure is not excused by the same number elsewhere in a long results file; name the row you
  quote (`ll:smin`) when the README's words differ from the source's.

A changed result therefore fails here until the README quotes it again, and a new figure needs a
source named beside it. The judges table is generated from models.yaml and compared whole, and
every python block must run on its own imports (copy-pasteable).
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import pytest

from localjudge.judges.adapters import ADAPTER, read_manifest
from localjudge.judges.heads import HEAD_WEIGHTS, is_head_folder, read_head_manifest
from localjudge.judges.registry import Registry, TunedSource, load_registry
from localjudge.weights.sources import HubSource, PackageChunksSource, PackageGGUFSource

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
# the README and the pages its lab notebook moved to (issue 47): their figures are checked alike
FIGURE_PAGES = ["README.md", "docs/quality.md", "docs/bias_study.md", "docs/cpu.md", "docs/gpu.md"]

SOURCE = re.compile(
    r"`((?:benchmarks|tests|localjudge|docs|examples|requirements)/[\w./-]+\.\w+|models\.yaml|pyproject\.toml|Makefile)`"
)
CODE_SPAN = re.compile(r"`([^`]+)`")
# a number not glued to a word, a dot or a path; versions (x.y.z) are not figures
FIGURE = re.compile(r"(?<![\w.\-/])[−+-]?(\d+(?:,\d{3})*(?:\.\d+)?(?:e[−-]?\d+)?)(?![\w/]|\.\d)")
# a number of a source file, with its minus sign unless the minus joins two words or numbers (top-20, 1-5)
NUMBER = re.compile(r"(?:(?<![\w.])-)?\d+(?:,\d{3})*(?:\.\d+)?(?:e-?\d+)?")
CITATION = re.compile(r"et al\.,? \d{4}")
TABLE_START = "<!-- judges table"
TABLE_END = "<!-- end of judges table -->"
JUDGES = {j.name for j in load_registry().judges}


@dataclass
class Unit:
    """A paragraph, list item, table row or shown output of a markdown file, with where it starts.

    `heading` is the nearest heading above it; `columns`, for a table row, its table's header cells;
    `context`, for a table row or a list item, the paragraph that introduces it (and the header row).
    """

    line: int
    text: str
    inherited: list[str] = field(default_factory=list)
    heading: str = ""
    columns: list[str] = field(default_factory=list)
    context: str = ""

    def sources(self) -> list[str]:
        return list(dict.fromkeys(SOURCE.findall(self.text) + self.inherited))

    def anchors(self) -> list[str]:
        """The backticked words that are not sources: the rows, metrics and scorers the unit quotes."""
        spans = [s.strip() for s in CODE_SPAN.findall(self.text)]
        return [s for s in dict.fromkeys(spans) if not SOURCE.fullmatch(f"`{s}`") and len(s) >= 3]

    def figures(self) -> list[str]:
        return [figure for figure, _ in self.figures_by_judge()]

    def figures_by_judge(self) -> list[tuple[str, str | None]]:
        """Each figure with the judge whose README table column holds it (None outside such a column)."""
        if not self.columns:
            return [(f, None) for f in _figures(self.text)]
        cells = self.text.strip().strip("|").split("|")
        return [
            (f, column if column in JUDGES else None)
            for column, cell in zip(self.columns + [""] * len(cells), cells)
            for f in _figures(cell)
        ]


def _figures(text: str) -> list[str]:
    prose = re.sub(r"`[^`]*`", " ", text)  # code spans: commands, names, options
    prose = re.sub(r"\]\([^)]*\)", "]", prose)  # link targets
    prose = re.sub(r"<!--.*?-->", " ", prose, flags=re.S)
    prose = CITATION.sub(" ", prose)
    found = []
    for match in FIGURE.finditer(prose):
        digits = _plain(match.group(1))
        if "." in digits or "e" in digits or int(digits) >= 10 or prose[match.end() : match.end() + 1] == "%":
            found.append(_plain(match.group(0)))
    return found


def _plain(number: str) -> str:
    """A number as compared: Unicode minus as "-", no leading "+", no thousands separators."""
    return number.replace(",", "").replace("−", "-").lstrip("+")


def units(text: str) -> list[Unit]:
    """The units of a markdown text, in order (code blocks other than `text` are skipped)."""
    out: list[Unit] = []
    lines = text.splitlines()
    block: list[tuple[int, str]] = []
    previous_paragraph: Unit | None = None
    heading = ""
    k = 0

    def flush() -> None:
        nonlocal previous_paragraph
        if not block:
            return
        if all(line.startswith("|") for _, line in block):  # a table: one unit per row, the caption's sources
            caption = previous_paragraph.sources() if previous_paragraph else []
            header = [c.strip().strip("*`") for c in block[0][1].strip().strip("|").split("|")]
            context = (previous_paragraph.text if previous_paragraph else "") + "\n" + block[0][1]
            out.extend(Unit(n, line, list(caption), heading, header, context) for n, line in block)
        else:
            items: list[Unit] = []
            intro = previous_paragraph.text if previous_paragraph else ""
            for n, line in block:
                starts_item = re.match(r"\s{0,2}(?:[-*]|\d+\.)\s", line)
                if starts_item or not items:
                    items.append(Unit(n, line, heading=heading, context=intro if starts_item else ""))
                else:
                    items[-1].text += "\n" + line
            out.extend(items)
            previous_paragraph = Unit(block[0][0], "\n".join(line for _, line in block))
        block.clear()

    while k < len(lines):
        line = lines[k]
        if line.startswith(TABLE_START):  # generated and checked whole below
            flush()
            while not lines[k].startswith(TABLE_END):
                k += 1
        elif line.startswith("```"):
            flush()
            lang, start, body = line[3:].strip(), k + 1, []
            k += 1
            while k < len(lines) and not lines[k].startswith("```"):
                body.append(lines[k])
                k += 1
            if lang == "text":
                inherited = previous_paragraph.sources() if previous_paragraph else []
                out.append(Unit(start + 1, "\n".join(body), inherited, heading))
        elif line.startswith("#"):
            flush()
            heading = line
        elif not line.strip():
            flush()
        else:
            block.append((k + 1, line))
        k += 1
    flush()
    return out


@dataclass(frozen=True)
class Segment:
    """A part of a source file a figure may be found in: its text (with its heading) and its numbers."""

    text: str
    numbers: frozenset[str]


@lru_cache(maxsize=64)
def segments(path: Path) -> tuple[Segment, ...]:
    """A markdown source as its units (each with its heading and context); any other file as one segment.

    A segment's numbers are its own text's: the heading and context only say which rows it is about.
    """
    content = path.read_text(encoding="utf-8", errors="replace").replace("−", "-")
    parts = [(f"{u.heading}\n{u.context}\n{u.text}", u.text) for u in units(content)]
    if path.suffix != ".md":
        parts = [(content, content)]
    return tuple(Segment(about, frozenset(_plain(n) for n in NUMBER.findall(own))) for about, own in parts)


def _narrowed(parts: list[Segment], words: list[str]) -> list[Segment]:
    """The segments holding one of `words`, or all of them when none does."""
    holding = [s for s in parts if any(w in s.text for w in words)]
    return holding or parts


def problems(text: str, root: Path = ROOT, page: str = "README.md") -> list[str]:
    """Every figure of `text` that its unit's sources do not hold, and every unit with figures but no source."""
    found = []
    for unit in units(text):
        figures = unit.figures_by_judge()
        if not figures:
            continue
        sources = unit.sources()
        missing_files = [s for s in sources if not (root / s).is_file()]
        if missing_files:
            found.append(f"{page}:{unit.line}: names {missing_files}, which do not exist")
        if not sources:
            found.append(f"{page}:{unit.line}: figures {unit.figures()} but no source named (`path/to/results.md`)")
            continue
        anchors = unit.anchors()
        for figure, judge in figures:
            held = False
            for source in sources:
                if not (root / source).is_file():
                    continue
                parts = list(segments(root / source))
                if anchors:
                    parts = _narrowed(parts, anchors)
                if judge:
                    parts = _narrowed(parts, [judge])
                held = held or any(figure in s.numbers for s in parts)
            if not held:
                where = f" (column {judge})" if judge else ""
                found.append(f"{page}:{unit.line}: {figure}{where} is in none of {sources} where {anchors} are")
    return found


def _page(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("page", FIGURE_PAGES)
def test_every_figure_is_in_its_named_source(page):
    found = problems(_page(page), page=page)
    assert not found, "stale or unsourced figures:\n" + "\n".join(found)


def test_the_check_counts_figures_that_matter():
    # the pages are not vacuously clean: they have many figures, nearly all of them with sources
    figures = [f for page in FIGURE_PAGES for u in units(_page(page)) for f in u.figures()]
    assert len(figures) > 100
    assert {"0.449", "0.593", "0.454", "2698", "16384"} <= set(figures)
    readme = [f for u in units(_page("README.md")) for f in u.figures()]
    assert {"0.454", "13440", "0.700", "1.000"} <= set(readme)  # the pick-a-judge table's are checked too


@pytest.mark.parametrize(
    ("old", "new", "stale"),
    [
        ("| **0.449** |", "| **0.450** |", "0.450"),  # a benchmark figure in the table
        ("ρ = +0.454 for the judge", "ρ = +0.455 for the judge", "0.455"),  # the demo's, sourced from a test
        ("(AUC 0.449)", "(AUC 0.450)", "0.450"),  # a figure in a list item
        ("| 0.043 | −0.022 |", "| 0.043 | 0.022 |", "0.022"),  # a sign lost
        # a stale figure that equals another number of the same long results file (ll:smin's AUC there)
        ("| **0.593** | 0.558 |", "| **0.597** | 0.558 |", "0.597"),
        # a figure moved to the other judge's column: SmolLM2's row holds 0.431 only under Gemma's heading
        ("| **0.449** | **0.431** |", "| **0.431** | **0.431** |", "0.431"),
    ],
)
def test_a_stale_figure_fails(old, new, stale):
    (page,) = [p for p in FIGURE_PAGES if old in _page(p)]
    text = _page(page)
    assert text.count(old) == 1, old
    assert not problems(text)
    found = problems(text.replace(old, new))
    assert any(f": {stale} " in p and "is in none of" in p for p in found), found


def test_a_figure_without_a_source_fails():
    text = README.read_text(encoding="utf-8") + "\nThe judge reaches 0.987 on everything.\n"
    assert any("0.987" in p and "no source" in p for p in problems(text))


def test_a_source_that_does_not_exist_fails():
    text = README.read_text(encoding="utf-8") + "\nρ 0.449 (`benchmarks/no_such_results.md`).\n"
    assert any("do not exist" in p for p in problems(text))


@pytest.mark.parametrize(
    ("text", "figures"),
    [
        ("ρ −0.009 and +0.376 over 800 summaries, 85% of them", ["-0.009", "0.376", "800", "85"]),
        ("deepeval 4.3.1, Qwen2.5-7B, 270M, 7–9B judges, 3 articles", []),
        ("2,698 summaries; 1e-5; 1.66× fp32 (Liu et al., 2023)", ["2698", "1e-5", "1.66"]),
        ("`0.5` and [a link](benchmarks/x_1.md) <!-- 0.25 -->", []),
    ],
)
def test_what_counts_as_a_figure(text, figures):
    assert Unit(1, text).figures() == figures


# -- the judges table, generated from the registry ------------------------------------------------


def judges_table(registry: Registry) -> str:
    """The README's judges table for `registry`: what `localjudge models` says, with the licences."""
    rows = ["| judge | family | from | size | licence |", "|---|---|---|---|---|"]
    for j in registry.judges:
        src = j.source
        name = f"`{j.name}`" + (" (default)" if j.name == registry.default else "")
        if isinstance(src, TunedSource) and is_head_folder(src.folder()):
            folder = src.folder()
            where = f"heads in localjudge, over `{read_head_manifest(folder).base}`"
            size = f"{(folder / HEAD_WEIGHTS).stat().st_size / 2**10:.0f} KiB heads"
        elif isinstance(src, TunedSource):
            folder = src.folder()
            where = f"adapter in localjudge, over `{read_manifest(folder).base}`"
            size = f"{(folder / ADAPTER).stat().st_size / 2**20:.1f} MiB adapter"
        elif isinstance(src, (PackageGGUFSource, PackageChunksSource)):
            assert src.size is not None, f"{j.name}: give the GGUF's size in models.yaml"
            where, size = f"PyPI `{src.describe().removeprefix('pypi:')}`", f"{src.size / 2**20:.1f} MiB GGUF"
        else:
            assert isinstance(src, HubSource) and j.parameters, f"{j.name}: give its parameters in models.yaml"
            where = f"hub `{src.repo}`" + (" (gated)" if j.gated else "")
            size = f"{j.parameters:.2f}B parameters, {j.parameters * 2e9 / 2**30:.1f} GiB in bf16"
        rows.append(f"| {name} | {j.family} | {where} | {size} | {j.license} |")
    return "\n".join(rows)


def test_the_judges_table_is_the_registry():
    text = README.read_text(encoding="utf-8")
    start = text.index("\n", text.index(TABLE_START)) + 1
    shown = text[start : text.index(TABLE_END)].strip()
    expected = judges_table(load_registry())
    assert shown == expected, f"the README's judges table is not models.yaml's; paste this:\n{expected}"


def test_every_judge_has_a_licence():
    assert all(j.license for j in load_registry().judges)


# -- python blocks run on their own imports ---------------------------------------------------------


def _unbound_names(code: str) -> set[str]:
    """Names a block reads that it neither imports nor assigns (nor are builtins)."""
    tree = ast.parse(code)
    bound, read = set(dir(builtins)), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, ast.Store) else read).add(node.id)
    return read - bound


def test_every_python_block_is_copy_pasteable():
    # the README's, and those of the integrations page its DeepEval and inspect_ai sections moved to
    pages = [README, ROOT / "docs" / "integrations.md"]
    blocks = [b for page in pages for b in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)]
    assert len(blocks) >= 5
    for code in blocks:
        assert not _unbound_names(code), f"a README python block uses {_unbound_names(code)} without importing it"


# -- links ----------------------------------------------------------------------------------------


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = heading.lstrip("#").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@pytest.mark.parametrize("page", ["docs/engine.md", "docs/metrics.md", "docs/development.md", *FIGURE_PAGES])
def test_links_lead_somewhere(page):
    path = ROOT / page
    text = path.read_text(encoding="utf-8")
    anchors = {_slug(line) for line in text.splitlines() if line.startswith("#")}
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if target.startswith("http"):
            continue
        file, _, anchor = target.partition("#")
        if file:
            assert (path.parent / file).exists(), f"{page} links to {target}, which does not exist"
        else:
            assert anchor in anchors, f"{page} links to #{anchor}, which is no heading of it"
