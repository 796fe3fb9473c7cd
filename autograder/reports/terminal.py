"""The per-check table and the feedback, for people at a terminal."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .results import Verdict


def verdict_table(title: str, verdicts: list[Verdict]) -> Table:
    """One row per check. Its name and what the submission made it say are shown as they are, never read
    as rich markup (a student's exception message may hold "[/]"); a check's name is never cut."""
    table = Table(title=Text(title), title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("check", no_wrap=True, overflow="fold")
    table.add_column("score", justify="right")
    table.add_column("", justify="center")
    table.add_column("summary")
    table.add_column("time", justify="right")
    for v in verdicts:
        mark = Text("ok", style="green") if v.passed else Text("FAIL", style="bold red")
        summary = v.output.splitlines()[0] if v.output else ""
        if v.stood_in:  # "Passes once X is fixed: ..., this check saw:", the rest below the table
            summary = summary.split(":", 1)[0] + " (what it saw is below)"
        table.add_row(
            str(v.number),
            Text(v.check.name),
            f"{v.score:.4g} / {v.max_score:g}",
            mark,
            Text(summary),
            f"{v.wall_s:.2f}s",
        )
    total = sum(v.score for v in verdicts)
    maximum = sum(v.max_score for v in verdicts)
    table.add_section()
    table.add_row("", "total", f"{total:.4g} / {maximum:g}", "", "", "")
    return table


def print_report(console: Console, title: str, verdicts: list[Verdict], *, details: bool = True) -> None:
    console.print(verdict_table(title, verdicts))
    if not details:
        return
    for v in verdicts:
        # A check paid through a stand-in still shows what it saw with the student's own component.
        if not v.passed or v.stood_in:
            console.print(Text(f"\n{v.number}. {v.check.name} ({v.score:.4g}/{v.max_score:g})", style="bold"))
            console.print(Text(v.output))


def describe_defences(d: dict) -> str:
    if not d:
        return "no student code ran"
    parts = [f"limits on {', '.join(d.get('rlimits') or ['nothing'])}"]
    if d.get("landlock"):
        ll = d["landlock"]
        confined = ["files"] + ["TCP"] * bool(ll.get("network")) + ["signals"] * bool(ll.get("signals"))
        parts.append(f"landlock ABI {ll['abi']} ({', '.join(confined)})")
    else:
        parts.append("no landlock" + (f" ({d['landlock_error']})" if d.get("landlock_error") else ""))
    if d.get("network_namespace"):
        parts.append("no network (own namespace)")
    if d.get("user_namespace"):
        parts.append("own user namespace")
    else:
        parts.append(
            f"uid {d.get('uid')}" + (" (read-search capability kept)" if d.get("read_search_capability") else "")
        )
    return ", ".join(parts)
