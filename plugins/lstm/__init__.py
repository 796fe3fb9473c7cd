"""The built-in `lstm` assignment: its folder, its checks, its bugs."""

from __future__ import annotations

from pathlib import Path

from lmgrade import hookimpl

HERE = Path(__file__).resolve().parent
ASSIGNMENT = HERE.parents[1] / "assignments" / "lstm"


@hookimpl
def lmgrade_assignments():
    return [ASSIGNMENT]


@hookimpl
def lmgrade_checks(assignment, variant):
    if assignment != "lstm":
        return []
    from .checks import lstm_checks

    return lstm_checks()


@hookimpl
def lmgrade_bugs(assignment):
    if assignment != "lstm":
        return {}
    from .bugs import BUGS

    return BUGS


@hookimpl
def lmgrade_equivalent_mutants(assignment):
    return [HERE / "equivalent_mutants.toml"] if assignment == "lstm" else []
