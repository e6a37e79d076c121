"""What the benchmark scripts share: the machine line, kept hand-written notes, the SummEval loader.

Every study imports `benchmarks.lib`, never another study (`benchmarks/test_layout_bench.py`).
Nothing here imports torch: `summeval.py --report` and the bias scripts' markdown run without it.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1]
SHARED_DATA = BENCHMARKS.parent.parent / "shared" / "data"  # data sets beside the clone (shared/data/README.md)
SUMMEVAL_DATA = SHARED_DATA / "summeval_dev.json"
EMBEDDED_JUDGES = ("smollm2-135m", "gemma3-270m")
DIMENSIONS = ("coherence", "consistency", "fluency", "relevance")  # SummEval's expert-rated dimensions
NOTES = "## Notes (hand-written)"


def machine(*extras: str) -> dict:
    """The CPU model and core count (lscpu), then each of `extras` in the order given.

    Extras: `torch_threads`, `torch`, `transformers`, `python`, `gpu` (None without CUDA), `simd`,
    `bf16` ("native" or "not native": whether oneDNN packs bf16 weights here). Each
    script names the ones its results files have always recorded, so those files keep their keys;
    torch and transformers are imported only when asked for.

    Examples:
        >>> sorted(machine("python"))
        ['cores', 'cpu', 'python']
    """
    out = {"cpu": _cpu_model(), "cores": os.cpu_count()}
    for key in extras:
        out[key] = _EXTRAS[key]()
    return out


def host_load(start: tuple[float, float, float]) -> str:
    """The host's 1-minute load average at a run's start (`os.getloadavg()` then) and now, as results
    files state it, so that a reader can tell an idle host from a shared one."""
    return f"load average {start[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end (1-minute)"


def _cpu_model() -> str:
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        return next(line.split(":", 1)[1].strip() for line in lscpu.splitlines() if line.startswith("Model name:"))
    except (OSError, subprocess.CalledProcessError, StopIteration):
        return platform.processor() or "unknown"


def _torch():
    import torch

    return torch


def _gpu() -> str | None:
    torch = _torch()
    return torch.cuda.get_device_name() if torch.cuda.is_available() else None


def _simd() -> str:
    """The vector extensions that decide bf16 speed: AMX, AVX-512 BF16, AVX-512, or AVX2 (Linux flags)."""
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split("flags", 2)[1].split("\n", 1)[0].split())
    except (OSError, IndexError):
        return "unknown"
    names = [("amx_bf16", "AMX"), ("avx512_bf16", "AVX-512 BF16"), ("avx512f", "AVX-512"), ("avx2", "AVX2")]
    return ", ".join(label for flag, label in names if flag in flags) or "none of AVX2/AVX-512/AMX"


def _bf16() -> str:
    """Whether this CPU runs bf16 natively, as the engine sees it: "native" where oneDNN packs bf16
    weights (AVX-512 BF16, AMX, AVX-NE-CONVERT), else "not native" (bf16 GEMMs read unpacked weights)."""
    torch = _torch()
    from localjudge.engine.invariant import can_prepack

    return "native" if can_prepack(torch.zeros(8, 8, dtype=torch.bfloat16)) else "not native"


def _transformers_version() -> str:
    import transformers

    return transformers.__version__


_EXTRAS = {
    "torch_threads": lambda: _torch().get_num_threads(),
    "torch": lambda: _torch().__version__,
    "transformers": _transformers_version,
    "python": platform.python_version,
    "gpu": _gpu,
    "simd": _simd,
    "bf16": _bf16,
}


def kept_section(md: Path, heading: str = NOTES) -> str:
    """The hand-written tail of an existing results file from `heading` on, with its separating newline.

    Scripts rewrite their tables and append this, so notes written by hand survive a rerun; "" when
    the file or the heading is missing.
    """
    text = md.read_text(encoding="utf-8") if md.exists() else ""
    return "\n" + text[text.index(heading) :] if heading in text else ""


def cell(x: float | None, fmt: str = "{:.3f}") -> str:
    """A markdown table cell: the number formatted, or an en dash for a missing value."""
    return "–" if x is None else fmt.format(x)


def rho_cell(agreement: dict, articles: int) -> str:
    """A per-article averaged ρ (`summeval.agreement`), with how many articles it averages when some had no ranking."""
    used = agreement.get("articles_used", articles)
    return cell(agreement["spearman"]) + (f" ({used} of {articles})" if used < articles else "")


def load_summeval(path: str | Path, docs: int | None = None):
    """SummEval rows as test cases (input = article, actual_output = summary), first `docs` articles.

    Human scores and ids go to `extra` as `doc_id`, `system_id` and `human_<dimension>`, the
    reference summary as `reference` (for ROUGE-L only; no judge prompt shows it).
    """
    from localjudge.errors import DataError
    from localjudge.io.cases import TestCase

    rows = json.loads(Path(path).read_text())
    if not isinstance(rows, list):
        raise DataError(f"{path}: expected a list of SummEval rows; see shared/data/README.md")
    order: list[str] = []
    cases = []
    for i, row in enumerate(rows):
        missing = {"doc_id", "system_id", "source", "system_output", "scores"} - set(row)
        if missing:
            raise DataError(f"{path}: row {i} lacks {sorted(missing)}; see shared/data/README.md for the schema")
        doc = str(row["doc_id"])
        if doc not in order:
            order.append(doc)
        extra = {"doc_id": doc, "system_id": str(row["system_id"]), "reference": row.get("reference") or ""}
        extra |= {f"human_{d}": float(row["scores"][d]) for d in DIMENSIONS}
        cases.append(
            TestCase(
                id=f"{doc}/{row['system_id']}", input=row["source"], actual_output=row["system_output"], extra=extra
            )
        )
    keep = set(order[:docs] if docs else order)
    return [c for c in cases if c.extra["doc_id"] in keep]


def load_pairs(path: str | Path, name: str, n: int | None = None):
    """The first `n` (all by default) human-labelled pairs of `path` (`{input, output_1, output_2, label}`) as
    cases `<name>-<i>`, the outputs and label in `extra`."""
    from localjudge.io.cases import TestCase

    rows = json.loads(Path(path).read_text(encoding="utf-8"))[:n]
    return [
        TestCase(
            id=f"{name}-{i}",
            input=r["input"],
            extra={"output_1": r["output_1"], "output_2": r["output_2"], "label": int(r["label"])},
        )
        for i, r in enumerate(rows)
    ]


def subpanels(parser, specs: list[str], judges: list[str]) -> dict[str, list[str]]:
    """`--subpanel NAME=J1,J2` specs as {name: members}; `parser.error` unless two or more of `judges`."""
    out = {}
    for spec in specs:
        name, _, members = spec.partition("=")
        out[name] = [m.strip() for m in members.split(",")]
        if len(out[name]) < 2 or not set(out[name]) <= set(judges):
            parser.error(f"--subpanel {spec}: two or more of --judges")
    return out
