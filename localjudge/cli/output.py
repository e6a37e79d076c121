"""Plain-text tables for the command line's reports (models, metrics, scores, the demo), and JSON-safe values."""

from __future__ import annotations

from collections.abc import Sequence

import click


def print_table(header: list[str], rows: Sequence[tuple]) -> None:
    """Prints rows under a header and a rule, each column padded to its widest cell."""
    cells = [header] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for k, row in enumerate(cells):
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if k == 0:
            click.echo("  ".join("-" * w for w in widths))
