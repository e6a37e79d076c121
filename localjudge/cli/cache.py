"""`localjudge cache list|prepare|prune|verify|clear`: prepared copies and joined GGUFs in the cache folder."""

from __future__ import annotations

import time

import click

from localjudge.cli.output import print_table
from localjudge.weights.cache_list import size_text

_folder = click.option(
    "--cache-dir",
    "folder",
    type=click.Path(file_okay=False),
    default=None,
    help="The cache folder [default: $LOCALJUDGE_CACHE, else $XDG_CACHE_HOME/localjudge, else ~/.cache/localjudge].",
)


@click.group("cache")
def cache_group() -> None:
    """Prepared copies of GGUF judges (safetensors), which make every load after the first take seconds.

    A copy is keyed by the GGUF's sha256, the transformers version and the dtypes it holds the
    weights in: those of the run that reads it (fp32; bf16; bf16 linear layers beside fp32 for mixed
    precision), so each dtype a judge runs in has its own copy. Its files are hashed (xxh3-128) when
    written and when a load finds them changed since (device, inode, size, mtime or ctime); a damaged
    copy is rebuilt, and
    `cache verify` hashes every byte now. Judges shipped in chunk packages are joined into one GGUF here too.
    Copies and joined GGUFs together are kept within $LOCALJUDGE_CACHE_LIMIT (default 20GiB), the
    least recently used removed first. Deleting them is always safe: the next load of that judge
    parses its GGUF again and writes a new copy.
    """


@cache_group.command("list")
@_folder
def list_cmd(folder: str | None) -> None:
    """List the copies and joined GGUFs: judge file, transformers version, size, last use and state."""
    from localjudge.weights.cache import cache_root
    from localjudge.weights.cache_list import cache_limit, list_prepared

    where = cache_root(folder)
    limit = cache_limit()
    entries = list_prepared(folder)
    if not entries:
        click.echo(f"no prepared judges in {where}")
        return
    rows = []
    for e in sorted(entries, key=lambda e: -e.last_used):
        m = e.manifest
        rows.append(
            (
                e.name,
                "copy" if e.kind == "copy" else "joined GGUF",
                m.transformers if m else "-",
                size_text(e.size),
                time.strftime("%Y-%m-%d %H:%M", time.localtime(e.last_used)),
                e.state,
            )
        )
    print_table(["judge file", "kind", "transformers", "size", "last used", "state"], rows)
    total = sum(e.size for e in entries)
    bound = f"of a {size_text(limit.bytes)} limit ({limit.source})" if limit.bytes is not None else "(no limit)"
    click.echo(
        f"\n{len(entries)} in {where}, {size_text(total)} {bound}; the least recently used go first, "
        "states other than ok are rebuilt on the next load (unused: a per-dtype copy of an older localjudge)"
    )


@cache_group.command("prepare")
@click.argument("judges", nargs=-1, required=True)
@_folder
def prepare_cmd(judges: tuple[str, ...], folder: str | None) -> None:
    """Write the prepared copy of each GGUF judge (registry name or .gguf file) now: its first load takes seconds.

    A judge whose copy is there already has it verified instead. Useful when building an image or
    before a batch job; the judge must be installed (`localjudge models --install NAME`).
    """
    import transformers

    from localjudge.judges.loading import prepare_judge
    from localjudge.weights.cache import CacheKey, cache_root, find_prepared

    for name in judges:
        start = time.perf_counter()
        provenance = prepare_judge(name, cache=folder)
        key = CacheKey(provenance.removeprefix("sha256:"), transformers.__version__)
        where = find_prepared(key, cache_root(folder))
        seconds = time.perf_counter() - start
        if where is None:  # the folder could not hold it: the load went on without (its warning said why)
            click.echo(f"{name}: no prepared copy written ({seconds:.1f} s)")
        else:
            click.echo(f"{name}: prepared copy {where} ({seconds:.1f} s)")


@cache_group.command("prune")
@_folder
@click.option(
    "--limit",
    "limit_text",
    default=None,
    help="Bring the folder within this size, e.g. 5GiB [default: $LOCALJUDGE_CACHE_LIMIT, else 20GiB].",
)
def prune_cmd(folder: str | None, limit_text: str | None) -> None:
    """Remove the least recently used copies and joined GGUFs until the folder is within the limit."""
    from localjudge.weights.cache import cache_root
    from localjudge.weights.cache_list import cache_limit, evict, list_prepared, parse_size

    limit = parse_size(limit_text, "--limit") if limit_text is not None else cache_limit().bytes
    removed = evict(folder, limit)
    for e in removed:
        click.echo(f"removed {e.name} ({e.kind}, {size_text(e.size)}, {e.state})")
    total = sum(e.size for e in list_prepared(folder))
    click.echo(
        f"removed {len(removed)} ({size_text(sum(e.size for e in removed))}); {cache_root(folder)} holds "
        f"{size_text(total)}" + (f" of {size_text(limit)}" if limit is not None else "")
    )


@cache_group.command("verify")
@_folder
def verify_cmd(folder: str | None) -> None:
    """Hash every byte of every copy now; a damaged copy is removed (the next load of its judge rebuilds it)."""
    from localjudge.weights.cache import verify_copy
    from localjudge.weights.cache_fs import remove_unheld
    from localjudge.weights.cache_list import list_prepared

    copies = [e for e in list_prepared(folder) if e.kind == "copy"]
    damaged = 0
    for e in copies:
        problem = verify_copy(e.path)
        if problem is None:
            click.echo(f"ok       {e.name} ({size_text(e.size)})")
            continue
        damaged += 1
        gone = "removed" if remove_unheld(e.path) else "in use by a loader, not removed"
        click.echo(f"damaged  {e.name} ({size_text(e.size)}): {problem}; {gone}")
    click.echo(f"{len(copies)} cop{'ies' if len(copies) != 1 else 'y'} hashed, {damaged} damaged")
    if damaged:
        raise SystemExit(1)


@cache_group.command("clear")
@_folder
def clear_cmd(folder: str | None) -> None:
    """Delete every prepared copy and joined GGUF (generated evaluation steps are kept)."""
    from localjudge.weights.cache import cache_root
    from localjudge.weights.cache_list import clear_prepared

    count, size = clear_prepared(folder)
    click.echo(
        f"removed {count} prepared judge{'s' if count != 1 else ''} ({size_text(size)}) from {cache_root(folder)}"
    )
