"""The built-in `transformer` assignment: its folder, its checks, its bugs."""

from __future__ import annotations

from pathlib import Path

from lmgrade import hookimpl

HERE = Path(__file__).resolve().parent
ASSIGNMENT = HERE.parents[1] / "assignments" / "transformer"


@hookimpl
def lmgrade_assignments():
    return [ASSIGNMENT]


@hookimpl
def lmgrade_checks(assignment, variant):
    if assignment != "transformer":
        return []
    from .checks import transformer_checks
    from .positions import position_checks, threaded

    return threaded(transformer_checks(), variant) + position_checks(variant)


@hookimpl
def lmgrade_bugs(assignment):
    if assignment != "transformer":
        return {}
    from .bugs import BUGS

    return BUGS


@hookimpl
def lmgrade_equivalent_mutants(assignment):
    path = HERE / "equivalent_mutants.toml"
    return [path] if assignment == "transformer" and path.exists() else []
