"""Per-token readings of a judge, saved as they are taken: what the token-level benchmarks re-derive from.

A *condition* is one way of reading every item: the log-probability of each token of a text after
a prompt (`Judge.loglikelihood`), or the probabilities of labels at the end of a prompt
(`Judge.score_labels`). Readings go to one JSON-lines file per (judge, data set, condition), a
chunk at a time, so a run that is killed keeps what it measured and a rerun reads only what is
missing. Every scorer of a report is an aggregation of these readings by the library's own
functions, so the report needs no judge and no torch.

Files, under `<root>/<judge>/<set>/`:

- `<condition>.jsonl`: `{"id", "lp": [...]}` (log-probabilities) or `{"id", "probs": {...}, "valid_mass"}`;
- `tokens.jsonl`: `{"id", "ids": [...], "surfaces": [...]}`, the scored text's tokens (the same under
  every likelihood condition of an item: the continuation is tokenised on its own);
- `timing.json`: wall seconds spent per condition, summed over runs (and process CPU seconds as
  `<condition>_cpu` where they were recorded: on a shared machine wall time includes waiting).
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

CHUNK = 48
"""Items per engine call: whole groups (an article's summaries) are kept together for prefix reuse."""

READINGS = Path(__file__).resolve().parents[1] / "quality" / "faithful_readings"
"""Where the quality studies keep their readings (faithfulness and pairwise; not committed: .gitignore)."""


@dataclass(frozen=True)
class LLItem:
    """One text to read after one prompt."""

    id: str
    group: str  # items of a group share their prompt's prefix (a document)
    prompt: str
    continuation: str


@dataclass(frozen=True)
class LabelItem:
    """One prompt at whose end the labels are read."""

    id: str
    group: str
    prompt: str


class Store:
    """The readings of one judge on one data set."""

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def _path(self, name: str) -> Path:
        return self.root / f"{name}.jsonl"

    def load(self, name: str) -> dict[str, dict]:
        """{id: row} of a condition ('tokens' for the tokens); a torn last line is ignored."""
        out: dict[str, dict] = {}
        for path in (self._path(name), self.root / f"{name}.jsonl.gz"):
            if not path.exists():
                continue
            opener = gzip.open if path.suffix == ".gz" else open
            with opener(path, "rt", encoding="utf-8") as f:
                for line in f:
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError:
                        continue  # a line cut by a killed writer
                    out[row["id"]] = row
        return out

    def append(self, name: str, rows: Iterable[dict]) -> None:
        with open(self._path(name), "a", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, separators=(",", ":")) + "\n")

    def add_time(self, name: str, seconds: float, cpu: float | None = None) -> None:
        """Adds wall seconds (and process CPU seconds, under `<name>_cpu`) spent on a condition."""
        path = self.root / "timing.json"
        timing = json.loads(path.read_text()) if path.exists() else {}
        timing[name] = round(timing.get(name, 0.0) + seconds, 1)
        if cpu is not None:
            timing[f"{name}_cpu"] = round(timing.get(f"{name}_cpu", 0.0) + cpu, 1)
        path.write_text(json.dumps(timing, indent=1) + "\n")

    def timing(self) -> dict[str, float]:
        path = self.root / "timing.json"
        return json.loads(path.read_text()) if path.exists() else {}


def _chunks(items: Sequence, size: int = CHUNK) -> list[list]:
    """Consecutive items cut into chunks of about `size`, never inside a group."""
    out: list[list] = []
    cur: list = []
    for k, it in enumerate(items):
        cur.append(it)
        last_of_group = k + 1 == len(items) or items[k + 1].group != it.group
        if len(cur) >= size and last_of_group:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def read_likelihoods(judge, store: Store, name: str, items: Sequence[LLItem], log: Callable[[str], None]) -> None:
    """Reads every item of a likelihood condition not yet in the store, chunk by chunk."""
    done = store.load(name)
    have_tokens = set(store.load("tokens"))
    todo = sorted((it for it in items if it.id not in done), key=lambda it: (it.group, it.id))
    surfaces = judge.backend.token_surfaces()
    for k, chunk in enumerate(_chunks(todo)):
        t0, c0 = time.perf_counter(), time.process_time()
        lls = judge.loglikelihood([it.prompt for it in chunk], [it.continuation for it in chunk])
        store.add_time(name, time.perf_counter() - t0, time.process_time() - c0)
        store.append(name, ({"id": it.id, "lp": list(ll.logprobs)} for it, ll in zip(chunk, lls)))
        new = [(it, ll) for it, ll in zip(chunk, lls) if it.id not in have_tokens]
        store.append(
            "tokens",
            (
                {"id": it.id, "ids": list(ll.token_ids), "surfaces": [surfaces[i] for i in ll.token_ids]}
                for it, ll in new
            ),
        )
        have_tokens |= {it.id for it, _ in new}
        log(f"{name}: chunk {k + 1}, {len(done) + sum(map(len, _chunks(todo)[: k + 1]))}/{len(items)} items")


def read_labels(
    judge, store: Store, name: str, items: Sequence[LabelItem], labels: Sequence[str], log: Callable[[str], None]
) -> None:
    """Reads the label distribution at the end of every prompt not yet in the store."""
    done = store.load(name)
    todo = sorted((it for it in items if it.id not in done), key=lambda it: (it.group, it.id))
    for k, chunk in enumerate(_chunks(todo)):
        t0, c0 = time.perf_counter(), time.process_time()
        dists = judge.score_labels([it.prompt for it in chunk], list(labels), min_valid_mass=0.0)
        store.add_time(name, time.perf_counter() - t0, time.process_time() - c0)
        store.append(name, ({"id": it.id, "probs": d.probs, "valid_mass": d.valid_mass} for it, d in zip(chunk, dists)))
        log(f"{name}: chunk {k + 1}/{len(_chunks(todo))}")
