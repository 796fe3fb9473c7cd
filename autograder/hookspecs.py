"""The hooks through which plugins extend lmgrade.

Built-in graders under ``plugins/`` implement them exactly as a third-party
package does: declare an entry point in the ``lmgrade`` group whose module
defines functions decorated with ``@autograder.hookimpl``.
"""

from __future__ import annotations

from pathlib import Path

import pluggy

hookspec = pluggy.HookspecMarker("lmgrade")
hookimpl = pluggy.HookimplMarker("lmgrade")


@hookspec
def lmgrade_assignments() -> list[Path]:
    """Contribute assignments.

    Return the folders of the assignments this plugin provides; each holds an
    ``assignment.toml`` and the Jinja templates it names. The folder's name is
    the assignment's name.
    """


@hookspec
def lmgrade_checks(assignment: str, variant: dict) -> list:
    """Contribute checks to an assignment.

    Called for every assignment being graded, listed or bundled, with its name
    and the chosen variant (for example ``{"activation": "tanh"}``). Return a
    list of `autograder.checks.Check` for the assignments this plugin grades,
    and an empty list (or None) for the others. A check that assignment.toml
    does not name keeps the points, visibility and limits the plugin gave it.
    """
