"""The part of every handout the harness writes: how the work is graded, in a table a student reads.

One table for every assignment, built from the bound checks (points,
visibility, limits, device), its cells escaped so it renders the same in any
Markdown viewer, and under it how cases fail and checks pay, said only of what
this assignment's own checks do (its property checks by name, its checks that
run another of the student's components); the templates place both with
``{{ grading_table }}``.
"""

from __future__ import annotations

from ..core.selection import as_setting
from .checks import Check
from .composition import components, stand_in_names


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
    """The table of the checks, then how they fail and pay (`how_checks_pay`)."""
    rows = ["| check | what it tests | limits | points |", "|---|---|---|---|"]
    for check in checks:
        shown = "" if check.visibility == "visible" else f" (results shown {check.visibility.replace('_', ' ')})"
        rows.append(
            f"| `{cell(check.name)}` | {cell(check.title + shown)} | {cell(limits_in_words(check))} | "
            f"{check.points:g} |"
        )
    return "\n".join(rows) + "\n\n" + how_checks_pay(checks)


def how_checks_pay(checks: list[Check]) -> str:
    """How a case fails and a check pays, in sentences true of these checks: a property check or a stand-in
    run is spoken of only where one of the checks is one or has one."""
    sentences = [
        "A check fails a case that gives a wrong answer, raises, or runs past its limits.",
        "Printing (any amount), temporary files and files written beside your code never cost a point.",
    ]
    properties = [c.name for c in checks if c.property_check]
    if properties:
        sentences.append(
            f"{_these('property check', properties)} {_verb('reports', properties)} what "
            f"{'it sees' if len(properties) == 1 else 'they see'} and {_verb('pays', properties)} where the "
            "property holds beside the call's right answer, so that code returning constants or raising earns "
            "nothing there."
        )
    sentences.append("Points within a check are in proportion to the cases passed.")
    composed = with_stand_ins(checks)
    if composed:
        sentences.append(
            f"{_these('check', composed)} {_verb('runs', composed)} other components of yours: where such a "
            "component failed its own check, the check runs again with the grader's version of it in place of "
            "yours (where the grader has one), earns its points where that run passes (a property check, case "
            "by case), and says which component to fix. Where that run fails, it earns them where its answers "
            "are exactly those of the known mistake named on that component."
        )
    return " ".join(sentences)


def with_stand_ins(checks: list[Check]) -> list[str]:
    """The checks that run again with the grader's version of a component whose own check failed: those
    with a component the grader can stand in for (`composition.stand_in_names`)."""
    by_name = {c.name: c for c in checks}
    return [
        check.name
        for check in checks
        if any(stand_in_names(check, [component]) for component in components(check, by_name))
    ]


def _these(kind: str, names: list[str]) -> str:
    """Names as the subject of a sentence: "The check `a`", "The checks `a` and `b`", "The checks `a`, `b` and `c`"."""
    quoted = [f"`{name}`" for name in names]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
    return f"The {kind}{'' if len(names) == 1 else 's'} {listed}"


def _verb(singular: str, names: list[str]) -> str:
    """A verb of the third person agreeing with as many subjects as `names` ("runs", "run")."""
    return singular if len(names) == 1 else singular[:-1]
