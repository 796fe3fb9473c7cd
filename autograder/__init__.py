"""lmgrade: the autograder harness of a language-modeling course.

Everything a plugin needs is importable from here, and a plugin imports
nothing else of lmgrade (docs/writing-an-assignment.md)::

    from lmgrade import AssignmentPlugin, Bug, Case, CaseContext, Check, Mistake, Tolerance, Limits

What the sandbox's fork server and the command line import first, so it
stays cheap: numpy, never torch. The helpers below `_LAZY` names are
imported when first asked for.
"""

from __future__ import annotations

import importlib

from .checks import PROPERTY, Case, CaseContext, CaseVerdict, Check, Mistake, property_result, raised
from .compare import Tolerance, compare
from .hookspecs import hookimpl
from .sandbox.limits import Limits

# name -> the module of lmgrade that defines it ("module:name" where it is named otherwise there),
# imported on first use.
_LAZY = {
    "AssignmentPlugin": "assignment_plugin",
    "AssignmentSource": "assignment_plugin",
    "Bug": "flawed",
    "AGREE": "gradcheck",
    "agreement": "gradcheck",
    "finite_differences": "gradcheck",
    "warnings_of": "gradcheck",
    "which_half": "gradcheck",
    "no_work": "liveness:dead",  # why answers show no work (None: they do), as property checks pay
    "markov_sequences": "sequences",
    "fit_problem": "stats",
    "seeding_problem": "stats",
    "Timing": "speed",
    "run_laps": "speed",
}

__all__ = [
    "PROPERTY",
    "Case",
    "CaseContext",
    "CaseVerdict",
    "Check",
    "Limits",
    "Mistake",
    "Tolerance",
    "compare",
    "hookimpl",
    "property_result",
    "raised",
    *_LAZY,
]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name in _LAZY:
        module, _, defined_as = _LAZY[name].partition(":")
        value = getattr(importlib.import_module(f".{module}", __name__), defined_as or name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
