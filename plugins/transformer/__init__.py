"""The built-in `transformer` assignment: where its parts are, for the harness."""

from __future__ import annotations

from lmgrade import AssignmentPlugin


def checks(variant: dict) -> list:
    """The checks of `variant`: the common ones, threaded with its positions, and the positions' own."""
    from .checks import transformer_checks
    from .positions import position_checks, threaded

    return threaded(transformer_checks(), variant) + position_checks(variant)


plugin = AssignmentPlugin(
    "transformer",
    package=__name__,
    folder="lmgrade.assignments.transformer",
    reference="lmgrade.reference.transformer",
    checks=checks,
    bugs=".bugs:BUGS",
)
