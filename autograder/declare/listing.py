"""What `lmgrade list` prints of an assignment: a table of its checks, then its files, points, where it
comes from and its variants.

Every text that comes from an assignment (a check's name and title, a file name) is printed as it is,
never read as rich markup: lstm's "BiRNN: [h->_t ; h<-_t], ..." holds brackets. A check's name is never
cut or wrapped, and a variant's values are spelled as --set and assignment.toml spell them
(``pre_ln=true``, as `lmgrade check --help` has it).
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..core.plural import counted
from ..core.selection import as_setting
from .assignment import Assignment, AssignmentSpec


def checks_table(title: str, assignment: Assignment) -> Table:
    """The assignment's checks: name, what each tests, points, visibility."""
    table = Table(title=Text(title), title_justify="left")
    table.add_column("check", no_wrap=True, overflow="fold")
    table.add_column("what it tests")
    table.add_column("points", justify="right", no_wrap=True)
    table.add_column("visibility", no_wrap=True)
    for check in assignment.checks:
        table.add_row(Text(check.name), Text(check.title), f"{check.points:g}", Text(check.visibility))
    return table


def variants_line(spec: AssignmentSpec) -> str:
    """The variants line, "variants: pre_ln=true (true/false), ...": defaults, then choices ("" for none)."""
    if not spec.variants:
        return ""
    return "variants: " + ", ".join(
        f"{v.name}={as_setting(v.default)} ({'/'.join(as_setting(c) for c in v.choices)})"
        for v in spec.variants.values()
    )


def print_assignment(console: Console, assignment: Assignment, origin: str, *, notes: tuple[str, ...] = ()) -> None:
    """The table of `assignment`'s checks, its files and points, `origin` (where it comes from), then `notes`
    (its variants, by default)."""
    spec = assignment.spec
    console.print(checks_table(f"{spec.name}: {spec.title}", assignment))
    total = sum(c.points for c in assignment.checks)
    console.print(Text(f"files: {', '.join(spec.files)}; total {counted(float(total), 'point')}"))
    console.print(Text(origin))
    for note in notes or (variants_line(spec),):
        if note:
            console.print(Text(note))
    console.print()
