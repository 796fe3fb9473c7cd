"""The part of every handout the harness writes: how the work is graded, in a table a student reads.

One table for every assignment, built from the bound checks (points,
visibility, limits, device), its cells escaped so it renders the same in any
Markdown viewer; the templates place it with ``{{ grading_table }}``.
"""

from __future__ import annotations

from .checks import Check
from .selection import as_setting


def check_command(name: str, variant: dict, defaults: dict) -> str:
    """`lmgrade check NAME`, with --set for every variant value that is not the default.

    The command that checks this variant both in the course's checkout and in
    the variant's own bundle (which checks its variant with or without it).
    """
    chosen = "".join(
        f" --set {key}={as_setting(value)}"
        for key, value in variant.items()
        if key in defaults and value != defaults[key]
    )
    return f"lmgrade check {name}{chosen}"


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell: no line breaks, pipes and backslashes escaped."""
    return " ".join(str(text).split()).replace("\\", "\\\\").replace("|", "\\|")


def _seconds(value: float) -> str:
    return f"{value:g} s"


def limits_in_words(check: Check) -> str:
    limits = check.limits
    if limits.wall_factor > 0 and check.timing is None:
        # The grader measures the reference on the same cases when grading begins.
        time = f"{limits.wall_factor:g} times the reference's time, at least {_seconds(limits.wall_s)}"
    else:
        time = f"{_seconds(limits.wall_s)} in all"
    words = f"{time}, {limits.memory_mb:g} MB of memory"
    if check.device == "cuda":
        words += ", on a GPU where the grader has one"
    if check.timing is not None:
        words += "; timed against the reference solution on the same machine"
    return words


def grading_table(checks: list[Check]) -> str:
    rows = ["| check | what it tests | limits | points |", "|---|---|---|---|"]
    for check in checks:
        shown = "" if check.visibility == "visible" else f" (results shown {check.visibility.replace('_', ' ')})"
        rows.append(
            f"| `{cell(check.name)}` | {cell(check.title + shown)} | {cell(limits_in_words(check))} | "
            f"{check.points:g} |"
        )
    return "\n".join(rows) + (
        "\n\nA check fails a case that gives a wrong answer, raises, or runs past its limits. Printing (any "
        "amount), temporary files and files written beside your code never cost a point. A property check "
        "(arguments left unchanged, the contract's ValueErrors) reports what it sees and pays where the "
        "property holds beside the call's right answer, so that code returning constants or raising earns "
        "nothing. Points within a check are in proportion to the cases passed. A check that runs another of "
        "your components whose own check failed runs again with the grader's version of that component in "
        "place of yours: it earns its points where that run passes, and says which component to fix."
    )
