"""The hooks through which plugins extend lmgrade.

Built-in assignments under ``plugins/`` implement them exactly as a
third-party package does: an entry point in the ``lmgrade`` group names an
object (usually an `lmgrade.AssignmentPlugin`) or a module whose functions
are decorated with ``@lmgrade.hookimpl``. docs/writing-an-assignment.md
shows a whole package.
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("lmgrade")
"""Marks the hook specifications below (lmgrade's own; a plugin never needs it)."""
hookimpl = pluggy.HookimplMarker("lmgrade")
"""Marks a plugin's implementation of a hook: `@lmgrade.hookimpl` on a function named as the hook, in the
module (or on a method of the object) that an entry point of the `lmgrade` group names."""


@hookspec
def lmgrade_assignments() -> list:
    """Contribute assignments.

    Return where the assignments this plugin provides live: an
    `lmgrade.AssignmentSource` each (its folder, its reference package, the
    package a student bundle carries), or just the folder, whose
    ``assignment.toml`` then names the reference package. A folder holds an
    ``assignment.toml`` and the Jinja templates it names; its name is the
    assignment's name.
    """


@hookspec
def lmgrade_checks(assignment: str, variant: dict) -> list:
    """Contribute checks to an assignment.

    Called for every assignment being graded, listed or bundled, with its name
    and the chosen variant (for example ``{"activation": "tanh"}``). Return a
    list of `lmgrade.declare.checks.Check` for the assignments this plugin grades,
    and an empty list (or None) for the others. A check that assignment.toml
    does not name keeps the points, visibility and limits the plugin gave it.
    """


@hookspec
def lmgrade_bugs(assignment: str) -> dict:
    """Contribute realistic bugs of an assignment, as edits of its reference.

    Return ``{name: lmgrade.declare.flawed.Bug}`` for the assignments this plugin
    knows, and an empty dict (or None) for the others. The bugs prove the
    plugin's checks in its tests (each must lose points on the checks its
    ``loses`` names), and those marked ``demo`` make the flawed submission
    that ``lmgrade demo`` grades.
    """


@hookspec
def lmgrade_equivalent_mutants(assignment: str) -> list:
    """Contribute the reviewed equivalent mutants of an assignment's reference.

    Return paths of TOML files, each with ``[[equivalent]]`` tables of a
    ``mutant`` (the key `lmgrade mutants` prints for it) and a ``why`` (what
    makes the change one the contract allows). ``lmgrade mutants`` leaves
    them out of the score that counts; a survivor not listed is news.
    """


@hookspec
def lmgrade_pictures(assignment: str, check, case, expected, answer) -> list:
    """Contribute the pictures of a failed case on the feedback page (`lmgrade check --html`).

    Called in the grading process for the case of a failed visible check
    whose pictures the page shows (of its failed cases, the one holding the
    most numbers), with the assignment's name, the `lmgrade.declare.checks.Check`,
    its `lmgrade.declare.checks.Case`, the expected value and the submission's
    answer as plain data. Return a list of `lmgrade.reports.pictures.Picture` (made
    with `lmgrade.reports.pictures.matrix`, `curves` or `bars`;
    `lmgrade.reports.pictures.default_pictures` gives the defaults to add to), or
    None to leave the case its default pictures, chosen from the answer's
    shapes (a matrix beside the expected one with a map of where they
    differ, both curves of a sequence or a training run's losses, the
    relative error of each part, a sampler's frequencies against the
    model's). An empty list shows none. Never called for a hidden check:
    its page shows only its text.
    """
