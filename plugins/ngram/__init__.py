"""The built-in `ngram` assignment: its folder and its checks."""

from __future__ import annotations

from pathlib import Path

from autograder import hookimpl

ASSIGNMENT = Path(__file__).resolve().parents[2] / "assignments" / "ngram"
EXAMPLES = Path(__file__).resolve().parent / "examples"


@hookimpl
def lmgrade_assignments():
    return [ASSIGNMENT]


@hookimpl
def lmgrade_checks(assignment, variant):
    if assignment != "ngram":
        return []
    from .checks import ngram_checks

    return ngram_checks()
