"""The built-in `embeddings` assignment: its folder, its checks, its bugs."""

from __future__ import annotations

from pathlib import Path

from lmgrade import hookimpl

HERE = Path(__file__).resolve().parent
ASSIGNMENT = HERE.parents[1] / "assignments" / "embeddings"


@hookimpl
def lmgrade_assignments():
    return [ASSIGNMENT]


@hookimpl
def lmgrade_checks(assignment, variant):
    if assignment != "embeddings":
        return []
    from .checks import embeddings_checks

    return embeddings_checks()


@hookimpl
def lmgrade_bugs(assignment):
    if assignment != "embeddings":
        return {}
    from .bugs import BUGS

    return BUGS


@hookimpl
def lmgrade_equivalent_mutants(assignment):
    return [HERE / "equivalent_mutants.toml"] if assignment == "embeddings" else []
