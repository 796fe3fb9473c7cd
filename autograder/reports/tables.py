"""Tables printed whole where the output is not a terminal.

Written to a file or a pipe, rich lays a table out in 80 columns and cuts what does not fit
("recurrent.… BiRNN.__in…"). There nobody resizes a window: the table is printed at the width it
needs instead. At a terminal it keeps the terminal's width (its name columns fold, never cut).
"""

from __future__ import annotations

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

# Wider than any table of lmgrade's: the width a table is measured in, to find the width it needs.
_UNBOUNDED = 10_000


def print_whole(console: Console, table: Table) -> None:
    """Print `table` on `console`, every cell whole where the output is not a terminal."""
    if console.is_terminal:
        console.print(table)
        return
    needed = Measurement.get(console, console.options.update_width(_UNBOUNDED), table).maximum
    if needed <= console.width:
        console.print(table)
        return
    width = console.width
    console.width = needed
    try:
        console.print(table)
    finally:
        console.width = width
