"""lmgrade: the autograder harness of a language-modeling course.

Everything a plugin needs is importable from here, and a plugin imports
nothing else of lmgrade (docs/writing-an-assignment.md)::

    from lmgrade import AssignmentPlugin, Bug, Case, CaseContext, Check, Mistake, Tolerance, Limits

Every name is imported when first asked for (`_LAZY`): the plugin API
costs numpy, never torch, and `import lmgrade` alone costs nothing.
"""

from __future__ import annotations

import importlib

# name -> the module of lmgrade that defines it ("module:name" where it is named otherwise there),
# imported on first use: `import lmgrade` itself imports nothing (the Gradescope supervisor, which
# needs none of it, starts in a few milliseconds).
_LAZY = {
    "ANSWER": "checks",
    "PROPERTY": "checks",
    "Case": "checks",
    "CaseContext": "checks",
    "CaseVerdict": "checks",
    "Check": "checks",
    "Mistake": "checks",
    "property_result": "checks",
    "asked_beside": "checks",
    "raised": "checks",
    "takes_args_whole": "scenario_call",
    "expected_only": "expected_parts",
    "explained": "explanations",
    "UNEXPLAINED": "explanations",
    "Tolerance": "comparison",
    "compare": "comparison",
    "hookimpl": "hookspecs",
    "lazy_import": "lazy_import",
    "Limits": "sandbox.limits",
    "AssignmentPlugin": "assignment_plugin",
    "AssignmentSource": "assignment_plugin",
    "Bug": "flawed",
    "AGREE": "gradcheck",
    "NOT_MEASURED": "gradcheck",
    "agreement": "gradcheck",
    "finite_differences": "gradcheck",
    "warnings_of": "gradcheck",
    "which_half": "gradcheck",
    "markov_sequences": "sequences",
    "LEVEL": "stats",
    "fit_problem": "stats",
    "seeding_problem": "stats",
    "Timing": "speed",
    "run_laps": "speed",
}

__all__ = list(_LAZY)
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
