"""`localjudge cache list|clear`: the prepared copies of GGUF judges in the user cache folder."""

from __future__ import annotations

import click

from localjudge.cli.output import print_table

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

    A copy is keyed by the GGUF's sha256, the transformers version and the dtype, and verified
    (sizes and sha256 of every file) on each load; a damaged one is rebuilt. Deleting them is
    always safe: the next load of that judge parses its GGUF again and writes a new copy.
    """


@cache_group.command("list")
@_folder
def list_cmd(folder: str | None) -> None:
    """List the prepared copies: judge file, dtype, transformers version, size and state."""
    from localjudge.judges.cache import cache_root, weights_dir
    from localjudge.judges.cache_list import list_prepared

    where = weights_dir(cache_root(folder))
    entries = list_prepared(folder)
    if not entries:
        click.echo(f"no prepared judges in {where}")
        return
    rows = []
    for e in entries:
        m = e.manifest
        rows.append(
            (
                m.gguf_file if m else e.path.name,
                m.dtype if m else "-",
                m.transformers if m else "-",
                _mib(e.size),
                m.created if m else "-",
                e.state,
            )
        )
    print_table(["judge file", "dtype", "transformers", "size", "created", "state"], rows)
    total = sum(e.size for e in entries)
    click.echo(f"\n{len(entries)} in {where}, {_mib(total)}; states other than ok are rebuilt on the next load")


@cache_group.command("clear")
@_folder
def clear_cmd(folder: str | None) -> None:
    """Delete every prepared copy (generated evaluation steps are kept)."""
    from localjudge.judges.cache import cache_root, weights_dir
    from localjudge.judges.cache_list import clear_prepared

    count, size = clear_prepared(folder)
    where = weights_dir(cache_root(folder))
    click.echo(f"removed {count} prepared judge{'s' if count != 1 else ''} ({_mib(size)}) from {where}")


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"
